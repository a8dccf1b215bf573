"""A real PostgreSQL for the tests (and the classroom benchmark): Debian's server, never a mock.

`PostgresServer` runs the highest PostgreSQL under /usr/lib/postgresql/*/bin (initdb, pg_ctl and
psql are taken from there, not from PATH, where Debian puts only wrappers) in a fresh private
folder: initdb with a superuser password (scram-sha-256 for every connection), listening on
127.0.0.1 only, on a free port, its unix socket in its own folder. initdb refuses to run as
root, so as root every server command runs as the `postgres` system user (runuser) and the
folder belongs to that user. Readiness is pg_ctl -w's (it waits for the server to accept
connections), never a sleep.

`restart()` stops (fast: acknowledged transactions are on disk) and starts the same data folder
on the same port: what a test uses to prove that no acknowledged write is lost. `stop()` leaves
no process of that data folder behind (the postmaster is killed with its group if pg_ctl could
not stop it), and a watchdog stops the server if the process that started it dies without
calling stop (a test run killed by SIGKILL leaves no PostgreSQL running).

Fixtures (imported into tests/conftest.py, so every test folder has them): `postgres_server`,
one server for the whole test session, and `postgres_url`, a fresh database of it per test.
PostgreSQL missing is a failure that names the install command, never a skip.
"""
from __future__ import annotations

import contextlib
import itertools
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import pytest

from app.lab.server import free_ports
from tests.waiting import wait_for

ROOT = Path("/usr/lib/postgresql")
INSTALL = "apt-get update && apt-get install -y postgresql"
SYSTEM_USER = "postgres"  # the account Debian's package creates; initdb refuses root
SUPERUSER = "postgres"
START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 60
_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_counter = itertools.count(1)

# Runs detached (own session) beside the process that started the server; when that process is
# gone (however it ended), it stops the server at once (SIGQUIT: immediate shutdown) and removes
# the folder. It reads the postmaster's pid from postmaster.pid each time, so a restart is followed.
_WATCHDOG = r"""
import os, shutil, signal, sys, time
parent, data, folder = int(sys.argv[1]), os.environ["LAB_PG_DATA"], os.environ["LAB_PG_FOLDER"]
while True:
    try:
        os.kill(parent, 0)
    except ProcessLookupError:
        break
    except PermissionError:
        pass
    if not os.path.isdir(folder):
        sys.exit(0)  # stopped and removed by its owner
    time.sleep(0.5)
try:
    pid = int(open(os.path.join(data, "postmaster.pid")).readline())
    os.kill(pid, signal.SIGQUIT)
    for _ in range(100):  # until it has exited (a zombie has: its parent, pg_ctl, is gone)
        if open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z":
            break
        time.sleep(0.1)
    os.killpg(pid, signal.SIGKILL)
except (OSError, ValueError):
    pass
shutil.rmtree(folder, ignore_errors=True)
"""


class PostgresMissing(RuntimeError):
    """No PostgreSQL server binaries (or no `postgres` user) on this machine."""


class PostgresError(RuntimeError):
    """The server did not start or stop; the message carries the tail of its log."""


def find_bin(root: Path = ROOT) -> Path:
    """The bin folder of the highest PostgreSQL version installed under `root`."""
    versions = []
    for folder in root.glob("*/bin") if root.is_dir() else ():
        version = folder.parent.name
        if all((folder / tool).exists() for tool in ("initdb", "pg_ctl", "postgres", "psql")):
            versions.append((tuple(int(p) for p in re.findall(r"\d+", version)), folder))
    if not versions:
        raise PostgresMissing(
            f"PostgreSQL is not installed (no initdb, pg_ctl, postgres and psql under {root}/*/bin); the tests "
            f"that use a real database need it. Install it with `{INSTALL}` (as root), then rerun.")
    return max(versions)[1]


def _as_root() -> bool:
    return os.geteuid() == 0


def _system_user_ids() -> tuple[int, int]:
    import pwd

    try:
        entry = pwd.getpwnam(SYSTEM_USER)
    except KeyError as err:
        raise PostgresMissing(f"there is no `{SYSTEM_USER}` system user to run PostgreSQL as (initdb refuses root); "
                              f"installing the server package creates it: `{INSTALL}`") from err
    return entry.pw_uid, entry.pw_gid


@dataclass(eq=False)
class PostgresServer:
    """One PostgreSQL cluster in a private temp folder. start() / stop() / restart() / close()."""

    password: str = field(default_factory=lambda: secrets.token_hex(16))
    max_connections: int = 300  # a few app replicas and a benchmark's learners, each with a pool
    bin: Path = field(default_factory=find_bin)
    port: int = field(default=0, init=False)
    folder: Path | None = field(default=None, init=False)
    postmaster_pid: int | None = field(default=None, init=False)
    _watchdog: subprocess.Popen | None = field(default=None, init=False, repr=False)

    # -- paths -------------------------------------------------------------------------------
    @property
    def data(self) -> Path:
        assert self.folder is not None, "start() first"
        return self.folder / "data"

    @property
    def log_path(self) -> Path:
        assert self.folder is not None, "start() first"
        return self.folder / "server.log"

    @property
    def socket_dir(self) -> Path:
        assert self.folder is not None, "start() first"
        return self.folder / "socket"

    def url(self, database: str = "postgres") -> str:
        """SQLAlchemy URL of `database` on this server (psycopg 3, over TCP to 127.0.0.1)."""
        assert self.port, "start() first"
        return f"postgresql+psycopg://{SUPERUSER}:{quote(self.password, safe='')}@127.0.0.1:{self.port}/{database}"

    # -- running commands as the server's user ------------------------------------------------
    def _run(self, *command: str | Path, timeout_s: float = 120, check: bool = True) -> subprocess.CompletedProcess:
        argv = [str(c) for c in command]
        if _as_root():
            argv = ["runuser", "-u", SYSTEM_USER, "--", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, cwd="/",
                              env={**os.environ, "LC_ALL": "C.UTF-8", "PGPASSWORD": self.password})
        if check and done.returncode != 0:
            raise PostgresError(f"{' '.join(argv)} exited with {done.returncode}:\n{done.stdout}{done.stderr}\n"
                                f"{self.log_tail()}")
        return done

    def _initialise(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="triton-lab-postgres-", dir=tempfile.gettempdir()))
        self.socket_dir.mkdir()
        password_file = self.folder / "password"
        password_file.write_text(self.password + "\n")
        password_file.chmod(0o600)
        if _as_root():
            uid, gid = _system_user_ids()
            for path in (self.folder, self.socket_dir, password_file):
                os.chown(path, uid, gid)
        try:
            self._run(self.bin / "initdb", "-D", self.data, "-U", SUPERUSER, "--auth=scram-sha-256",
                      f"--pwfile={password_file}", "--encoding=UTF8", "--locale=C")
        finally:
            password_file.unlink(missing_ok=True)

    # -- life cycle ---------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.postmaster_pid is not None and _alive(self.postmaster_pid)

    def start(self) -> PostgresServer:
        """initdb on first start, then pg_ctl -w start on 127.0.0.1:port (a free port the first time)."""
        if self.running:
            return self
        fresh = self.folder is None
        if fresh:
            self._initialise()
            self._start_watchdog()
        attempts = 3 if fresh else 1  # a fresh port can be taken between picking and binding it
        for attempt in range(attempts):
            if fresh:
                self.port = free_ports(1)[0]
            options = " ".join([
                "-c listen_addresses=127.0.0.1", f"-c port={self.port}",
                f"-c unix_socket_directories={shlex.quote(str(self.socket_dir))}",
                f"-c max_connections={self.max_connections}",
            ])
            done = self._run(self.bin / "pg_ctl", "-D", self.data, "-l", self.log_path, "-w", "-t", str(START_TIMEOUT_S),
                             "-o", options, "start", timeout_s=START_TIMEOUT_S + 30, check=False)
            if done.returncode == 0:
                self.postmaster_pid = self._read_postmaster_pid()
                return self
            if attempt + 1 < attempts and "could not bind" in self.log_tail(40).lower():
                continue
            raise PostgresError(f"PostgreSQL did not start on 127.0.0.1:{self.port}:\n{done.stdout}{done.stderr}\n{self.log_tail()}")
        raise AssertionError("unreachable")

    def stop(self) -> None:
        """pg_ctl -m fast stop (the data folder stays, for restart()); no process of it is left."""
        if self.folder is None or self.postmaster_pid is None:
            return
        pid = self.postmaster_pid
        if _alive(pid):
            self._run(self.bin / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "-t", str(STOP_TIMEOUT_S), "stop",
                      timeout_s=STOP_TIMEOUT_S + 30, check=False)
        # pg_ctl starts the postmaster in a session of its own, so its group is it and its backends.
        if _alive(pid) or group_members(pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            wait_for(lambda: not (_alive(pid) or group_members(pid)), f"PostgreSQL's processes (group {pid}) to be gone", 10)
        self.postmaster_pid = None

    def restart(self) -> PostgresServer:
        """Stop, then start the same data folder on the same port."""
        self.stop()
        return self.start()

    def close(self) -> None:
        """Stop and remove the folder (the data is gone)."""
        self.stop()
        if self._watchdog is not None:
            self._watchdog.kill()
            self._watchdog.wait(5)
            self._watchdog = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def _start_watchdog(self) -> None:
        self._watchdog = subprocess.Popen(
            # The folders go by environment, not argv: a process naming the data folder is the server's.
            [sys.executable, "-c", _WATCHDOG, str(os.getpid())],
            env={**os.environ, "LAB_PG_DATA": str(self.data), "LAB_PG_FOLDER": str(self.folder)},
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def _read_postmaster_pid(self) -> int:
        # postmaster.pid is the postgres user's, mode 0600: root reads it; as that user, so does this.
        return int((self.data / "postmaster.pid").read_text().split("\n", 1)[0])

    def processes(self) -> list[int]:
        """Every live process of this cluster: the postmaster's group, and any process whose command
        line names its data folder."""
        found = set(group_members(self.postmaster_pid)) if self.postmaster_pid else set()
        if self.folder is not None:
            found |= set(processes_naming(str(self.data)))
        return sorted(found)

    # -- databases ----------------------------------------------------------------------------
    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run SQL with this server's psql over TCP; its unaligned, tab-separated output."""
        assert self.running, "start() first"
        command = [str(self.bin / "psql"), "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1",
                   "-h", "127.0.0.1", "-p", str(self.port), "-U", SUPERUSER, "-d", database, "-c", sql]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PGPASSWORD": self.password, "PGCONNECT_TIMEOUT": "10"})
        if done.returncode != 0:
            raise PostgresError(f"psql -c {sql!r} exited with {done.returncode}: {done.stderr.strip()}")
        return done.stdout

    def create_database(self, name: str) -> str:
        """CREATE DATABASE name; returns its SQLAlchemy URL."""
        if not _NAME.match(name):
            raise ValueError(f"a database name here is lower-case letters, digits and _, not {name!r}")
        self.psql(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def fresh_database(self, label: str = "lab") -> str:
        """A new database with a unique name built from `label`; its URL."""
        stem = re.sub(r"[^a-z0-9_]+", "_", label.lower()).strip("_")[:36] or "lab"
        if not re.match(r"[a-z_]", stem):
            stem = f"t_{stem}"
        return self.create_database(f"{stem}_{os.getpid()}_{next(_counter)}_{secrets.token_hex(3)}")

    def log_tail(self, lines: int = 20) -> str:
        path = self.log_path if self.folder is not None else None
        if path is None or not path.exists():
            return "(PostgreSQL wrote no log)"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is gone for our purposes (its parent, pg_ctl's shell, has exited; init reaps it).
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return False


def _proc_entries():
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            yield entry


def group_members(pgid: int | None) -> list[int]:
    """Live (non-zombie) processes of process group `pgid`."""
    if pgid is None:
        return []
    members = []
    for entry in _proc_entries():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, group = fields[0], int(fields[3])
        if group == pgid and state != "Z":
            members.append(int(entry.name))
    return members


def processes_naming(text: str) -> list[int]:
    """Live processes whose command line contains `text`."""
    found = []
    for entry in _proc_entries():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline and int(entry.name) != os.getpid() and _alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def start_server() -> PostgresServer:
    """A started PostgresServer, or pytest.fail with the install command (never a skip)."""
    try:
        server = PostgresServer()
    except PostgresMissing as err:
        pytest.fail(str(err), pytrace=False)
    try:
        return server.start()
    except PostgresMissing as err:
        server.close()
        pytest.fail(str(err), pytrace=False)
    except BaseException:
        server.close()
        raise


@pytest.fixture(scope="session")
def postgres_server():
    """One PostgreSQL for the whole test session, stopped and removed at the end (even on failure)."""
    server = start_server()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture()
def postgres_url(postgres_server, request) -> str:
    """A fresh database for this test (a unique name), as a SQLAlchemy URL."""
    return postgres_server.fresh_database(request.node.name)
