"""What the embedded server's processes hold in memory, per model: tritonserver and one Python
backend stub per model instance.

Private memory (USS) is what a process would give back if it ended: the figure a budget adds up.
Resident memory (RSS) also counts the shared libraries every stub maps; the kernel keeps one copy of
those, so summing RSS over stubs overstates what they cost together.

psutil is imported where it is used: the checker, installed alone (packaging/checker), imports this
package for its server handle and never measures.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

MB = 2**20
STUB_EXECUTABLE = "triton_python_backend_stub"
_INSTANCE_SUFFIX = re.compile(r"_\d+_\d+$")  # <model>_<group index>_<instance index>, unless a group is named


@dataclass(frozen=True)
class ProcessMemory:
    pid: int
    model: str | None  # None for tritonserver itself (or any process that is no stub)
    private_mb: float
    resident_mb: float
    started: float = 0.0  # when the process started (seconds since the epoch)


def model_of_stub(argv: list[str], names: Iterable[str] = ()) -> str | None:
    """The model a stub serves, from its command line. Seen on the embedded 2.51: the first argument
    is the model's file and the eighth the instance's name, "<model>_<group>_<index>" when the
    config names no instance group. The longest known name the instance's name starts with wins
    (a model's name may hold "_"), its own name read from the instance (model_of_instance) among
    them: a stub of a copy unloaded but still ending (kv_engine__check1_ab12_0_0) is the copy's,
    never kv_engine's. Else the folder two above the model's file (<repository>/<model>/<version>/model.py)."""
    if not argv or Path(argv[0]).name != STUB_EXECUTABLE or len(argv) < 2:
        return None
    instance = argv[8] if len(argv) > 8 else ""
    own = model_of_instance(argv)
    candidates = [*names, *([own] if own and own != instance else [])]
    matches = [name for name in candidates if instance.startswith(name + "_")]
    if matches:
        return max(matches, key=len)
    return Path(argv[1]).parents[1].name


def model_of_instance(argv: list[str]) -> str | None:
    """The model a stub serves, read from its instance's name alone (<model>_<group>_<index>, the
    eighth argument), where no list of known names is at hand: a model loaded from files sits in a
    temporary folder, so its path names no model. None for a process that is no stub."""
    if not argv or Path(argv[0]).name != STUB_EXECUTABLE or len(argv) < 9:
        return None
    return _INSTANCE_SUFFIX.sub("", argv[8]) or None


def processes(root_pid: int, names: Iterable[str] = ()) -> list[ProcessMemory]:
    """The server's process tree from `root_pid` down (the guardian or tritonserver), measured now.
    A process that ends while it is read is left out."""
    import psutil

    known = list(names)
    try:
        root = psutil.Process(root_pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.Error:
        return []
    found = []
    for process in tree:
        try:
            memory = process.memory_full_info()
            argv = process.cmdline()
        except psutil.Error:  # ended, or a zombie a load left behind: it holds nothing
            continue
        found.append(ProcessMemory(process.pid, model_of_stub(argv, known), memory.uss / MB, memory.rss / MB,
                                   process.create_time()))
    return found


def by_model(found: list[ProcessMemory], newest: dict[str, int] | None = None) -> dict[str, tuple[float, float, int]]:
    """Model name -> (private MB, resident MB, stubs), over the stubs in `found`; for a name in
    `newest`, over only that many of its most recently started stubs (a model loaded again right
    after an unload may still have the old stubs exiting)."""
    totals: dict[str, tuple[float, float, int]] = {}
    kept = sorted(found, key=lambda process: process.started, reverse=True)
    seen: dict[str, int] = {}
    for process in kept:
        if process.model is not None and newest is not None and process.model in newest:
            seen[process.model] = seen.get(process.model, 0) + 1
            if seen[process.model] > newest[process.model]:
                continue
        if process.model is None:
            continue
        private, resident, stubs = totals.get(process.model, (0.0, 0.0, 0))
        totals[process.model] = (private + process.private_mb, resident + process.resident_mb, stubs + 1)
    return totals


def machine_total_mb() -> float:
    import psutil

    return float(psutil.virtual_memory().total) / MB


def machine_used_mb() -> float:
    """What the machine's processes hold: total less what is available (page cache that can be
    dropped counts as available)."""
    import psutil

    memory = psutil.virtual_memory()
    return float(memory.total - memory.available) / MB
