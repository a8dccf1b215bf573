"""One handle on "the Triton the lab talks to": the embedded one, or an external one (TRITON_URL).

Clients are made fresh per caller because tritonclient's HTTP client is not thread-safe.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import tritonclient.http as http

from app.lab import database
from app.lab.deployment import LoadedModels, SharedLoadedModels, instance_kind
from app.lab.paths import MODEL_REPOSITORY
from app.lab.problems import LabError, Problem
from app.lab.server import address, memory
from app.lab.server.embedded import EmbeddedServer
from app.lab.server.errors import ServerError, UnreachableError

TRACE_FILE = "trace.json"


@dataclass
class ModelStatus:
    name: str
    state: str
    scheduler: str
    instances: int
    kind: str


class ServerStatus(TypedDict):
    """What status() says: where the server is, what it runs on, what is deployed (a ModelStatus's fields each)."""

    mode: str
    url: str | None
    alive: bool
    instance_kind: str
    allocator: str | None
    version: str | None
    models: list[dict[str, str | int]]


class LabServer:
    def __init__(self, url: str | None = None, model_repository: Path = MODEL_REPOSITORY, preload: tuple[str, ...] = (),
                 response_cache_bytes: int = 0, auto_complete_config: bool | None = None):
        """`preload`: deployments loaded at start; everything else loads when first needed.
        `response_cache_bytes`: an embedded server gets a local response cache of that size (the
        test suite's, for a zoo model that turns it on); an external server has whatever it has.
        `auto_complete_config`: whether an embedded server lets backends complete configs (Triton's
        default). None: off for the lab's own repository, whose configs are complete and whose
        model defines no auto_complete_config, so completing only cost a stub per load that imports
        torch (python_be.cc LaunchAutoCompleteStubProcess, r24.10); on for any other repository
        (the checker's), whose models may rely on it."""
        self.external_url = url
        self.model_repository = Path(model_repository)
        self.auto_complete_config = (self.model_repository.resolve() != MODEL_REPOSITORY.resolve()
                                     if auto_complete_config is None else auto_complete_config)
        self.preload = preload
        self.response_cache_bytes = response_cache_bytes
        self.models = self._models()
        self.embedded: EmbeddedServer | None = None
        self.trace_dir: Path | None = None
        self.external_log: Path | None = None  # an external server's log file, when it is on this machine
        self._lock = threading.Lock()

    def _models(self) -> LoadedModels:
        """An external server may be shared by app replicas: with the class database on
        PostgreSQL, what is loaded on it is counted across them. An embedded server is this
        process's alone."""
        db_url = database.class_database_url()
        if self.external_url and database.is_shared(db_url):
            return SharedLoadedModels(self, db_url)
        return LoadedModels(self)

    @classmethod
    def from_env(cls, **kwargs: Any) -> LabServer:  # LabServer's own fields, passed on to it
        """TRITON_URL picks an external server; TRITON_TRACE_DIR names the folder where that
        server writes its trace file (started with --trace-config triton,file=DIR/trace.json);
        TRITON_LOG_FILE names its log file (started with --log-file FILE), for the log panel."""
        address.check_environment()  # a variable that is no address is refused now, naming it, not at the first request
        server = cls(url=address.from_environment("TRITON_URL"), **kwargs)
        if server.external_url and os.environ.get("TRITON_TRACE_DIR"):
            server.trace_dir = Path(os.environ["TRITON_TRACE_DIR"])
        if server.external_url and os.environ.get("TRITON_LOG_FILE"):
            server.external_log = Path(os.environ["TRITON_LOG_FILE"])
        return server

    def environment(self) -> dict[str, str]:
        """Variables that point another process (a test's app, a CLI) at this same server."""
        env = {"TRITON_URL": self.url, "TRITON_GRPC_URL": self.grpc_url, "TRITON_METRICS_URL": self.metrics_url}
        if self.trace_dir is not None:
            env["TRITON_TRACE_DIR"] = str(self.trace_dir)
        if self.log_path is not None:
            env["TRITON_LOG_FILE"] = str(self.log_path)
        return env

    @property
    def is_embedded(self) -> bool:
        return self.external_url is None

    @property
    def url(self) -> str:
        if self.external_url:
            return self.external_url.removeprefix("http://")
        if self.embedded is None:
            raise ServerError("server_not_started")
        return self.embedded.url

    @property
    def grpc_url(self) -> str:
        """host:port of the gRPC endpoint (TRITON_GRPC_URL, else port 8001 of an external host)."""
        if self.embedded is not None:
            return f"127.0.0.1:{self.embedded.grpc_port}"
        host = self.url.rsplit(":", 1)[0]
        return address.from_environment("TRITON_GRPC_URL") or f"{host}:8001"

    @property
    def metrics_url(self) -> str:
        if self.embedded is not None:
            return self.embedded.metrics_url
        host = self.url.rsplit(":", 1)[0]
        return address.from_environment("TRITON_METRICS_URL") or f"http://{host}:8002/metrics"

    @property
    def log_path(self) -> Path | None:
        """The server's log file: the embedded one's, or an external one's named by TRITON_LOG_FILE;
        None otherwise (or before start)."""
        if self.embedded is not None:
            return self.embedded.log_path
        return self.external_log if self.external_url else None

    def model_memory_mb(self, names: list[str], instances: dict[str, int] | None = None) -> dict[str, float] | None:
        """Private memory (MB) of each named model's stubs now (of its `instances[name]` newest
        stubs, where given), on the embedded server; None for an external one, whose processes
        may be on another machine."""
        pid = self.embedded.pid if self.embedded is not None else None
        if pid is None:
            return None
        totals = memory.by_model(memory.processes(pid, names), instances)
        return {name: totals[name][0] for name in names if name in totals}

    def client(self, timeout_s: float = 60.0) -> http.InferenceServerClient:
        return http.InferenceServerClient(self.url, connection_timeout=timeout_s, network_timeout=timeout_s)

    def start(self) -> LabServer:
        with self._lock:
            if self.external_url:
                self._check_reachable()
                return self
            if self.embedded is not None and self.embedded.running:
                return self
            self.trace_dir = Path(tempfile.mkdtemp(prefix="triton-lab-trace-"))
            self.embedded = EmbeddedServer(
                model_repository=self.model_repository,
                response_cache_bytes=self.response_cache_bytes,
                auto_complete_config=self.auto_complete_config,
                # A trace file must be named at start-up; runs switch tracing on per model.
                extra_args=(
                    f"--trace-config=triton,file={self.trace_dir / TRACE_FILE}",
                    "--trace-config=level=OFF",
                    "--trace-config=rate=1",
                ),
            )
            self.embedded.start()
            self.models.forget()
            self._load_models()
            return self

    def _load_models(self) -> None:
        present = [m for m in self.preload if (self.model_repository / m / "config.pbtxt").exists()]
        with ThreadPoolExecutor(max_workers=max(1, len(present))) as pool:
            for name, future in [(name, pool.submit(self.models.ensure, name)) for name in present]:
                try:
                    future.result()
                except LabError as err:  # the load's own problems follow, in the same words as anywhere
                    failed = ServerError("server_model_failed", model=name)
                    tail = self.embedded.log_tail() if self.embedded else ""
                    failed.problems += [*err.problems, Problem("server_log_tail", {"log": tail})]
                    raise failed from None

    def _check_reachable(self) -> None:
        try:
            with self.client(timeout_s=5) as client:
                live = client.is_server_live()
        except Exception as err:  # connection refused, DNS, timeouts all mean the same here
            raise UnreachableError("server_unreachable", url=self.external_url, kind=type(err).__name__) from None
        if not live:
            raise UnreachableError("server_not_live", url=self.external_url)

    def alive(self, timeout_s: float = 10.0) -> bool:
        """The embedded server: its process runs (a class keeps it too busy to answer a health
        check in seconds, and a slow answer is no reason to offer a restart that would end
        everyone's runs). An external one: it answers, or it took the connection and is too busy
        to answer within the timeout (the same reason: a busy server is not a gone one)."""
        if self.is_embedded:
            return self.embedded is not None and self.embedded.running
        try:
            return bool(self.client(timeout_s=timeout_s).is_server_live())
        except TimeoutError:
            return True
        except Exception:
            return False

    def restart(self) -> LabServer:
        """Start a stopped server again; one already running (another learner pressed Restart
        first) is left alone, so two presses never restart it twice."""
        if self.alive():
            return self
        self.stop()
        return self.start()

    def stop(self) -> None:
        with self._lock:
            if self.embedded is not None:
                self.embedded.stop()
                self.embedded = None
            if self.trace_dir is not None and self.is_embedded:
                shutil.rmtree(self.trace_dir, ignore_errors=True)
                self.trace_dir = None

    def status(self) -> ServerStatus:
        """What a status panel shows: where the server is, what it runs on, what is deployed."""
        info: ServerStatus = {
            "mode": "embedded" if self.is_embedded else "external",
            "url": self.url if (self.external_url or self.embedded) else None,
            "alive": self.alive(),
            "instance_kind": instance_kind(),
            # The embedded 2.51 server needs jemalloc to survive long traced runs (installation.py).
            "allocator": self.embedded.allocator if self.is_embedded and self.embedded else None,
            "version": None,
            "models": [],
        }
        if not info["alive"]:
            return info
        client = self.client(timeout_s=10)
        info["version"] = client.get_server_metadata().get("version")
        for entry in client.get_model_repository_index():
            row = ModelStatus(entry["name"], entry.get("state", ""), "", 0, "")
            if entry.get("state") == "READY":
                config = client.get_model_config(entry["name"])
                row.scheduler = _scheduler_from_json(config)
                groups = config.get("instance_group", [])
                row.instances = sum(int(g.get("count", 1)) for g in groups)
                row.kind = ",".join(sorted({g.get("kind", "") for g in groups}))
            info["models"].append(row.__dict__)
        return info


def _scheduler_from_json(config: Mapping[str, object]) -> str:
    if "sequence_batching" in config:
        seq = config["sequence_batching"]
        return "sequence/oldest" if isinstance(seq, dict) and "oldest" in seq else "sequence/direct"
    if "dynamic_batching" in config:
        return "dynamic"
    return "none"
