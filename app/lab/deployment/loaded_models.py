"""What is loaded on the server, loaded the first time something needs it, within two budgets.

Every instance of a Python-backend model is a stub process of its own, and what one costs
depends on what its model imports (about 20 MB private for the recogniser's CPU instance, 280 MB
for the classifier's, which imports torch: benchmarks/stub_memory.py). So a deployment's cost is
measured, not assumed: after each load of the embedded server the lab reads the private memory
of the deployment's stubs (app/lab/server/memory.py) and keeps it; before a load it expects what
that deployment, else one with the same outputs (the same model code), else the costliest
instance so far, cost per instance (FIRST_GUESS_INSTANCE_MB before anything was measured, or on
an external server, whose processes it cannot see).

The budgets: a memory budget in MB (TRITON_LAB_MEMORY_MB, else the machine's memory less
RESERVED_MB for the server, the app and a browser), and a cap on stub processes
(TRITON_LAB_MAX_STUBS). Nothing is loaded at start-up; a deployment is loaded when a run, a
lesson or an exercise first asks for it. When a load would go over either budget, the least
recently used deployments without a run in progress are unloaded (and remembered, for the
Instructor page); when every loaded one is running, the load waits for a run to end, telling
the caller's on_wait what it waits for, and after CAPACITY_WAIT_S gives up with `memory_full` or
`capacity_full`, so a class learns why instead of a server running out of memory. Loads of
different deployments run side by side; two loads of one name never do.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tritonclient.grpc import model_config_pb2 as mc
from tritonclient.utils import InferenceServerException

from app.lab import env_settings
from app.lab.deployment import deployments
from app.lab.deployment.deployments import DeploymentError, instance_count
from app.lab.problems import LabError
from app.lab.traffic import OnWait, Wait, run_queue

if TYPE_CHECKING:
    import tritonclient.http as http


class ModelServer(Protocol):
    """What the deployment stage needs of a server (app/lab/server's LabServer): its address and a client."""

    @property
    def url(self) -> str: ...
    def client(self, timeout_s: float = 60.0) -> http.InferenceServerClient: ...


BUDGET_ENV = "TRITON_LAB_MAX_STUBS"
MEMORY_ENV = "TRITON_LAB_MEMORY_MB"
STUB_GB = 0.6  # one stub with torch's CUDA build, rounded up (benchmarks/cold_start.py measures it)
RESERVED_GB = 2.0  # the server itself, the app and a browser
RESERVED_MB = RESERVED_GB * 1024
# What an instance is expected to cost before any was measured: a stub that imports torch's CUDA
# build holds about 280 MB private before any model code (benchmarks/stub_memory.py), rounded up.
FIRST_GUESS_INSTANCE_MB = 400.0
# A stub grows after its load as it serves (18 to 21 MB for the recogniser's CPU instance after one
# run: benchmarks/stub_memory.py), so a measured cost is booked with this much on top.
GROWTH_MARGIN = 0.25
UNLOADS_KEPT = 20  # the Instructor page lists the latest unloads
CAPACITY_WAIT_S = 30.0
LOAD_TIMEOUT_S = 300.0
UNLOAD_WAIT_S = 30.0  # an unload waits for the model's requests in flight; runs hold none of ours


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


CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")  # v2, v1


def machine_memory_mb() -> float:
    """The memory this process may use: the machine's, or its container's limit where that is lower
    (a pod's memory limit, not the node's memory)."""
    try:
        physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (ValueError, OSError):
        physical = 8192.0
    for path in CGROUP_LIMITS:
        try:
            raw = Path(path).read_text().strip()
        except OSError:
            continue
        if raw.isdigit():  # "max" (v2) means no limit; v1 writes a huge number instead
            return min(physical, int(raw) / 2**20)
    return physical


def default_memory_budget_mb() -> int:
    """TRITON_LAB_MEMORY_MB, else this machine's memory less RESERVED_MB (at least 1024)."""
    given = env_settings.count(MEMORY_ENV, "MB")
    if given is not None:
        return given
    return max(1024, int(machine_memory_mb() - RESERVED_MB))


@dataclass(frozen=True)
class _Loaded:
    stubs: int
    text: str  # the config it was loaded with
    cost_mb: float  # booked: its stubs' private memory read after its load plus GROWTH_MARGIN, or expected
    measured: bool  # cost_mb comes from its stubs, not from an expectation


@dataclass(frozen=True)
class Unloaded:
    """A deployment the budget unloaded, to make room for another's load."""

    name: str
    cost_mb: float
    made_room_for: str
    at: float  # time.time()


@dataclass(frozen=True)
class DeploymentCost:
    name: str
    instances: int
    cost_mb: float
    measured: bool
    running: bool


@dataclass(frozen=True)
class MemoryReport:
    """The server's memory as the budget sees it (the Instructor page shows it)."""

    budget_mb: float
    in_use_mb: float
    stub_budget: int
    stubs_in_use: int
    deployments: list[DeploymentCost]  # least recently used first
    unloaded: list[Unloaded]  # latest last


@dataclass
class _Known:
    config: mc.ModelConfig
    text: str
    with_code: bool


class LoadedModels:
    def __init__(self, server: ModelServer, budget: int | None = None, capacity_wait_s: float = CAPACITY_WAIT_S,
                 memory_budget_mb: float | None = None):
        self.server = server
        self.budget = budget or default_budget()
        self.memory_budget_mb = float(memory_budget_mb or default_memory_budget_mb())
        self.capacity_wait_s = capacity_wait_s
        self._cond = threading.Condition()
        self._loaded: OrderedDict[str, _Loaded] = OrderedDict()  # least recently used first
        self._known: dict[str, _Known] = {}  # how to load a name again after it was unloaded
        self._reserved = 0  # stubs of loads under way
        self._reserved_mb = 0.0  # what loads under way are expected to cost
        self._instance_mb: dict[str, float] = {}  # measured private MB per instance, by name ...
        self._family_mb: dict[frozenset[str], float] = {}  # ... and by the model's outputs (its code)
        self._unloads: deque[Unloaded] = deque(maxlen=UNLOADS_KEPT)
        self._unloading: set[str] = set()  # unloads to make room that the server has not finished
        self._name_locks: dict[str, threading.Lock] = {}

    # -- what the server holds -------------------------------------------------------------
    def in_use(self) -> int:
        with self._cond:
            return self._in_use()

    def _in_use(self) -> int:
        return sum(entry.stubs for entry in self._loaded.values()) + self._reserved

    def in_use_mb(self) -> float:
        with self._cond:
            return self._in_use_mb()

    def _in_use_mb(self) -> float:
        return sum(entry.cost_mb for entry in self._loaded.values()) + self._reserved_mb

    def loaded(self) -> list[str]:
        with self._cond:
            return list(self._loaded)

    def memory(self) -> MemoryReport:
        """The budget, what each loaded deployment costs and whether it runs, what was unloaded."""
        busy = run_queue.for_server(self.server.url).busy()
        with self._cond:
            costs = [DeploymentCost(name, entry.stubs, entry.cost_mb, entry.measured, name in busy)
                     for name, entry in self._loaded.items()]
            return MemoryReport(self.memory_budget_mb, self._in_use_mb(), self.budget, self._in_use(), costs,
                                list(self._unloads))

    def forget(self) -> None:
        """After a server restart nothing is loaded any more (configs are still known)."""
        with self._cond:
            self._loaded.clear()
            self._cond.notify_all()

    # -- loading ---------------------------------------------------------------------------
    def ensure(self, name: str, config: mc.ModelConfig | None = None, with_code: bool = False,
               name_fixes_config: bool = False, on_wait: OnWait | None = None) -> None:
        """Make `name` ready: with `config` (replacing a different one), else as loaded before,
        else the repository's own. DeploymentError when Triton refuses it, LabError memory_full
        or capacity_full when a budget stays full of running deployments; while it waits for one
        to end, on_wait hears why.

        A model already ready on the server that this process did not load (another app process,
        the test suite, an external server) is taken as it is when its name settles its config:
        a repository model (config None) or a name made from the settings (name_fixes_config).
        Reloading it would interrupt whoever is using it."""
        known = self._remember(name, config, with_code)
        with self._name_lock(name):
            if known is None:
                return self._ensure_unknown(name)
            with self._cond:
                # Still ready while the server unloads it: wait, or it would be taken as loaded.
                while name in self._unloading:
                    self._cond.wait(run_queue.POLL_S)
                current = self._loaded.get(name)
            adopt = current is None and (config is None or name_fixes_config)
            if (adopt or (current is not None and current.text == known.text)) and self._ready(name):
                measured = self._measure(name, instance_count(known.config)) if adopt else None
                with self._cond:
                    if adopt:
                        self._record(name, known, measured)
                        stubs = instance_count(known.config)
                        cost = _booked(measured) if measured is not None else self._expected_mb(name, known.config)
                        self._loaded[name] = _Loaded(stubs, known.text, cost, measured is not None)
                        self._shrink(exclude=name)  # its stubs already run: make room after the fact
                    if name in self._loaded:
                        self._loaded.move_to_end(name)
                return
            need = instance_count(known.config)
            need_mb = self._expected_mb(name, known.config)
            self._reserve(name, need, need_mb, on_wait)
            loaded, measured = False, None
            try:
                self._load(known)
                loaded = True
                measured = self._measure(name, need)
            finally:
                with self._cond:
                    self._reserved -= need
                    self._reserved_mb -= need_mb
                    if loaded:
                        self._record(name, known, measured)
                        cost = _booked(measured) if measured is not None else need_mb
                        self._loaded[name] = _Loaded(need, known.text, cost, measured is not None)
                        if cost > need_mb:  # it cost more than expected: make room after the fact
                            self._shrink(exclude=name)
                    self._cond.notify_all()

    # -- what a deployment costs -------------------------------------------------------------
    def _measure(self, name: str, instances: int | None = None) -> float | None:
        """Private MB of `name`'s stubs now (its `instances` newest), where the server's processes
        can be read."""
        read = getattr(self.server, "model_memory_mb", None)
        if read is None:
            return None
        found = read([name], None if instances is None else {name: instances})
        return None if not found or name not in found else float(found[name])

    def _record(self, name: str, known: _Known, measured: float | None) -> None:
        if measured is None:
            return
        per_instance = measured / max(1, instance_count(known.config))
        self._instance_mb[name] = per_instance
        self._family_mb[_family(known.config)] = per_instance

    def _expected_mb(self, name: str, config: mc.ModelConfig) -> float:
        """What loading `name` is expected to cost, as booked (GROWTH_MARGIN on top of a measure): its
        own last measure per instance, else one of the same model code's, else the costliest instance
        measured. With nothing measured yet it is FIRST_GUESS_INSTANCE_MB per instance, but never
        more than the whole budget: a guess must not refuse a deployment that may fit; once loaded
        alone, its cost is known."""
        instances = instance_count(config)
        per_instance = self._instance_mb.get(name) or self._family_mb.get(_family(config))
        if per_instance is None and self._instance_mb:
            per_instance = max(self._instance_mb.values())
        if per_instance is None:
            return min(FIRST_GUESS_INSTANCE_MB * instances, self.memory_budget_mb)
        return _booked(per_instance * instances)

    def unload(self, name: str) -> None:
        """Unload `name` now, if this process loaded it (a test module's own deployments, at its end)."""
        with self._name_lock(name):
            with self._cond:
                if self._loaded.pop(name, None) is None:
                    return
                self._cond.notify_all()
            self._unload(name)
            self._wait_gone(name)

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

    def _wait_gone(self, name: str) -> None:
        """Until the server no longer reports `name` ready and, where its processes can be read,
        its stubs have ended: an unload request may return before its instances end, a model is
        no longer ready before its stubs exit, and only then is their memory free (a stub still
        exiting would also be counted in the cost of the name's next load)."""
        deadline = time.monotonic() + UNLOAD_WAIT_S
        while (self._ready(name) or self._measure(name) is not None) and time.monotonic() < deadline:
            time.sleep(run_queue.POLL_S / 5)

    def _ready(self, name: str) -> bool:
        try:
            with self.server.client(timeout_s=10) as client:
                return bool(client.is_model_ready(name))
        except Exception:
            return False

    def _name_lock(self, name: str) -> threading.Lock:
        with self._cond:
            return self._name_locks.setdefault(name, threading.Lock())

    def _reserve(self, name: str, need: int, need_mb: float, on_wait: OnWait | None) -> None:
        """Count `need` stubs and `need_mb` as taken, unloading idle deployments to make room, or
        wait, telling on_wait why."""
        deadline = time.monotonic() + self.capacity_wait_s
        with self._cond:
            # Replacing a model frees its old stubs as the new ones start.
            replaced = self._loaded.pop(name, None)
            while not self._shrink(exclude=name, need=need, need_mb=need_mb):
                left = deadline - time.monotonic()
                never = need > self.budget or need_mb > self.memory_budget_mb
                if left <= 0 or never:
                    if replaced is not None:  # still loaded on the server: keep counting it
                        self._loaded[name] = replaced
                    waited = 0 if never else round(self.capacity_wait_s)
                    if self._in_use_mb() + need_mb > self.memory_budget_mb:
                        raise LabError("memory_full", budget=round(self.memory_budget_mb), in_use=round(self._in_use_mb()),
                                       need=round(need_mb), waited=waited)
                    raise LabError("capacity_full", budget=self.budget, in_use=self._in_use(), need=need, waited=waited)
                if on_wait is not None and self._in_use_mb() + need_mb > self.memory_budget_mb:  # outside the lock: it may draw on a page
                    wait = Wait(0, left, self.memory_budget_mb, self._in_use_mb(), need_mb)
                    self._cond.release()
                    try:
                        on_wait(wait)
                    finally:
                        self._cond.acquire()
                self._cond.wait(min(left, run_queue.POLL_S))
            self._reserved += need
            self._reserved_mb += need_mb

    def _fits(self, need: int, need_mb: float) -> bool:
        return self._in_use() + need <= self.budget and self._in_use_mb() + need_mb <= self.memory_budget_mb

    def _shrink(self, exclude: str, need: int = 0, need_mb: float = 0.0) -> bool:
        """Unload idle deployments until `need` more stubs and `need_mb` more MB fit the budgets;
        whether they do. Called with the lock held; it is let go while the server unloads, so
        other loads can book."""
        while not self._fits(need, need_mb):
            victim = self._idle_victim(exclude=exclude)
            if victim is None:
                return False
            gone = self._loaded.pop(victim)
            self._unloads.append(Unloaded(victim, gone.cost_mb, exclude, time.time()))
            self._unloading.add(victim)
            self._cond.release()
            try:
                self._unload(victim)
                self._wait_gone(victim)
            finally:
                self._cond.acquire()
                self._unloading.discard(victim)
                self._cond.notify_all()
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


def _booked(measured_mb: float) -> float:
    return measured_mb * (1 + GROWTH_MARGIN)


def _family(config: mc.ModelConfig) -> frozenset[str]:
    """What tells one model's code from another's without naming it: its backend and outputs
    (every recogniser deployment answers SYMBOL ... STATE_OWNER, every generator TOKEN ...)."""
    return frozenset([config.backend, *(output.name for output in config.output)])
