"""Shared fixtures: one real Triton for the whole test session, never a mock.

Set TRITON_URL (and TRITON_TRACE_DIR, TRITON_METRICS_URL) to run the suite against a
server you started yourself; otherwise the embedded server is launched here and stopped
at the end.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import pickle
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest
from tritonclient.utils import InferenceServerException

from app.generation.paged.engine.settings import NAME_PREFIX
from app.lab.deployment import Deployer, deployments
from app.lab.server import LabServer, memory
from app.registry import families
from tests.postgres import postgres_server, postgres_url  # noqa: F401  (fixtures for every test folder)
from tests.server_calls import ask
from tests.waiting import wait_for


def _scan_installed_components_once() -> None:
    """Every new AppTest has Streamlit scan the metadata of every installed distribution for
    components (streamlit.components.v2.manifest_scanner): 0.7 s of CPU on two cores, paid by
    hundreds of AppTests for the same answer, since nothing installs a package while the tests
    run. One scan per process serves them all; each caller gets a list of its own. A Streamlit
    without that scanner has nothing to scan."""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:
        return
    scan = functools.cache(manifest_scanner.scan_component_manifests)
    manifest_scanner.scan_component_manifests = lambda *args, **kwargs: list(scan(*args, **kwargs))


def pytest_addoption(parser):
    parser.addoption("--screenshots", action="store_true",
                     help="browser tests save their photographs under artifacts/screenshots/ (tests/e2e/browser_helpers.Photos)")


def pytest_configure(config):
    _scan_installed_components_once()


@pytest.fixture(scope="session", autouse=True)
def _private_data_dir(tmp_path_factory):
    # Learner progress written by tests must never land in a real user's data folder.
    os.environ["TRITON_LAB_DATA"] = str(tmp_path_factory.mktemp("lab-data"))


# The suite's servers preload the recogniser's deployments (most server tests use one), not the
# classifier: its stub imports torch (about 280 MB private with README's CUDA build), and the few
# modules that use it load it on demand (run_queue.hold, Deployer.ensure), as the app does.
TEST_PRELOAD = deployments.RECOGNISER_DEPLOYMENTS
_STARTED: list[LabServer] = []  # this worker's session server, once a test asked for it
HEAVY_MB = 100.0  # a deployment whose stubs hold this much private memory is unloaded after its module


@pytest.fixture(scope="session")
def lab_server(request):
    server = LabServer.from_env(preload=TEST_PRELOAD).start()
    _STARTED.append(server)
    yield server
    _STARTED.remove(server)
    if request.session.testsfailed:
        _SERVER_REPORTS.append(_server_report(server))
    server.stop()


def _embedded_server() -> LabServer | None:
    """This worker's session server when a test has started it and it is embedded (an external
    server's models are not the suite's to unload), else None."""
    server = _STARTED[0] if _STARTED else None
    return server if server is not None and server.embedded is not None else None


def _ready_models(server: LabServer) -> set[str]:
    """What the server serves: the repository index's ready models, and the models of its stubs
    (instance <model>_<group>_<index>), since a model loaded from files is not in the index."""
    with server.client(timeout_s=30) as client:
        names = {m["name"] for m in client.get_model_repository_index() if m.get("state") == "READY"}
    if server.embedded is not None and server.embedded.pid is not None:
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(server.embedded.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    model = memory.model_of_instance(child.cmdline())
                    if model:
                        names.add(model)
    return names


@pytest.fixture(scope="module", autouse=True)
def _unload_what_the_module_loaded():
    """A module's costly models go with it: whatever became ready on this worker's embedded server
    while the module ran (its own loads, its apps', the checker's copies) and holds HEAVY_MB or
    more in its stubs (the torch classifier's, the paged engine's with transformers) is unloaded at
    the module's end, and waited for until its stubs are gone, so the next module's loads never
    overlap its finalizing. A worker ran all its modules against one server, and kept every stub
    they left until the session ended. The light ones (a numpy stub is about 20 MB) stay: every
    unload is a finalize, and Triton 2.51's Python backend once aborted the whole server
    (boost::interprocess::lock_exception in ModelInstanceFinalize) while a module's loads ran
    beside one. Autouse and module-scoped: set up before, torn down after, the module's own
    fixtures; a module that never started the server costs nothing."""
    server = _embedded_server()
    before = _ready_models(server) if server is not None else set()
    yield
    server = _embedded_server()
    if server is None or not server.alive():
        return
    ready = _ready_models(server)
    new = sorted(ready - before - set(TEST_PRELOAD))
    costs = server.model_memory_mb(sorted(ready)) or {}  # every ready name, so each stub is its own model's
    for name in (n for n in new if costs.get(n, 0.0) >= HEAVY_MB):
        _unload_and_wait(server, name)


def _unload_and_wait(server: LabServer, name: str) -> None:
    """Unload `name` whoever loaded it, and wait until its stubs have ended."""
    server.models.unload(name)  # this process's loads: its bookkeeping too, and waits until gone
    with contextlib.suppress(InferenceServerException), server.client(timeout_s=30) as client:
        if client.is_model_ready(name):  # loaded by another process (an app under test) or directly
            client.unload_model(name)
    # every ready name takes part, so a stub of sentiment_unbatched is never counted as sentiment's
    wait_for(lambda: not (server.model_memory_mb(sorted(_ready_models(server) | {name})) or {}).get(name),
             f"{name}'s stubs to end", 120)


@pytest.fixture(autouse=True)
def _paged_copies_go_with_their_test():
    """The paged engine's set-ups a test loaded (kv_lab_<hash>: its own, its app's, an exercise's)
    are unloaded when it ends. Each holds about 400 MB in its stub with README's install
    (transformers and torch), a module may ask for five, and the suite's peak held five at once
    (benchmarks/suite_memory.py names them). The shipped kv_engine, which many tests in a row use,
    waits for its module's end; set-ups a module-scoped fixture loaded were ready before this
    fixture started, so they stay too."""
    server = _embedded_server()
    before = _ready_models(server) if server is not None else set()
    yield
    server = _embedded_server()
    if server is None or not server.alive():
        return
    for name in sorted(_ready_models(server) - before):
        if name.startswith(NAME_PREFIX):
            _unload_and_wait(server, name)


# How each worker's Triton stood at the end of a session with failures, printed in the summary: a
# CI log has nothing else to tell a server that died or stopped answering from a test's own fault.
_SERVER_REPORTS: list[str] = []
SERVER_LOG_LINES = 30


def _server_report(server: LabServer) -> str:
    embedded = server.embedded
    if embedded is None:
        return f"external server {server.url}"
    state = "running" if embedded.running else f"exited with {embedded.process.returncode if embedded.process else '?'}"
    try:
        live = ask(server, "is_server_live", timeout_s=5)
    except Exception as err:  # what the report is for: a server that does not answer says how
        live = f"no answer ({type(err).__name__}: {err})"
    return (f"Triton {server.url} (pid {embedded.pid}): {state}, live: {live}; the last {SERVER_LOG_LINES} lines of "
            f"its log:\n{embedded.log_tail(SERVER_LOG_LINES)}")


def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: hand the reports to the controller
        workeroutput["server_reports"] = list(_SERVER_REPORTS)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: unknown without it
def pytest_testnodedown(node, error):
    _SERVER_REPORTS.extend(getattr(node, "workeroutput", {}).get("server_reports", []))


def pytest_terminal_summary(terminalreporter):
    if _SERVER_REPORTS:
        terminalreporter.section("the test servers at the end")
        for report in _SERVER_REPORTS:
            terminalreporter.write_line(report)


@pytest.fixture(scope="module")
def generators(lab_server):
    """The generator's shipped deployments (GENERATOR_DEPLOYMENTS), loaded for the module that asks
    and unloaded at its end. The suite's servers do not preload them: three more stubs that import
    torch in every worker's Triton, for the few modules that use them."""
    names = deployments.GENERATOR_DEPLOYMENTS
    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        list(pool.map(lab_server.models.ensure, names))
    yield names
    for name in names:
        lab_server.models.unload(name)
@pytest.fixture(scope="session", autouse=True)
def _check_reports_match_their_schema():
    """Every check report written in this process (the CLI's, the page's download, an exercise's
    record) is validated against the JSON Schema the package ships; the CLI's reports from a
    subprocess are validated where the tests read them (tests/checker/conftest.read_report)."""
    from app.checker import engine as checker
    from app.checker.engine import report_schema
    from app.checker.engine.reports import report
    from app.exercise_kit import base

    original = report.to_json

    def validated(result):
        data = original(result)
        report_schema.validate(json.loads(json.dumps(data, default=str)))  # as the file holds it
        return data

    with pytest.MonkeyPatch.context() as patch:
        for owner, name in ((report, "to_json"), (checker, "check_report_json"), (base, "check_report_json")):
            patch.setattr(owner, name, validated)
        yield


@pytest.fixture(scope="session")
def deployer(lab_server):
    return Deployer(lab_server)


@pytest.fixture()
def server_env(lab_server, monkeypatch):
    """Point code that builds its own LabServer (pages, CLI) at the session's server."""
    for key, value in lab_server.environment().items():
        monkeypatch.setenv(key, value)
    return lab_server.environment()


# Fixtures that start a real server (Triton, PostgreSQL): a test that uses one, directly or through
# another fixture, is marked `server`, so `pytest -m "not server and not browser"` is the pure tier.
# A test that starts a server itself (a CLI in a subprocess) carries the marker by hand.
SERVER_FIXTURES = frozenset({"lab_server", "postgres_server"})


# Each worker starts a Triton with the shipped models (about 0.8 GB) and a PostgreSQL: more than
# four buys little on a laptop and costs memory. One worker more than the cores: a good part of a
# server test is waiting (think times, queue delays, timeouts, a page's next poll), which another
# worker's test fills.
MAX_WORKERS = 4


def pytest_xdist_auto_num_workers(config):
    return max(1, min(MAX_WORKERS, (os.cpu_count() or 1) + 1))


# The order modules are handed to workers in (pyproject's --no-loadscope-reorder keeps it): browser
# modules first, then server modules, then pure ones. A browser module is a few long tests and a
# pure one many short ones, so the long ones start early and the short ones even out the end,
# rather than a long module starting last while the other workers have nothing left.
_START_FIRST = ("browser", "server")


def _rank(item) -> int:
    return next((i for i, mark in enumerate(_START_FIRST) if item.get_closest_marker(mark)), len(_START_FIRST))


def pytest_collection_modifyitems(items):
    for item in items:
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.server)
    # A module ranks as its most demanding test; the sort is stable, so a module's tests keep their order.
    rank: dict[Path, int] = {}
    for item in items:
        rank[item.path] = min(rank.get(item.path, len(_START_FIRST)), _rank(item))
    items.sort(key=lambda item: rank[item.path])


@contextmanager
def _exclusive(path: Path):
    """An advisory lock that pytest-xdist's workers share (a file in their common temp folder)."""
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class ExerciseResults:
    """exercise_result(name): one real run of the exercise per test run, for every test that
    reads a result (the exercise's own tests, the page, the CLI's printing, the language tests).

    Under pytest-xdist the workers share it: the first worker to need an exercise runs it on its
    own server and leaves the result (pickled) in the folder every worker sees; the others wait
    on that exercise's lock and read it, so no exercise runs twice.

    No retries: a learner runs an exercise once, so the tests pin the outcome of one run, and
    benchmarks/outcome_reliability.py measures how often one run shows it."""

    def __init__(self, server, deployer, shared: Path):
        self.server, self.deployer, self.shared = server, deployer, shared
        self._cache: dict = {}

    def __call__(self, name: str):
        if name not in self._cache:
            with _exclusive(self.shared / f"{name}.lock"):
                kept = self.shared / f"{name}.pickle"
                if kept.exists():
                    self._cache[name] = pickle.loads(kept.read_bytes())
                else:
                    self._cache[name] = families.run(name, self.server, self.deployer)
                    kept.write_bytes(pickle.dumps(self._cache[name]))
        return self._cache[name]

    def keep(self, name: str, result) -> None:
        """A real run a test made anyway (the page test that presses Run): later readers reuse it."""
        with _exclusive(self.shared / f"{name}.lock"):
            kept = self.shared / f"{name}.pickle"
            if name not in self._cache and not kept.exists():
                kept.write_bytes(pickle.dumps(result))
            self._cache.setdefault(name, result)


@pytest.fixture(scope="session")
def exercise_result(lab_server, deployer, tmp_path_factory, worker_id) -> ExerciseResults:
    # pytest-xdist's workers each have a basetemp under one common folder; alone, the run's own.
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if worker_id != "master" else base) / "exercise-results"
    shared.mkdir(exist_ok=True)
    return ExerciseResults(lab_server, deployer, shared)
