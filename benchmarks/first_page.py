"""Seconds from `streamlit run app/main.py` to Home being interactive in a headless Chromium, and
to the embedded server being ready (Home's server panel showing it), on the embedded server, and the
idle memory then of the app and everything it started (RSS of its process tree).

"Interactive": Home's text is visible and Streamlit's script state is idle (as the browser tests
settle, tests/e2e/browser_helpers.py). The browser is started before the app, as a learner's is.
The app runs on --python (default: this interpreter), so CI can time the install README gives
while this script drives Chromium from the test venv, which has Playwright.

    python benchmarks/first_page.py [--python .venv-readme/bin/python] [--runs 1]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.lab.server import free_ports, stop_group, wait_until_ok  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SERVER_VARIABLES = ("TRITON_URL", "TRITON_GRPC_URL", "TRITON_TRACE_DIR", "TRITON_METRICS_URL", "TRITON_LOG_FILE")
HOME_TEXT = "After this course you will be able to"
SERVER_TEXT = "embedded (started by this app)"  # Home's server panel, drawn once the server is up
SETTLE_S = 3.0  # memory is read this long after Home shows the server
IDLE = "() => document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-script-state') === 'notRunning'"


def tree_rss_mb(root: int) -> float:
    """Resident memory of a process and all its descendants (the app, the server's guardian,
    tritonserver and its stubs), in MB."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = {k: v for k, _, v in (line.partition(":") for line in (entry / "status").read_text().splitlines())}
            parents[int(entry.name)] = int(fields["PPid"])
            rss[int(entry.name)] = int(fields.get("VmRSS", "0 kB").split()[0])
        except (OSError, KeyError, ValueError):
            continue
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent and pid not in tree]
        tree.update(children)
        frontier.extend(children)
    return sum(rss.get(pid, 0) for pid in tree) / 1024


def build_of(python: str) -> str:
    """The header line (torch build, CUDA, instance kind) as the app's own interpreter sees it."""
    code = "from benchmarks._common import print_build; print_build()"
    done = subprocess.run([python, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    return done.stdout.strip() or f"(could not read the torch build: {done.stderr.strip()[-300:]})"


def one_run(browser, python: str, timeout_s: float) -> tuple[float, float, float, float, float]:
    port = free_ports(1)[0]
    env = {k: v for k, v in os.environ.items() if k not in SERVER_VARIABLES}
    env["PYTHONUNBUFFERED"] = "1"
    command = [python, "-m", "streamlit", "run", "app/main.py", "--server.headless", "true",
               "--server.port", str(port), "--server.address", "127.0.0.1",
               "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    url = f"http://127.0.0.1:{port}"
    with tempfile.NamedTemporaryFile(prefix="first-page-", suffix=".log", delete=False) as log:
        log_path = Path(log.name)
        started = time.perf_counter()
        app = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
    try:
        deadline = started + timeout_s
        # Streamlit answers its health check once it serves pages.
        outcome = wait_until_ok(f"{url}/_stcore/health", app, deadline - time.perf_counter(), every_s=0.05, probe_timeout_s=2)
        if outcome == "exited":
            raise SystemExit(f"streamlit exited with {app.returncode}:\n{log_path.read_text()[-3000:]}")
        if outcome == "timeout":
            raise SystemExit(f"streamlit did not answer in {timeout_s:.0f} s:\n{log_path.read_text()[-3000:]}")
        answering_s = time.perf_counter() - started
        page = context.new_page()
        page.goto(url)
        left_ms = lambda: max(1, int((deadline - time.perf_counter()) * 1000))  # noqa: E731
        page.get_by_text(HOME_TEXT).wait_for(state="visible", timeout=left_ms())
        text_s = time.perf_counter() - started
        page.wait_for_function(IDLE, timeout=left_ms(), polling=50)
        interactive_s = time.perf_counter() - started
        page.get_by_text(SERVER_TEXT).wait_for(state="visible", timeout=left_ms())
        server_s = time.perf_counter() - started
        time.sleep(SETTLE_S)
        return answering_s, text_s, interactive_s, server_s, tree_rss_mb(app.pid)
    finally:
        context.close()
        stop_group(app, grace_s=30)  # as Ctrl-C; the server's guardian then ends tritonserver
        log_path.unlink(missing_ok=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter of the install the app runs on")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds one run may take")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    results = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            for _ in range(args.runs):
                results.append(one_run(browser, args.python, args.timeout))
        finally:
            browser.close()
    print(build_of(args.python))  # after the runs, so its torch import warms no cache for them
    print(f"app interpreter {args.python}; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
    for number, (answering_s, text_s, interactive_s, server_s, idle_mb) in enumerate(results, start=1):
        print(f"run {number}: Home interactive {interactive_s:.1f} s after `streamlit run` (Streamlit answering "
              f"after {answering_s:.1f} s, Home's text shown after {text_s:.1f} s); server ready (shown on Home) {server_s:.1f} s after it; "
              f"idle memory of the app, its server and stubs: {idle_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
