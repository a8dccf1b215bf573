"""A server that dies under the app: the pages say so and offer a restart that works.

Uses a small embedded server of its own (never the session's), killed like a crash.
"""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from app.lab.server import LabServer
from app.ui import shared_server
from tests.views.conftest import MAIN, RUN_TIMEOUT_S

pytestmark = pytest.mark.server  # starts an embedded server and kills it

RESTART_TIMEOUT_S = 240  # a fresh Triton on two busy cores


@pytest.fixture()
def own_server(monkeypatch, data_dir, own_lab_cache):
    server = LabServer(preload=("sentiment",)).start()
    for key in ("TRITON_URL", "TRITON_TRACE_DIR", "TRITON_METRICS_URL"):
        monkeypatch.delenv(key, raising=False)
    # The app builds its server with LabServer.from_env(); hand it this one instead of a new one.
    monkeypatch.setattr(shared_server.LabServer, "from_env", classmethod(lambda cls, **kwargs: server))
    yield server
    server.stop()


def test_dead_embedded_server_shows_the_restart_button(own_server):
    at = AppTest.from_file(str(MAIN), default_timeout=RUN_TIMEOUT_S)
    at.run()
    assert {m.label: m.value for m in at.metric}["Server"] == "running"

    own_server.embedded.kill_for_demo()
    at.run()
    assert not at.exception
    assert any("embedded Triton server has stopped" in e.value for e in at.error)
    assert at.button(key="lab-restart").label == "Restart the server"

    at.switch_page("views/lab.py").run()
    assert any("embedded Triton server has stopped" in e.value for e in at.error)
    assert not [b for b in at.button if b.key == "lab.run"], "no lab controls while the server is down"

    at.button(key="lab-restart").click().run(timeout=RESTART_TIMEOUT_S)
    assert not at.exception and not at.error
    assert own_server.alive()
    assert any(b.key == "lab.run" for b in at.button)
