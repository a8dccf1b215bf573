"""The memory a command's run peaks at: the test suite by default, or any command given after `--`.

Samples every --every seconds, while the command runs: the whole machine's memory in use (total
less available), and the command's own process tree, with its tritonserver processes and Python
backend stubs apart (their count and private memory). Prints the torch build first, then each peak
and when it came, the command's exit status and its time. On a machine other work shares, the
machine's figure counts that work too; the tree's figures are the command's alone.

    python benchmarks/suite_memory.py                       # README's suite: python -m pytest
    python benchmarks/suite_memory.py -- python -m pytest -n0 tests/lab/test_loaded_models.py
    python benchmarks/suite_memory.py --every 5 -- bash -c "..."   # any command
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.lab import shared_memory  # noqa: E402
from app.lab.server import memory  # noqa: E402
from benchmarks._common import print_build  # noqa: E402


@dataclass
class Peak:
    value: float = 0.0
    at_s: float = 0.0
    count: int = 0  # stubs (or servers) at that moment

    def offer(self, value: float, at_s: float, count: int = 0) -> None:
        if value > self.value:
            self.value, self.at_s, self.count = value, at_s, count


@dataclass
class Peaks:
    machine: Peak
    tree: Peak  # private memory of the whole process tree
    stubs: Peak  # private memory of the tree's stubs
    servers: Peak  # private memory of the tree's tritonservers
    most_stubs: Peak  # the largest number of stubs at once
    # at the stubs' private-memory peak: model -> (stubs, private MB), to say which models held it
    by_model: dict[str, tuple[int, float]] = field(default_factory=dict)
    # at the machine's peak: kind of process -> (processes, private MB), and the shared memory in use
    # (the stubs' shared-memory regions and PostgreSQL's buffers count there, in no process's private)
    by_kind: dict[str, tuple[int, float]] = field(default_factory=dict)
    shared_mb: float = 0.0
    largest: list[tuple[float, str]] = field(default_factory=list)  # (private MB, command), the five largest then


# What a process is, read from its name (the kernel cuts names at 15 characters); anything else is "other".
KINDS = (("stubs", memory.STUB_EXECUTABLE[:15]), ("tritonservers", "tritonserver"), ("python", "python"),
         ("chromium", "chrom"), ("chromium", "headless_shell"), ("postgres", "postgres"), ("nginx", "nginx"),
         ("node", "node"), ("streamlit", "streamlit"))


def _command(process: psutil.Process, width: int = 90) -> str:
    try:
        return " ".join(process.cmdline())[:width] or process.name()
    except psutil.Error:
        return "?"


def _kind(name: str) -> str:
    return next((kind for kind, prefix in KINDS if name.startswith(prefix)), "other")


def _family(argv: list[str]) -> str:
    """The model a stub serves (memory.model_of_instance); a test's or the checker's copy counts with
    its original (name__check1_ab12 -> name)."""
    model = memory.model_of_instance(argv) or memory.model_of_stub(argv) or "?"
    return model.split("__", 1)[0]


def sample(root: psutil.Process, started: float, peaks: Peaks) -> None:
    at = time.monotonic() - started
    machine_used = memory.machine_used_mb()
    try:
        tree = [root, *root.children(recursive=True)]
    except psutil.Error:
        return
    total = stubs = servers = 0.0
    n_stubs = n_servers = 0
    count: Counter[str] = Counter()
    held: defaultdict[str, float] = defaultdict(float)
    kinds: Counter[str] = Counter()
    kind_mb: defaultdict[str, float] = defaultdict(float)
    sizes: list[tuple[float, psutil.Process]] = []
    for process in tree:
        try:
            private = process.memory_full_info().uss / memory.MB
            name = process.name()
            argv = process.cmdline() if name.startswith(memory.STUB_EXECUTABLE[:15]) else []
        except psutil.Error:  # ended while it was read
            continue
        total += private
        sizes.append((private, process))
        kinds[_kind(name)] += 1
        kind_mb[_kind(name)] += private
        if name.startswith(memory.STUB_EXECUTABLE[:15]):  # the kernel cuts names at 15 characters
            stubs, n_stubs = stubs + private, n_stubs + 1
            model = _family(argv)
            count[model] += 1
            held[model] += private
        elif name == "tritonserver":
            servers, n_servers = servers + private, n_servers + 1
    if machine_used > peaks.machine.value:
        peaks.by_kind = {k: (kinds[k], kind_mb[k]) for k in kinds}
        peaks.shared_mb = psutil.virtual_memory().shared / memory.MB
        peaks.largest = [(mb, _command(p)) for mb, p in sorted(sizes, key=lambda item: -item[0])[:5]]
    peaks.machine.offer(machine_used, at)
    peaks.tree.offer(total, at, len(tree))
    if stubs > peaks.stubs.value:
        peaks.by_model = {m: (count[m], held[m]) for m in count}
    peaks.stubs.offer(stubs, at, n_stubs)
    peaks.servers.offer(servers, at, n_servers)
    peaks.most_stubs.offer(float(n_stubs), at, n_stubs)


def _left_behind(since: float) -> str:
    """The stub regions created since `since` (wall clock) and still there: a killed server's, or a
    stub's, unless whoever saw it end removed them (app/lab/shared_memory.py)."""
    left = [p for p in shared_memory.SHM_DIR.glob("triton*") if p.stat().st_mtime >= since] if shared_memory.SHM_DIR.is_dir() else []
    return f"{len(left)} shared-memory regions, {sum(p.stat().st_size for p in left) / memory.MB:.0f} MB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=float, default=2.0, help="seconds between samples")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="after --: the command (default: python -m pytest)")
    args = parser.parse_args()
    command = [c for c in args.command if c != "--"] or [sys.executable, "-m", "pytest"]
    print_build()
    print(f"machine memory {memory.machine_total_mb():.0f} MB, {psutil.cpu_count()} CPUs; "
          f"in use before: {memory.machine_used_mb():.0f} MB; sampling every {args.every:g} s", flush=True)
    peaks = Peaks(Peak(), Peak(), Peak(), Peak(), Peak())
    started, started_at = time.monotonic(), time.time()
    child = subprocess.Popen(command)
    root = psutil.Process(child.pid)
    stop = threading.Event()

    def sampler() -> None:
        while not stop.is_set():
            sample(root, started, peaks)
            stop.wait(args.every)

    thread = threading.Thread(target=sampler, daemon=True)
    thread.start()
    try:
        status = child.wait()
    finally:
        stop.set()
        thread.join()
    wall = time.monotonic() - started
    print(f"command: {' '.join(command)}")
    print(f"exit status {status}; {wall:.0f} s")
    print(f"peak, whole machine in use: {peaks.machine.value:.0f} MB at {peaks.machine.at_s:.0f} s")
    kinds = sorted(peaks.by_kind.items(), key=lambda item: -item[1][1])
    print("at the machine's peak, the command's processes by kind (processes, private MB): "
          + ", ".join(f"{k} {n} {mb:.0f}" for k, (n, mb) in kinds) + f"; shared memory in use {peaks.shared_mb:.0f} MB")
    for mb, line in peaks.largest:
        print(f"  {mb:6.0f} MB  {line}")
    print(f"peak, the command's processes (private): {peaks.tree.value:.0f} MB at {peaks.tree.at_s:.0f} s "
          f"({peaks.tree.count} processes)")
    print(f"peak, its Python-backend stubs (private): {peaks.stubs.value:.0f} MB at {peaks.stubs.at_s:.0f} s "
          f"({peaks.stubs.count} stubs); most stubs at once: {peaks.most_stubs.count}")
    print(f"peak, its tritonservers (private): {peaks.servers.value:.0f} MB ({peaks.servers.count} servers)")
    print(f"left behind in {shared_memory.SHM_DIR}: {_left_behind(started_at)}")
    heaviest = sorted(peaks.by_model.items(), key=lambda item: -item[1][1])[:12]
    print("at the stubs' peak, by model (stubs, private MB): " + ", ".join(f"{m} {n} {mb:.0f}" for m, (n, mb) in heaviest))
    return status


if __name__ == "__main__":
    sys.exit(main())
