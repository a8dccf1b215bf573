"""The embedded server's life cycle: start, clear errors, restart, and nothing left behind."""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from app.i18n import languages, words
from app.lab import shared_memory
from app.lab.server import EmbeddedServer, InstallationError, LabServer, StartupError, UnreachableError, group_alive, installation
from app.text import problems as problems_text
from app.text.problems import SERVER_PROBLEMS
from tests.i18n.text_checks import reads_in
from tests.waiting import wait_for

pytestmark = pytest.mark.server  # starts, kills and restarts embedded servers


def wait_gone(pgid: int, what: str, timeout_s: float = 20) -> None:
    wait_for(lambda: not group_alive(pgid), what, timeout_s)


@pytest.fixture()
def started():
    """started(server) -> server.start(), stopped (and its log removed) when the test ends, pass or
    fail: a failing assertion must not leave a tritonserver running on a shared machine."""
    servers: list[EmbeddedServer] = []

    def start(server: EmbeddedServer) -> EmbeddedServer:
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.stop()  # again, where the test stopped it: nothing left to do
        if server.log_path is not None:
            server.log_path.unlink(missing_ok=True)


def test_start_and_stop_leave_no_process_behind(started):
    server = started(EmbeddedServer(startup_models=("sentiment",)))
    pgid = server.pid
    assert server.running and server.ready_after_s > 0
    server.stop()
    wait_gone(pgid, "tritonserver and its stubs to end after stop()")


def said(err, lang: str = "en") -> str:
    """What a learner reads for a server error, in `lang` (app/text/problems.py)."""
    return problems_text.error(err, words(lang))


def test_every_server_error_reads_in_every_language():
    for code in SERVER_PROBLEMS:
        values = {name: 3 if kind == "count" else "x" for name, kind in re.findall(r"\{(\w+):(\w+)\}", SERVER_PROBLEMS[code])}
        english = said(StartupError(code, **values))
        for lang in languages():
            assert reads_in(lang, said(StartupError(code, **values), lang), english), (code, lang)


def test_a_busy_port_is_reported_with_what_to_do():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(StartupError) as raised:
            EmbeddedServer(http_port=port).start()
    assert (raised.value.code, raised.value.values) == ("server_port_in_use", {"port": port})
    assert re.match(rf"port {port} is already in use.*--http-port", said(raised.value))


def test_a_missing_repository_is_reported(tmp_path):
    with pytest.raises(StartupError) as raised:
        EmbeddedServer(model_repository=tmp_path / "nowhere").start()
    assert raised.value.code == "server_repository_missing" and said(raised.value).endswith("does not exist: pass an existing folder")


def test_an_unreachable_external_server_is_reported():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(UnreachableError) as raised:
        LabServer(url=f"127.0.0.1:{port}").start()
    assert raised.value.code == "server_unreachable" and raised.value.values["url"] == f"127.0.0.1:{port}"
    assert re.match(rf"cannot reach Triton at 127\.0\.0\.1:{port} .* unset TRITON_URL", said(raised.value))


def test_an_external_server_too_busy_to_answer_is_alive_and_a_closed_port_is_not():
    # A class can keep a shared server too busy to answer a health check in time; that is no
    # reason to tell every learner it is gone. A port where nothing listens is.
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)  # takes the connection, never answers
        assert LabServer(url=f"127.0.0.1:{busy.getsockname()[1]}").alive(timeout_s=0.5)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            closed = probe.getsockname()[1]
    assert not LabServer(url=f"127.0.0.1:{closed}").alive(timeout_s=0.5)


def test_a_python_without_a_stub_is_reported(monkeypatch):
    monkeypatch.setattr(sys, "version_info", (3, 7, 0, "final", 0))
    with pytest.raises(InstallationError) as raised:
        installation.locate()
    assert (raised.value.code, raised.value.values["version"]) == ("server_no_stub", "3.7")
    assert "no Python backend stub for Python 3.7" in said(raised.value)


def test_a_dead_server_is_reported_and_restartable():
    server = LabServer(preload=("asr_dynamic",)).start()
    try:
        killed = server.embedded
        assert shared_memory.regions(killed.shm_prefix)  # one region per stub, under this server's own prefix
        killed.kill_for_demo()
        # SIGKILL leaves Triton no chance to unlink them; tmpfs would hold them until the machine restarts
        assert not shared_memory.regions(killed.shm_prefix)
        assert not server.alive()
        assert server.status()["alive"] is False
        server.restart()
        assert server.alive()
    finally:
        server.stop()


def test_the_server_dies_with_the_process_that_started_it(tmp_path):
    # A parent that is SIGKILLed runs no clean-up at all: only the guardian can notice.
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent("""
        import sys, time
        from app.lab.server.embedded import EmbeddedServer
        server = EmbeddedServer(startup_models=("asr_dynamic",)).start()
        print(server.pid, server.shm_prefix, flush=True)
        time.sleep(600)
    """))
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=os.getcwd())
    try:
        pid, prefix = parent.stdout.readline().split()
        pgid = int(pid)
        assert group_alive(pgid) and shared_memory.regions(prefix)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    wait_gone(pgid, "the server to end after its parent was killed")
    assert not shared_memory.regions(prefix)  # the stubs' shared memory went with them


def _server_pid(guardian_pid: int) -> int:
    children = (f"/proc/{guardian_pid}/task/{guardian_pid}/children")
    with open(children) as handle:
        return int(handle.read().split()[0])


def test_the_server_preloads_jemalloc_where_the_system_has_it(lab_server, monkeypatch):
    """Triton 2.51's tracer unlocks a trace's mutex after freeing it (fixed upstream in server
    PR 8144); under glibc malloc that corrupts the heap after thousands of traced requests."""
    on_disk = next((path for path in installation.JEMALLOC if os.path.exists(path)), None)
    assert str(installation.locate().allocator or "") == (on_disk or "")
    if on_disk is not None and lab_server.is_embedded:
        maps = Path(f"/proc/{_server_pid(lab_server.embedded.pid)}/maps").read_text()
        assert "libjemalloc" in maps
        assert lab_server.status()["allocator"] == "libjemalloc.so.2"
    monkeypatch.setenv("TRITON_LAB_MALLOC", "glibc")
    assert installation.locate().allocator is None


def test_a_clean_stop_removes_the_server_log_and_a_crash_keeps_it(started):
    # No model: the log is the server's own, and a model's stubs would only slow both stops down.
    clean = started(EmbeddedServer())
    clean_log = clean.log_path
    assert clean_log.exists()
    clean.stop()
    assert not clean_log.exists()
    crashed = started(EmbeddedServer())
    crashed.kill_for_demo()
    crashed.stop()
    assert crashed.log_path.exists()  # the fixture removes it


def test_the_labs_own_server_skips_auto_complete_and_a_checked_repository_keeps_it(lab_server, tmp_path):
    # Triton prints its options at start-up; strict_model_config is 1 when auto-complete is off.
    def strict(server: LabServer) -> str:
        text = server.log_path.read_text(errors="replace")
        match = re.search(r"^\| strict_model_config\s+\| (\d)", text, re.MULTILINE)
        assert match, "no strict_model_config row in the server's start-up table"
        return match.group(1)

    assert lab_server.auto_complete_config is False and strict(lab_server) == "1"
    other = tmp_path / "repository"
    other.mkdir()
    checked = LabServer(model_repository=other)
    assert checked.auto_complete_config is True
    checked.start()
    try:
        assert strict(checked) == "0"
    finally:
        checked.stop()
