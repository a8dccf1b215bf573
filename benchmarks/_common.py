"""Helpers shared by the benchmark scripts (they print figures; they are not tests)."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path


def torch_build() -> str:
    """Which torch a figure ran on, and where the models ran: README's install pulls a CUDA build,
    CI's test venv a CPU one, and the figures differ between them. Every benchmark's header has it."""
    import torch

    from app.lab.deployment import instance_kind

    cuda = torch.cuda.is_available()
    gpu = f" ({torch.cuda.get_device_name(0)})" if cuda else ""
    return (f"torch {torch.__version__}, torch.version.cuda {torch.version.cuda}, "
            f"CUDA available: {'yes' if cuda else 'no'}{gpu}; model instances {instance_kind()}")


def print_build() -> None:
    """The header line every benchmark prints first: torch build, CUDA, instance kind."""
    print(torch_build(), flush=True)


def run_workers(worker, count: int) -> float:
    """Run worker(0) .. worker(count - 1) in threads at once; the wall-clock seconds they took."""
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start


def group_rss_mb(pgid: int) -> float:
    """Resident memory of every process in a process group (server, guardian, stubs), in MB."""
    total_kb = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getpgid(int(entry.name)) != pgid:
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kb += int(line.split()[1])
        except (OSError, ProcessLookupError):
            continue
    return total_kb / 1024


def group_private_mb(pgid: int) -> float:
    """Private memory (USS) of every process in a process group, in MB: unlike RSS, the shared
    libraries every stub maps are not counted once per stub."""
    import psutil

    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getpgid(int(entry.name)) != pgid:
                continue
            total += psutil.Process(int(entry.name)).memory_full_info().uss / 2**20
        except (OSError, ProcessLookupError, psutil.Error):
            continue
    return total


class PeakMemory:
    """Samples a process group's memory in the background and keeps the peaks: resident (RSS,
    summed) and private (USS, summed)."""

    def __init__(self, pgid: int, every_s: float = 0.2):
        self.pgid, self.every_s, self.peak_mb, self.peak_private_mb = pgid, every_s, 0.0, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak_mb = max(self.peak_mb, group_rss_mb(self.pgid))
            self.peak_private_mb = max(self.peak_private_mb, group_private_mb(self.pgid))
            time.sleep(self.every_s)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
