"""The app on its own embedded server: it starts Triton on first use and leaves nothing
running once Streamlit exits."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from app.lab.paths import REPO_ROOT
from app.lab.server import free_ports, group_alive
from tests.e2e.browser_helpers import new_context
from tests.e2e.conftest import _wait_healthy
from tests.waiting import wait_for

SERVER_VARIABLES = ("TRITON_URL", "TRITON_TRACE_DIR", "TRITON_METRICS_URL")


def guardians_of(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid), "-f", "app.lab.guardian"], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split()]


@pytest.mark.browser
def test_the_embedded_server_goes_when_the_app_exits(browser, tmp_path):
    port = free_ports(1)[0]
    env = {k: v for k, v in os.environ.items() if k not in SERVER_VARIABLES}
    log_path = tmp_path / "streamlit.log"
    with open(log_path, "wb") as log:
        app = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app/main.py", "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
    guardians: list[int] = []
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_healthy(url, app, log_path)
        context = new_context(browser)
        page = context.new_page()
        page.goto(url)
        page.get_by_text("embedded (started by this app)").wait_for(timeout=120_000)
        context.close()
        guardians = guardians_of(app.pid)
        assert len(guardians) == 1, "the app should run exactly one embedded Triton"
        assert group_alive(guardians[0])
        app.send_signal(signal.SIGTERM)  # Ctrl-C in a terminal does the same
        app.wait(60)
        wait_for(lambda: not group_alive(guardians[0]), "tritonserver to end with the app", timeout_s=30)
    finally:
        if app.poll() is None:
            os.killpg(app.pid, signal.SIGKILL)
        for pgid in guardians:
            if group_alive(pgid):
                os.killpg(pgid, signal.SIGKILL)
