"""Where the test suite's time goes: run pytest (the whole suite, or the arguments given) while
sampling every process on the machine, then print the wall time, the CPU seconds each kind of
process used (Chromium, Python-backend stubs, the pytest workers, streamlit, tritonserver, ...),
how many stubs were started and for which models, and the slowest test files by JUnit time.

The suite is CPU-bound on a two-core machine, so its wall time is about its CPU seconds over the
cores: this says which processes to make cheaper. Processes that live under one sampling interval
(0.5 s) are missed; their CPU is small. Linux only (/proc).

    .venv/bin/python benchmarks/suite_profile.py                      # the whole suite
    .venv/bin/python benchmarks/suite_profile.py -- tests/e2e -n0     # pytest arguments after --
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks._common import print_build  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
EVERY_S = 0.5
# (kind, a pattern of the command line): the first that matches names a process.
KINDS = (
    ("python-backend stub", re.compile(r"triton_python_backend_stub")),
    # The guardian's command line holds the server's, so it is named before the server.
    ("server guardian", re.compile(r"-m app\.lab\.guardian")),
    ("tritonserver", re.compile(r"tritonserver")),
    # Chromium by process type: the renderers run the pages, the others drive and paint them.
    ("chromium renderer", re.compile(r"chromium.*--type=renderer")),
    ("chromium gpu", re.compile(r"chromium.*--type=gpu")),
    ("chromium utility", re.compile(r"chromium.*--type=utility")),
    ("chromium zygote", re.compile(r"chromium.*--type=zygote")),
    ("chromium", re.compile(r"chromium")),
    ("playwright driver", re.compile(r"playwright/driver")),
    ("streamlit app", re.compile(r"streamlit run")),
    ("pytest-xdist worker", re.compile(r"-c import sys;exec\(eval\(sys\.stdin\.readline\(\)\)\)")),
    ("pytest", re.compile(r"-m pytest")),
    ("multiprocessing child", re.compile(r"multiprocessing")),
    ("postgres", re.compile(r"postgres")),
    ("nginx", re.compile(r"nginx")),
    ("batching-lab CLI", re.compile(r"batching-lab|-m app\b")),
)
# Among a stub's arguments is its instance's name, <model>_<group index>_<instance index>.
STUB_INSTANCE = re.compile(r"\s(\S+)_\d+_\d+(?=\s|$)")
# Deployments the lab names by their settings' hash: one family per prefix.
HASHED = re.compile(r"_[0-9a-f]{6,}$")


def kind_of(command: str) -> str:
    return next((kind for kind, pattern in KINDS if pattern.search(command)), "other")


class Sampler(threading.Thread):
    """Every process's CPU seconds (user + system), keyed by (pid, start time), sampled until stop."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.since_ticks = uptime_ticks()  # /proc/<pid>/stat's start time is in ticks since boot
        self.seen: dict[tuple[int, int], list] = {}  # key -> [command, cpu at first sight, cpu last seen]
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            self.sample()
            self.stopped.wait(EVERY_S)
        self.sample()

    def sample(self) -> None:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                fields = stat[stat.rindex(")") + 2:].split()
                cpu = (int(fields[11]) + int(fields[12])) / TICK
                key = (int(entry), int(fields[19]))
                if key in self.seen:
                    self.seen[key][2] = cpu
                else:
                    command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                    # A process running before the suite counts only what it used since.
                    first = 0.0 if key[1] >= self.since_ticks else cpu
                    self.seen[key] = [command, first, cpu]
            except (OSError, ValueError, IndexError):
                continue  # gone between listing and reading


def calibration_s() -> float:
    """CPU seconds of a fixed pure-Python loop, the best of three: the same machine was seen to run
    it a third slower or faster from one run to the next, so wall and CPU figures of two runs
    compare only next to it."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        sum(i * i for i in range(6_000_000))
        best = min(best, time.process_time() - started)
    return best


def uptime_ticks() -> int:
    return int(float(Path("/proc/uptime").read_text().split()[0]) * TICK)


def junit_files(path: Path) -> list[tuple[str, float, int]]:
    """(test module, summed seconds, tests) from a JUnit XML file, slowest first."""
    seconds: collections.Counter[str] = collections.Counter()
    count: collections.Counter[str] = collections.Counter()
    for case in ET.parse(path).getroot().iter("testcase"):
        module = ".".join(p for p in (case.get("classname") or "").split(".") if p and not p[0].isupper())
        seconds[module] += float(case.get("time") or 0)
        count[module] += 1
    return [(m, s, count[m]) for m, s in seconds.most_common()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=15, help="how many stub models and test files to list")
    parser.add_argument("pytest_args", nargs="*", help="arguments for pytest (after --)")
    args = parser.parse_args()
    print_build()
    print(f"cores: {os.cpu_count()}; pytest {' '.join(args.pytest_args) or '(the whole suite)'}", flush=True)

    before = calibration_s()
    with tempfile.TemporaryDirectory(prefix="suite-profile-") as folder:
        junit = Path(folder) / "junit.xml"
        sampler = Sampler()
        sampler.start()
        started = time.monotonic()
        rc = subprocess.call([sys.executable, "-m", "pytest", "-q", f"--junitxml={junit}", *args.pytest_args], cwd=REPO)
        wall = time.monotonic() - started
        sampler.stopped.set()
        sampler.join()
        files = junit_files(junit) if junit.exists() else []
    after = calibration_s()

    own = os.getpid()
    by_kind: collections.Counter[str] = collections.Counter()
    processes: collections.Counter[str] = collections.Counter()
    stub_loads: collections.Counter[str] = collections.Counter()
    stub_cpu: collections.Counter[str] = collections.Counter()
    others: collections.Counter[str] = collections.Counter()  # what "other" is, by the start of its command
    for (pid, _), (command, first, last) in sampler.seen.items():
        if pid == own or not command:
            continue  # this script, and kernel threads (no command line)
        kind = kind_of(command)
        used = last - first
        by_kind[kind] += used
        processes[kind] += 1
        if kind == "other":
            others[command[:100]] += used
        if kind == "python-backend stub":
            names = STUB_INSTANCE.findall(command)
            model = HASHED.sub("_*", names[-1]) if names else "?"
            stub_loads[model] += 1
            stub_cpu[model] += used
    total = sum(by_kind.values())
    cores = os.cpu_count() or 1
    print(f"\npytest exit {rc}; wall {wall:.0f} s; CPU {total:.0f} s over {cores} cores "
          f"({100 * total / (wall * cores):.0f} % of what the cores could give)")
    print(f"machine speed: a fixed loop took {before:.2f} s of CPU before the suite and {after:.2f} s after")
    print("\nCPU seconds by process kind (processes seen):")
    for kind, used in by_kind.most_common():
        print(f"  {used:8.1f} s  {100 * used / total:5.1f} %  {processes[kind]:5d}  {kind}")
    print(f"\nPython-backend stubs: {sum(stub_loads.values())} started, {sum(stub_cpu.values()):.0f} s CPU; "
          f"by model (a lab deployment's settings hash is *):")
    for model, loads in stub_loads.most_common(args.top):
        print(f"  {loads:4d} stubs  {stub_cpu[model]:7.1f} s  {model}")
    if others:
        print("\nthe busiest processes of no kind above:")
        for command, used in others.most_common(min(args.top, 10)):
            print(f"  {used:7.1f} s  {command}")
    if files:
        print(f"\nslowest test modules by JUnit time (summed over workers: {sum(s for _, s, _ in files):.0f} s):")
        for module, seconds, tests in files[:args.top]:
            print(f"  {seconds:7.1f} s  {tests:4d} tests  {module}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
