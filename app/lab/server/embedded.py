"""Start and stop a real tritonserver from the nvidia-pytriton wheel, on loopback ports.

The server runs in explicit model-control mode so the lab can load, replace and unload
deployments at run time. It is started under the guardian, in a process group of its own,
so stop() (or the death of this process) leaves no server or stub behind.

Nor their shared memory: each Python-backend stub talks to the server through a region in
/dev/shm, which outlives a server that is killed (tmpfs holds it until it is unlinked). Each
server names its regions with a prefix of its own (the Python backend's shm-region-prefix-name),
so whoever sees it end, the guardian or stop(), removes what it left (app/lab/shared_memory.py).
"""
from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from app.lab import shared_memory
from app.lab.paths import MODEL_REPOSITORY, REPO_ROOT
from app.lab.server import health, installation
from app.lab.server.errors import StartupError
from app.lab.server.ports import free_ports, port_in_use
from app.lab.server.process_group import GroupLeader, stop_group

LOG_TAIL_LINES = 25


@dataclass(eq=False)
class EmbeddedServer(GroupLeader):
    model_repository: Path = MODEL_REPOSITORY
    http_port: int | None = None
    startup_models: tuple[str, ...] = ()
    extra_args: tuple[str, ...] = ()
    # A local response cache of this many bytes (0: none). Only models whose config says
    # response_cache { enable: true } use it (server docs/user_guide/response_cache.md).
    response_cache_bytes: int = 0
    # Triton's default: a backend may complete each config at load. The Python backend does it in
    # a stub of its own, one more process per load that imports the model's module (LabServer
    # says when that can be skipped).
    auto_complete_config: bool = True
    ready_timeout_s: float = 120.0
    # Requests still in flight at stop get this long; a stuck sequence must not hold us 30 s.
    exit_timeout_s: int = 5
    process: subprocess.Popen[bytes] | None = field(default=None, init=False)
    log_path: Path | None = field(default=None, init=False)
    grpc_port: int = field(default=0, init=False)
    metrics_port: int = field(default=0, init=False)
    started_at: float = field(default=0.0, init=False)
    ready_after_s: float = field(default=0.0, init=False)
    allocator: str = field(default="", init=False)  # shown in status: it decides whether 2.51's trace bug can bite
    shm_prefix: str = field(default="", init=False)  # this server's stubs' regions in /dev/shm start with it

    @property
    def url(self) -> str:
        return f"127.0.0.1:{self.http_port}"

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}/metrics"

    def start(self) -> EmbeddedServer:
        if self.running:
            return self
        install = installation.locate()
        repo = Path(self.model_repository).resolve()
        if not (repo.is_dir()):
            raise StartupError("server_repository_missing", path=str(repo))
        if self.http_port is not None and port_in_use(self.http_port):
            raise StartupError("server_port_in_use", port=self.http_port)
        ports = free_ports(3)
        self.http_port = self.http_port or ports[0]
        self.grpc_port, self.metrics_port = ports[1], ports[2]
        self.shm_prefix = f"{shared_memory.PREFIX}{secrets.token_hex(6)}_"
        command = [
            str(install.executable),
            f"--model-repository={repo}",
            f"--backend-directory={install.backend_dir}",
            "--model-control-mode=explicit",
            *[f"--load-model={name}" for name in self.startup_models],
            "--http-address=127.0.0.1",
            f"--http-port={self.http_port}",
            "--grpc-address=127.0.0.1",
            f"--grpc-port={self.grpc_port}",
            "--metrics-address=127.0.0.1",
            f"--metrics-port={self.metrics_port}",
            "--allow-metrics=true",
            "--allow-gpu-metrics=false",
            "--allow-cpu-metrics=false",
            # Triton's own latency quantiles per model (nv_inference_*_summary_us), off by default.
            "--metrics-config=summary_latencies=true",
            f"--exit-timeout-secs={self.exit_timeout_s}",
            "--log-verbose=0",
            f"--backend-config=python,shm-region-prefix-name={self.shm_prefix}",
            *([] if self.auto_complete_config else ["--disable-auto-complete-config"]),
            *self._cache_args(install),
            *self.extra_args,
        ]
        env = dict(os.environ)
        # The stub embeds the first python on PATH: make it ours so models see this venv.
        env["PATH"] = f"{install.python_bin_dir}{os.pathsep}{env.get('PATH', '')}"
        libraries = [str(install.library_dir)]
        if install.python_library_dir is not None:  # the stub's libpython must match our standard library
            libraries.insert(0, str(install.python_library_dir))
        env["LD_LIBRARY_PATH"] = os.pathsep.join([*libraries, env.get("LD_LIBRARY_PATH", "")])
        if install.allocator:
            env["LD_PRELOAD"] = f"{install.allocator}{os.pathsep}{env.get('LD_PRELOAD', '')}".rstrip(os.pathsep)
        self.allocator = install.allocator.name if install.allocator else "glibc malloc"
        log_fd, log_name = tempfile.mkstemp(prefix="tritonserver-", suffix=".log")
        self.log_path = Path(log_name)
        guardian = [sys.executable, "-m", "app.lab.guardian", str(os.getpid()), "--shm-prefix", self.shm_prefix, "--", *command]
        self.started_at = time.monotonic()
        self.process = subprocess.Popen(
            guardian,
            stdout=log_fd,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=str(REPO_ROOT),
            start_new_session=True,
        )
        os.close(log_fd)
        _live_servers.add(self)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        self.ready_after_s = time.monotonic() - self.started_at
        return self

    def _cache_args(self, install: installation.Installation) -> list[str]:
        if not self.response_cache_bytes:
            return []
        if install.cache_dir is None:
            raise StartupError("server_cache_missing", path=str(install.executable.parent.parent / "caches"))
        return [f"--cache-directory={install.cache_dir}", f"--cache-config=local,size={self.response_cache_bytes}"]

    def _wait_ready(self) -> None:
        assert self.process is not None  # started just before
        outcome = health.wait_until_ok(f"http://{self.url}/v2/health/ready", self.process, self.ready_timeout_s)
        if outcome == "exited":
            raise self._explain_exit()
        if outcome == "timeout":
            raise StartupError("server_not_ready", seconds=self.ready_timeout_s, log=self.log_tail())

    def _explain_exit(self) -> StartupError:
        tail = self.log_tail()
        if "already in use" in tail:
            ports = f"{self.http_port}, {self.grpc_port}, {self.metrics_port}"
            return StartupError("server_ports_taken", ports=ports, log=tail)
        return StartupError("server_exited", code=self.process.returncode if self.process else None, log=tail)

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        if not self.log_path or not self.log_path.exists():
            return "(no server log)"
        text = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def stop(self, grace_s: float | None = None) -> None:
        """Terminate the server; kill its whole group after the grace period."""
        process = self.process
        _live_servers.discard(self)
        if process is None:
            return
        crashed = process.poll() is not None
        stop_group(process, self.exit_timeout_s + 5 if grace_s is None else grace_s)
        shared_memory.remove(self.shm_prefix)  # the guardian's job too, unless it was killed with the rest
        # Logs of clean stops would pile up in the temp folder (one per start, up to ~18 MB a run at
        # verbosity 1); a server that died on its own keeps its log for the post-mortem.
        if not crashed and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)

    def kill_for_demo(self) -> None:
        """Kill the server abruptly, as a crash would (used to show dead-server handling)."""
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(5)
            shared_memory.remove(self.shm_prefix)  # the guardian died with the group: nobody else will

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


_live_servers: set[EmbeddedServer] = set()
_lock = threading.Lock()


@atexit.register
def _stop_all() -> None:
    with _lock:
        for server in list(_live_servers):
            server.stop(grace_s=3)
