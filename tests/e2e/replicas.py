"""Several app replicas behind one real nginx, as a class past one process runs: R `streamlit run
app/main.py` processes on free loopback ports, all on the test session's Triton and one class
database (PostgreSQL), each with a data folder of its own, and an nginx in front that pins each
browser to a replica by a cookie.

Routing: the cookie `lab_replica` (r0, r1, ...) picks the replica's own upstream, in which the
other replicas are backups, so `proxy_next_upstream error timeout` moves a dead replica's learners
to a live one; without the cookie, `hash $cookie_lab_replica consistent` picks one. Websockets
(Streamlit's /_stcore/stream) are upgraded and kept open for an hour. Every answer carries
`X-Lab-Replica: <the upstream address>`, so a test sees which replica served it.

Each replica leads its own process group (start_new_session), is waited for on its health URL,
and ends with stop_group; kill(i) is SIGKILL to its group, as a crashed pod; revive(i) starts it
again on the same port. nginx runs as app/lab/server/proxy.py runs it: found by find_nginx, in
the foreground from a generated config in a private folder, under the server guardian.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from app.lab.paths import REPO_ROOT
from app.lab.server import find_nginx, free_ports, port_in_use, stop_group, wait_until_ok
from tests.waiting import wait_for

COOKIE = "lab_replica"
HEADER = "x-lab-replica"
STARTUP_TIMEOUT_S = 120  # R replicas import Streamlit, pandas and torch at once on a small machine
NGINX_TIMEOUT_S = 15


class ReplicaError(RuntimeError):
    """A replica or the proxy did not start; the message carries its log."""


@dataclass(eq=False)
class Replica:
    index: int
    port: int
    data_dir: Path
    log_path: Path
    env: dict[str, str]
    process: subprocess.Popen | None = None

    @property
    def name(self) -> str:
        return f"r{self.index}"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def direct_url(self) -> str:
        """This replica without the proxy (health checks)."""
        return f"http://{self.address}"

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        command = [
            sys.executable, "-m", "streamlit", "run", "app/main.py",
            "--server.headless", "true", "--server.port", str(self.port), "--server.address", "127.0.0.1",
            "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
        ]
        with open(self.log_path, "ab") as log:
            # Own process group, so stopping (or killing) it cannot leave a stray streamlit behind.
            self.process = subprocess.Popen(command, cwd=REPO_ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)

    def wait_healthy(self) -> None:
        assert self.process is not None
        outcome = wait_until_ok(f"{self.direct_url}/_stcore/health", self.process, STARTUP_TIMEOUT_S, every_s=0.3,
                                probe_timeout_s=2)
        if outcome != "ok":
            what = f"exited with {self.process.returncode}" if outcome == "exited" else f"was not healthy in {STARTUP_TIMEOUT_S} s"
            raise ReplicaError(f"replica {self.name} ({self.address}) {what}:\n{self.log_tail()}")

    def kill(self) -> None:
        """SIGKILL to the whole group, as a pod that dies: no cleanup runs, its leases stay behind."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        if self.process is not None:
            stop_group(self.process, grace_s=15)  # as Ctrl-C, then SIGKILL to what is left of its group

    def log_tail(self, lines: int = 60) -> str:
        if not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


def render_nginx_config(folder: Path, port: int, backends: list[str]) -> str:
    """nginx.conf: one upstream per replica (the others its backups), chosen by the cookie."""
    user = "user root root;\n" if os.geteuid() == 0 else ""  # as root, workers must still write our folder
    temp = "".join(f"  {kind}_temp_path {folder / kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    upstreams = [f"  upstream lab_any {{\n    hash $cookie_{COOKIE} consistent;\n"
                 + "".join(f"    server {b} max_fails=1 fail_timeout=5s;\n" for b in backends) + "  }\n"]
    routes = []
    for i, own in enumerate(backends):
        others = "".join(f"    server {b} backup;\n" for b in backends if b != own)
        upstreams.append(f"  upstream lab_r{i} {{\n    server {own} max_fails=1 fail_timeout=5s;\n{others}  }}\n")
        routes.append(f"    r{i} lab_r{i};\n")
    return (
        f"{user}daemon off;\nworker_processes 1;\npid {folder / 'nginx.pid'};\n"
        f"error_log {folder / 'error.log'} warn;\n"
        "events { worker_connections 1024; }\n"
        "http {\n"
        f"{temp}"
        "  log_format lab '$msec $cookie_" + COOKIE + " $upstream_addr $status $request_uri';\n"
        f"  access_log {folder / 'access.log'} lab;\n"
        "  map $http_upgrade $connection_upgrade {\n    default upgrade;\n    '' close;\n  }\n"
        f"  map $cookie_{COOKIE} $lab_upstream {{\n    default lab_any;\n{''.join(routes)}  }}\n"
        f"{''.join(upstreams)}"
        "  server {\n"
        f"    listen 127.0.0.1:{port};\n"
        "    client_max_body_size 64m;\n"
        "    location / {\n"
        "      proxy_pass http://$lab_upstream;\n"
        "      proxy_http_version 1.1;\n"
        "      proxy_set_header Upgrade $http_upgrade;\n"
        "      proxy_set_header Connection $connection_upgrade;\n"
        # Streamlit checks a websocket's Origin against Host, and builds the join link from Host.
        "      proxy_set_header Host $http_host;\n"
        "      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n"
        "      proxy_set_header X-Forwarded-Proto $scheme;\n"
        "      proxy_buffering off;\n"
        "      proxy_connect_timeout 5s;\n"
        "      proxy_read_timeout 3600s;\n"
        "      proxy_send_timeout 3600s;\n"
        "      proxy_next_upstream error timeout;\n"
        "      add_header X-Lab-Replica $upstream_addr always;\n"
        "    }\n"
        "  }\n"
        "}\n"
    )


@dataclass(eq=False)
class ReplicaSet:
    """R app replicas and the nginx in front of them. start() / stop(); url is the proxy's."""

    count: int
    env: dict[str, str]  # what every replica shares: Triton's variables, the database URL, the instructor key
    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="triton-lab-replicas-")))
    replicas: list[Replica] = field(default_factory=list, init=False)
    nginx_port: int = field(default=0, init=False)
    nginx: subprocess.Popen | None = field(default=None, init=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.nginx_port}"

    @property
    def database_url(self) -> str:
        """The class database every replica shares (TRITON_LAB_DATABASE_URL)."""
        return self.env["TRITON_LAB_DATABASE_URL"]

    @property
    def nginx_folder(self) -> Path:
        return self.folder / "nginx"

    def __getitem__(self, index: int) -> Replica:
        return self.replicas[index]

    def start(self) -> ReplicaSet:
        ports = free_ports(self.count + 1)
        self.nginx_port = ports[-1]
        for i, port in enumerate(ports[:-1]):
            data = self.folder / f"data-r{i}"
            data.mkdir(parents=True)
            env = {**os.environ, **self.env, "TRITON_LAB_DATA": str(data), "PYTHONUNBUFFERED": "1"}
            self.replicas.append(Replica(i, port, data, self.folder / f"streamlit-r{i}.log", env))
        try:
            for replica in self.replicas:  # all start at once; then each is waited for
                replica.start()
            for replica in self.replicas:
                replica.wait_healthy()
            self._start_nginx()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_nginx(self) -> None:
        folder = self.nginx_folder
        folder.mkdir(parents=True, exist_ok=True)
        conf = folder / "nginx.conf"
        conf.write_text(render_nginx_config(folder, self.nginx_port, [r.address for r in self.replicas]))
        command = [find_nginx(), "-p", str(folder), "-c", str(conf), "-e", str(folder / "error.log")]
        guardian = [sys.executable, "-m", "app.lab.guardian", str(os.getpid()), "--", *command]
        with open(folder / "stderr.log", "wb") as stderr:
            self.nginx = subprocess.Popen(guardian, stdout=subprocess.DEVNULL, stderr=stderr, stdin=subprocess.DEVNULL,
                                          cwd=str(REPO_ROOT), start_new_session=True)
        try:
            wait_for(lambda: self.nginx.poll() is not None or port_in_use(self.nginx_port),
                     f"nginx to listen on {self.nginx_port}", NGINX_TIMEOUT_S)
        except AssertionError as err:
            raise ReplicaError(f"{err}:\n{self.nginx_log()}") from None
        if self.nginx.poll() is not None:
            raise ReplicaError(f"nginx exited with {self.nginx.returncode}:\n{self.nginx_log()}")

    def nginx_log(self) -> str:
        text = []
        for name in ("stderr.log", "error.log"):
            path = self.nginx_folder / name
            if path.exists():
                text += path.read_text(errors="replace").splitlines()
        return "\n".join(text[-20:]) or "(nginx wrote no log)"

    def routes(self) -> list[tuple[str, str, str]]:
        """(cookie, upstream addresses, status) of every request nginx proxied so far."""
        path = self.nginx_folder / "access.log"
        if not path.exists():
            return []
        rows = []
        for line in path.read_text(errors="replace").splitlines():
            parts = line.split(" ", 4)
            if len(parts) == 5:
                rows.append((parts[1], parts[2], parts[3]))
        return rows

    def pin(self, context, index: int) -> None:
        """Send this browser context's requests to replica `index` (its cookie, for the proxy's host)."""
        context.add_cookies([{"name": COOKIE, "value": f"r{index}", "url": self.url}])

    def replica_at(self, upstream: str) -> Replica:
        """The replica whose address served an answer (the last one nginx tried, after a failover)."""
        last = upstream.split(",")[-1].strip()
        return next(r for r in self.replicas if r.address == last)

    def kill(self, index: int) -> None:
        self.replicas[index].kill()

    def revive(self, index: int) -> None:
        """Start a killed or stopped replica again on its port (the proxy's config stays as it is)."""
        replica = self.replicas[index]
        if replica.alive:
            return
        wait_for(lambda: not port_in_use(replica.port), f"port {replica.port} to be free again", 30)
        replica.start()
        replica.wait_healthy()

    def stop(self) -> None:
        threads = [threading.Thread(target=r.stop) for r in self.replicas]  # at once: each may take its grace
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if self.nginx is not None:
            stop_group(self.nginx, grace_s=5)  # guardian, nginx master and worker
            self.nginx = None

    def remove(self) -> None:
        """Stop everything and delete the logs and data folders."""
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def logs(self) -> str:
        """Every replica's log tail and nginx's: what a failing test prints."""
        parts = [f"--- {r.name} ({r.address}, {'alive' if r.alive else 'not running'}) ---\n{r.log_tail(40)}" for r in self.replicas]
        return "\n".join([*parts, f"--- nginx ---\n{self.nginx_log()}"])
