"""A real `streamlit run app/main.py` on a free port, and a real headless Chromium to drive it.

The app talks to the test session's Triton (lab_server) through the same variables a user
would set; nothing is mocked. A missing Chromium fails loudly with the install command.
"""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.lab.paths import REPO_ROOT
from app.lab.server import free_ports, stop_group, wait_until_ok
from tests.e2e.browser_helpers import Photos, new_context, new_page, settle
from tests.e2e.replicas import ReplicaSet
from tests.postgres import start_server

# The old headless shell of the system Chromium (Debian's chromium-headless-shell, the same release
# as chromium), the kind of build Playwright installs for headless runs (`playwright install
# --only-shell`): no browser window layers to drive, so the same pages cost less CPU.
CHROMIUM = Path("/usr/lib/chromium/chromium-headless-shell")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
SCREENSHOTS = REPO_ROOT / "artifacts" / "screenshots"
STARTUP_TIMEOUT_S = 90
REPLICAS = 3
INSTRUCTOR_KEY = "e2e staff room key"  # the replicas' key: a class past one process sets one
LEASE_TTL_S = "10"  # a dead replica's leases expire after this (the app's default, set explicitly)
REPLICA_LOGS = REPO_ROOT / "artifacts" / "replicas"
# How long an expect() waits for what it expects (Playwright's default is 5 s). A page of a loaded
# two-core machine was seen to draw its vote count later than that; the wait ends when the text
# appears, so only a failing test waits this long.
EXPECT_TIMEOUT_MS = 30_000
expect.set_options(timeout=EXPECT_TIMEOUT_MS)


@pytest.fixture(scope="session")
def app_url(lab_server, tmp_path_factory):
    with running_app(lab_server, tmp_path_factory.mktemp("streamlit") / "streamlit.log") as url:
        yield url


@contextlib.contextmanager
def running_app(lab_server, log_path: Path, **extra_env: str):
    """The app on a free port, with extra_env over the session's variables; yields its URL."""
    port = free_ports(1)[0]
    env = {**os.environ, **lab_server.environment(), "PYTHONUNBUFFERED": "1", **extra_env}
    command = [
        sys.executable, "-m", "streamlit", "run", "app/main.py",
        "--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
    ]
    with open(log_path, "wb") as log:
        # Own process group, so stopping it cannot leave a stray streamlit behind.
        process = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, process, log_path)
        yield url
    finally:
        stop_group(process, grace_s=15)  # as Ctrl-C, then SIGKILL to what is left of its group


def _wait_healthy(url: str, process: subprocess.Popen, log_path: Path) -> None:
    outcome = wait_until_ok(f"{url}/_stcore/health", process, STARTUP_TIMEOUT_S, every_s=0.3, probe_timeout_s=2)
    if outcome == "exited":
        pytest.fail(f"streamlit exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
    if outcome == "timeout":
        pytest.fail(f"streamlit did not become healthy in {STARTUP_TIMEOUT_S} s:\n{log_path.read_text()[-3000:]}")


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        pytest.fail(
            f"Chromium's headless shell is not installed at {CHROMIUM}; the browser tests need it. Install it with "
            "`apt-get update && apt-get install -y chromium-headless-shell` (as root), then rerun."
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield instance
        instance.close()


@pytest.fixture()
def page(browser):
    with new_page(browser, "en-US") as page:  # English tests stay English whatever the machine's locale
        yield page


@pytest.fixture(scope="session")
def screenshots(request) -> Photos:
    """Photographs under artifacts/screenshots/, taken only with `pytest --screenshots`."""
    return Photos(SCREENSHOTS if request.config.getoption("screenshots") else None)


def replica_env(lab_server, database_url: str, **extra: str) -> dict[str, str]:
    """What every replica of a class shares: the session's Triton, one database, one instructor key."""
    return {**lab_server.environment(), "TRITON_LAB_DATABASE_URL": database_url,
            "TRITON_LAB_INSTRUCTOR_KEY": INSTRUCTOR_KEY, "TRITON_LAB_LEASE_TTL_S": LEASE_TTL_S, **extra}


def start_replicas(browser, env: dict[str, str], count: int = REPLICAS) -> ReplicaSet:
    """R replicas behind nginx, each opened once in a browser through the proxy (a replica that no
    session has run app/main.py on serves a deep link as a bare page, without the navigation)."""
    replicas = ReplicaSet(count, env).start()
    try:
        for replica in replicas.replicas:
            open_home(browser, replicas, replica.index)
    except BaseException:
        keep_replica_logs(replicas, "start")
        replicas.remove()
        raise
    return replicas


def open_home(browser, replicas: ReplicaSet, index: int) -> None:
    """Open the home page of replica `index` through the proxy once: after it, the replica serves
    deep links inside app/main.py's navigation. Also proves the cookie reaches that replica."""
    replica = replicas[index]
    context = new_context(browser, viewport={"width": 1200, "height": 900}, locale="en-US")
    try:
        replicas.pin(context, index)
        page = context.new_page()
        answer = page.goto(replicas.url, timeout=60_000)
        assert answer is not None and answer.headers.get("x-lab-replica") == replica.address, (
            f"the cookie r{index} reached {answer and answer.headers.get('x-lab-replica')}")
        page.get_by_role("heading", name="Triton Batching Lab").wait_for(timeout=120_000)
        settle(page)
    finally:
        context.close()


def keep_replica_logs(replicas: ReplicaSet, label: str) -> None:
    """Copy the replicas' and nginx's logs under artifacts/replicas/<label>/ (read after a failure)."""
    target = REPLICA_LOGS / label
    target.mkdir(parents=True, exist_ok=True)
    for path in [*replicas.folder.glob("streamlit-r*.log"), *replicas.nginx_folder.glob("*.log")]:
        (target / path.name).write_bytes(path.read_bytes())


@pytest.fixture(scope="module")
def replicas_postgres():
    """A PostgreSQL of the module's own, not the session's: its last test may restart it."""
    server = start_server()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def app_replicas(lab_server, replicas_postgres, browser, request):
    """REPLICAS app processes behind one nginx, sharing the session's Triton and a database on the
    module's PostgreSQL (replicas_postgres); a browser context goes to replica i after
    app_replicas.pin(context, i)."""
    database = replicas_postgres.fresh_database(f"replicas_{request.module.__name__.rsplit('.', 1)[-1]}")
    replicas = start_replicas(browser, replica_env(lab_server, database))
    try:
        yield replicas
    finally:
        keep_replica_logs(replicas, request.module.__name__.rsplit(".", 1)[-1])
        replicas.remove()
