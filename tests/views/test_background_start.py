"""Home draws while the server is still starting; a live element waits for it, then works.

Uses a real embedded server of its own (never the session's) whose start is held back until
the test lets it go, so "still starting" is a state the test controls rather than a race.
"""
from __future__ import annotations

import threading

import pytest
from streamlit.testing.v1 import AppTest

from app.lab.server import LabServer
from app.ui import shared_server
from tests.i18n.text_checks import english_runs, has_cjk
from tests.views.conftest import MAIN

pytestmark = pytest.mark.server  # a real embedded server of its own

START_TIMEOUT_S = 240  # a fresh Triton on two busy cores


class HeldServer(LabServer):
    """A real LabServer whose start() begins only once `go` is set."""

    def __init__(self, go: threading.Event, **kwargs):
        super().__init__(**kwargs)
        self.go = go

    def start(self) -> LabServer:
        self.go.wait(START_TIMEOUT_S)
        return super().start()


@pytest.fixture()
def held_server(monkeypatch, data_dir, own_lab_cache):
    go = threading.Event()
    server = HeldServer(go)  # loads what its LabServer loads at start (the lazy server: nothing)
    for key in ("TRITON_URL", "TRITON_TRACE_DIR", "TRITON_METRICS_URL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setattr(shared_server.LabServer, "from_env", classmethod(lambda cls, **kwargs: server))
    yield server
    go.set()
    shared_server._start_lab().wait(START_TIMEOUT_S)  # the start this test began ends before the server is stopped
    server.stop()


def shown(at: AppTest) -> str:
    return "\n".join(e.value for kind in ("title", "markdown", "info") for e in getattr(at, kind))


def test_home_draws_while_the_server_starts_and_a_live_element_waits(held_server):
    at = AppTest.from_file(str(MAIN), default_timeout=60)
    at.run()
    assert not at.exception and not at.error
    text = shown(at)
    assert "After this course you will be able to" in text and "The path" in text
    assert "Triton is starting in the background" in text
    assert "Server" not in {m.label for m in at.metric}, "no server figures before the server is up"
    assert not held_server.alive(), "Home was drawn without waiting for the server"

    zh = AppTest.from_file(str(MAIN), default_timeout=60)
    zh.query_params["lang"] = "zh"
    zh.run()
    assert not zh.exception and not zh.error
    starting = [i.value for i in zh.info if "Triton" in i.value]
    assert starting and has_cjk(starting[0]) and not english_runs(starting[0]), starting

    held_server.go.set()
    at.switch_page("views/lab.py").run(timeout=START_TIMEOUT_S)  # the live lab waits for the start
    assert not at.exception and not at.error
    assert held_server.alive()
    assert any(b.key == "lab.run" for b in at.button)

    at.switch_page("views/home.py").run()
    assert not at.exception and not at.error
    assert {m.label: m.value for m in at.metric}["Server"] == "running"
    assert "Triton is starting in the background" not in shown(at)
