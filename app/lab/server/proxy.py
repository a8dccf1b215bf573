"""A real nginx load balancer in front of Triton replicas, run by the app for the routing lesson.

nginx runs in the foreground (`daemon off;`) from a config generated into a private temp
folder (pid, logs, temp paths all there), bound to a free loopback port, under the server
guardian so it dies with this process. Its access log records, for every request, the
X-Request-ID the lab's driver sends and the replica ($upstream_addr) that served it.

Policies: "round_robin" (nginx's default: each request to the next replica) and "sticky"
(`hash $http_x_session_id consistent;`: one session's chunks always reach one replica).

Given the replicas' gRPC endpoints too (grpc_backends), it balances gRPC on a second port
(`listen ... http2` with grpc_pass, the same policy; a gRPC header is an HTTP/2 header, so the
hash reads x-session-id there as well). nginx balances gRPC per HTTP/2 stream: each unary call
goes its own way, while a bidirectional stream, and every request on it, stays on one replica.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from app.lab.paths import REPO_ROOT
from app.lab.server.errors import ServerError
from app.lab.server.ports import free_ports, port_in_use
from app.lab.server.process_group import GroupLeader, stop_group

POLICIES = ("round_robin", "sticky")
# sbin is often missing from a non-root PATH, where Debian puts nginx.
SEARCH = ("/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx")
LOG_FIELDS = ["msec", "request_id", "session_id", "upstream", "status", "request_time"]


class ProxyError(ServerError):
    """nginx is missing, or did not start; the message says what to do."""


def find_nginx() -> str:
    found = shutil.which("nginx") or next((p for p in SEARCH if os.access(p, os.X_OK)), None)
    if not found:
        raise ProxyError("nginx_missing")
    return found


def render_config(folder: Path, port: int, backends: list[str], policy: str, grpc_port: int | None = None,
                  grpc_backends: list[str] | None = None) -> str:
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    # Run as root, nginx would drop its workers to 'nobody', who cannot write our private folder.
    user = "user root root;\n" if os.geteuid() == 0 else ""
    balance = "    hash $http_x_session_id consistent;\n" if policy == "sticky" else ""
    servers = "".join(f"    server {b} max_fails=0;\n" for b in backends)
    temp = "".join(
        f"  {kind}_temp_path {folder / kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return (
        f"{user}daemon off;\nworker_processes 1;\npid {folder / 'nginx.pid'};\n"
        f"error_log {folder / 'error.log'} warn;\n"
        "events { worker_connections 256; }\n"
        "http {\n"
        f"{temp}"
        "  log_format lab '$msec $http_x_request_id $http_x_session_id $upstream_addr $status $request_time';\n"
        f"  access_log {folder / 'access.log'} lab;\n"
        f"  upstream replicas {{\n{balance}{servers}  }}\n"
        "  server {\n"
        f"    listen 127.0.0.1:{port};\n"
        "    client_max_body_size 16m;\n"
        "    location / {\n"
        "      proxy_pass http://replicas;\n"
        "      proxy_http_version 1.1;\n"
        '      proxy_set_header Connection "";\n'
        # A refused chunk must not be retried on the other replica: one chunk, one replica.
        "      proxy_next_upstream off;\n"
        "      proxy_read_timeout 120s;\n"
        "    }\n"
        "  }\n"
        f"{_grpc_block(grpc_port, grpc_backends or [], balance)}"
        "}\n"
    )


def _grpc_block(port: int | None, backends: list[str], balance: str) -> str:
    if port is None or not backends:
        return ""
    servers = "".join(f"    server {b} max_fails=0;\n" for b in backends)
    return (
        f"  upstream grpc_replicas {{\n{balance}{servers}  }}\n"
        "  server {\n"
        f"    listen 127.0.0.1:{port} http2;\n"
        "    location / {\n"
        "      grpc_pass grpc://grpc_replicas;\n"
        "      grpc_next_upstream off;\n"
        "      grpc_read_timeout 120s;\n"
        "      grpc_send_timeout 120s;\n"
        "    }\n"
        "  }\n"
    )


@dataclass(eq=False)
class NginxProxy(GroupLeader):
    backends: list[str]  # "host:port" of each replica
    policy: str = "round_robin"
    ready_timeout_s: float = 15.0
    grpc_backends: list[str] = field(default_factory=list)  # "host:port" of each replica's gRPC endpoint (none: HTTP only)
    port: int = field(default=0, init=False)
    grpc_port: int | None = field(default=None, init=False)
    folder: Path | None = field(default=None, init=False)
    process: subprocess.Popen[bytes] | None = field(default=None, init=False)

    @property
    def url(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def grpc_url(self) -> str | None:
        """host:port of the gRPC side, where grpc_backends were given."""
        return f"127.0.0.1:{self.grpc_port}" if self.grpc_port else None

    def start(self) -> NginxProxy:
        if self.running:
            return self
        nginx = find_nginx()
        self.folder = Path(tempfile.mkdtemp(prefix="triton-lab-nginx-"))
        ports = free_ports(2 if self.grpc_backends else 1)
        self.port = ports[0]
        self.grpc_port = ports[1] if self.grpc_backends else None
        conf = self.folder / "nginx.conf"
        conf.write_text(render_config(self.folder, self.port, self.backends, self.policy, self.grpc_port, self.grpc_backends))
        command = [nginx, "-p", str(self.folder), "-c", str(conf), "-e", str(self.folder / "error.log")]
        guardian = [sys.executable, "-m", "app.lab.guardian", str(os.getpid()), "--", *command]
        with open(self.folder / "stderr.log", "wb") as stderr:
            self.process = subprocess.Popen(
                guardian,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                stdin=subprocess.DEVNULL,
                cwd=str(REPO_ROOT),
                start_new_session=True,  # its own group: stop() ends guardian, master and worker together
            )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                raise ProxyError("nginx_exited", log=self.log_tail())
            if port_in_use(self.port) and (self.grpc_port is None or port_in_use(self.grpc_port)):
                return
            time.sleep(0.05)
        raise ProxyError("nginx_not_listening", port=self.port, seconds=self.ready_timeout_s, log=self.log_tail())

    def log_tail(self, lines: int = 15) -> str:
        text = []
        for name in ("stderr.log", "error.log"):
            path = self.folder / name if self.folder else None
            if path and path.exists():
                text += path.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:]) or "(nginx wrote no log)"

    def routes(self) -> pd.DataFrame:
        """One row per proxied request: request_id, session_id, upstream (replica), status."""
        path = self.folder / "access.log" if self.folder else None
        if path is None or not path.exists():
            return pd.DataFrame(columns=LOG_FIELDS)
        rows = [line.split(" ") for line in path.read_text().splitlines()]
        frame = pd.DataFrame([r for r in rows if len(r) == len(LOG_FIELDS)], columns=LOG_FIELDS)
        frame["status"] = pd.to_numeric(frame["status"], errors="coerce")
        return frame

    def stop(self) -> None:
        process = self.process
        if process is not None:
            stop_group(process, grace_s=5)  # guardian, nginx master and worker
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def __enter__(self) -> NginxProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
