"""Open the quiz and instructor pages in AppTest, through app/main.py's real navigation.

Each test gets its own progress folder; an app 'restart' is a new AppTest on the same folder.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from tritonclient.utils import InferenceServerException

from tests.app_pages import switch_to

MAIN = Path(__file__).resolve().parents[2] / "app" / "main.py"
RUN_TIMEOUT_S = 120  # a verify run drives a real scenario through Triton


@pytest.fixture()
def data_dir(tmp_path, monkeypatch):
    folder = tmp_path / "lab-data"
    monkeypatch.setenv("TRITON_LAB_DATA", str(folder))
    return folder


@pytest.fixture()
def open_page(data_dir, server_env):
    """open_page("quiz.py", learner=..., seed=...) -> AppTest showing app/views/quiz.py; a lesson by its
    url path: open_page("lesson_01").

    server_env: the home page (the navigation's default) shows the server's status, and
    predict items verify on it, so both must reach the session's Triton.
    """

    def _open(page: str, **query: str) -> AppTest:
        at = AppTest.from_file(str(MAIN), default_timeout=RUN_TIMEOUT_S)
        for key, value in query.items():
            at.query_params[key] = value
        at.run(timeout=RUN_TIMEOUT_S)
        return switch_to(at, page).run(timeout=RUN_TIMEOUT_S)

    return _open


@pytest.fixture()
def own_lab_cache():
    """For a test that changes what the app's server is built from (the class database's URL,
    another server): the app keeps its LabServer in st.cache_resource, which outlives an AppTest
    in this process, and a LabServer settles at construction whether a shared database counts its
    loads. So the test gets one built for it, and later tests build theirs again (the session's).
    A fixture that uses this one is torn down first: its server stops before the cache is cleared."""
    from app.ui import shared_server  # the page layer: imported only by the tests that need it

    shared_server._lab.clear()
    yield
    shared_server._lab.clear()


@pytest.fixture()
def unload_at_end(lab_server):
    """unload_at_end(model): unload `model` from the session's server when the test ends, pass or
    fail, so a test that deploys a set-up leaves the shared server as it found it."""
    names: list[str] = []
    yield names.append
    with lab_server.client(timeout_s=60) as client:
        for name in names:
            with contextlib.suppress(InferenceServerException):  # never loaded: the test failed before
                client.unload_model(name)
