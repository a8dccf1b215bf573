"""What is loaded on the server, loaded the first time something needs it, within a budget.

Every instance of a Python-backend model is a stub process of its own (0.25 GB with torch's
CPU build, about 0.55 GB with its CUDA build), so memory is counted in stubs. Nothing is loaded
at start-up; a deployment is loaded when a run, a lesson or an exercise first asks for it. When
a load would go over the budget, the least recently used deployment without a run in progress
is unloaded; when every loaded one is running, the load waits for a run to end, and after
CAPACITY_WAIT_S gives up with `capacity_full`, so a class learns why instead of a server running
out of memory. Loads of different deployments run side by side; two loads of one name never do.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from tritonclient.grpc import model_config_pb2 as mc
from tritonclient.utils import InferenceServerException

from app.lab import env_settings
from app.lab.deployment import deployments
from app.lab.deployment.deployments import DeploymentError, instance_count
from app.lab.problems import LabError
from app.lab.traffic import run_queue

if TYPE_CHECKING:
    import tritonclient.http as http


class ModelServer(Protocol):
    """What the deployment stage needs of a server (app/lab/server's LabServer): its address and a client."""

    @property
    def url(self) -> str: ...
    def client(self, timeout_s: float = 60.0) -> http.InferenceServerClient: ...


BUDGET_ENV = "TRITON_LAB_MAX_STUBS"
STUB_GB = 0.6  # one stub with torch's CUDA build, rounded up (benchmarks/cold_start.py measures it)
RESERVED_GB = 2.0  # the server itself, the app and a browser
CAPACITY_WAIT_S = 30.0
LOAD_TIMEOUT_S = 300.0


def default_budget() -> int:
    """TRITON_LAB_MAX_STUBS, else what this machine's memory holds after RESERVED_GB (at least
    4: the largest set-up the lab allows has 4 instances)."""
    given = env_settings.count(BUDGET_ENV, "stub processes")
    if given is not None:
        return given
    try:
        memory_gb = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30
    except (ValueError, OSError):
        memory_gb = 8.0
    return max(4, int((memory_gb - RESERVED_GB) / STUB_GB))


@dataclass(frozen=True)
class _Loaded:
    stubs: int
    text: str  # the config it was loaded with


@dataclass
class _Known:
    config: mc.ModelConfig
    text: str
    with_code: bool


class LoadedModels:
    def __init__(self, server: ModelServer, budget: int | None = None, capacity_wait_s: float = CAPACITY_WAIT_S):
        self.server = server
        self.budget = budget or default_budget()
        self.capacity_wait_s = capacity_wait_s
        self._cond = threading.Condition()
        self._loaded: OrderedDict[str, _Loaded] = OrderedDict()  # least recently used first
        self._known: dict[str, _Known] = {}  # how to load a name again after it was unloaded
        self._reserved = 0  # stubs of loads under way
        self._name_locks: dict[str, threading.Lock] = {}

    # -- what the server holds -------------------------------------------------------------
    def in_use(self) -> int:
        with self._cond:
            return self._in_use()

    def _in_use(self) -> int:
        return sum(entry.stubs for entry in self._loaded.values()) + self._reserved

    def loaded(self) -> list[str]:
        with self._cond:
            return list(self._loaded)

    def forget(self) -> None:
        """After a server restart nothing is loaded any more (configs are still known)."""
        with self._cond:
            self._loaded.clear()
            self._cond.notify_all()

    # -- loading ---------------------------------------------------------------------------
    def ensure(self, name: str, config: mc.ModelConfig | None = None, with_code: bool = False,
               name_fixes_config: bool = False) -> None:
        """Make `name` ready: with `config` (replacing a different one), else as loaded before,
        else the repository's own. DeploymentError when Triton refuses it, LabError
        capacity_full when the budget stays full of running deployments.

        A model already ready on the server that this process did not load (another app process,
        the test suite, an external server) is taken as it is when its name settles its config:
        a repository model (config None) or a name made from the settings (name_fixes_config).
        Reloading it would interrupt whoever is using it."""
        known = self._remember(name, config, with_code)
        with self._name_lock(name):
            if known is None:
                return self._ensure_unknown(name)
            with self._cond:
                current = self._loaded.get(name)
            adopt = current is None and (config is None or name_fixes_config)
            if (adopt or (current is not None and current.text == known.text)) and self._ready(name):
                with self._cond:
                    if adopt:
                        self._loaded[name] = _Loaded(instance_count(known.config), known.text)
                        self._shrink(exclude=name)  # its stubs already run: make room after the fact
                    if name in self._loaded:
                        self._loaded.move_to_end(name)
                return
            need = instance_count(known.config)
            self._reserve(name, need)
            loaded = False
            try:
                self._load(known)
                loaded = True
            finally:
                with self._cond:
                    self._reserved -= need
                    if loaded:
                        self._loaded[name] = _Loaded(need, known.text)
                    self._cond.notify_all()

    def unload(self, name: str) -> None:
        """Unload `name` now, if this process loaded it (a test module's own deployments, at its end)."""
        with self._name_lock(name):
            with self._cond:
                if self._loaded.pop(name, None) is None:
                    return
                self._cond.notify_all()
            self._unload(name)

    def _load(self, known: _Known) -> None:
        """Ask the server to load it as known; DeploymentError when Triton refuses."""
        try:
            deployments.load(self.server.client(timeout_s=LOAD_TIMEOUT_S), known.config, with_code=known.with_code)
        except InferenceServerException as err:
            raise DeploymentError("triton_refused", message=err.message()) from None

    def _remember(self, name: str, config: mc.ModelConfig | None, with_code: bool) -> _Known | None:
        with self._cond:
            if config is not None:
                self._known[name] = _Known(config, deployments.to_pbtxt(config), with_code)
            elif name not in self._known:
                repository = getattr(self.server, "model_repository", None)
                if repository is None or not (repository / name / "config.pbtxt").exists():
                    return None
                placed = deployments.place_instances(deployments.read_config(name, repository))
                self._known[name] = _Known(placed, deployments.to_pbtxt(placed), False)
            return self._known[name]

    def _ensure_unknown(self, name: str) -> None:
        """A name neither in our repository nor loaded by us (an external server's own model):
        ask the server to load it by name if it is not ready."""
        if not self._ready(name):
            try:
                self.server.client(timeout_s=LOAD_TIMEOUT_S).load_model(name)
            except InferenceServerException as err:
                raise DeploymentError("triton_refused", message=err.message()) from None

    def _ready(self, name: str) -> bool:
        try:
            with self.server.client(timeout_s=10) as client:
                return bool(client.is_model_ready(name))
        except Exception:
            return False

    def _name_lock(self, name: str) -> threading.Lock:
        with self._cond:
            return self._name_locks.setdefault(name, threading.Lock())

    def _reserve(self, name: str, need: int) -> None:
        """Count `need` stubs as taken, unloading idle deployments to make room, or wait."""
        deadline = time.monotonic() + self.capacity_wait_s
        with self._cond:
            # Replacing a model frees its old stubs as the new ones start.
            replaced = self._loaded.pop(name, None)
            while not self._shrink(exclude=name, need=need):
                left = deadline - time.monotonic()
                if left <= 0 or need > self.budget:
                    if replaced is not None:  # still loaded on the server: keep counting it
                        self._loaded[name] = replaced
                    raise LabError("capacity_full", budget=self.budget, in_use=self._in_use(), need=need,
                                   waited=round(self.capacity_wait_s))
                self._cond.wait(min(left, run_queue.POLL_S))
            self._reserved += need

    def _shrink(self, exclude: str, need: int = 0) -> bool:
        """Unload idle deployments until `need` more stubs fit the budget; whether they do.
        Called with the lock held; it is let go while the server unloads, so other loads can book."""
        while self._in_use() + need > self.budget:
            victim = self._idle_victim(exclude=exclude)
            if victim is None:
                return False
            del self._loaded[victim]
            self._cond.release()
            try:
                self._unload(victim)
            finally:
                self._cond.acquire()
        return True

    def _idle_victim(self, exclude: str) -> str | None:
        busy = run_queue.for_server(self.server.url).busy()
        for name in self._loaded:  # least recently used first
            if name != exclude and name not in busy:
                return name
        return None

    def _unload(self, name: str) -> None:
        with contextlib.suppress(Exception), self.server.client(timeout_s=30) as client:  # gone already (a restarted server): nothing of ours to free
            client.unload_model(name)
