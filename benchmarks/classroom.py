"""A class at once: N simulated learners press Run together on one lab server.

Each learner runs one set-up from a mix (the presets the_mistake, the_fix, oldest_right,
forgot_ready and two custom ones) through the same calls the live lab page makes
(app/ui/lab_page.py: deployer.apply, then driver.run with the server's log verbosity raised).
Every set-up is first run alone; then, for each N, all learners start together (a barrier) and
the script prints:

- each learner's time to result (Run pressed -> result), and p50 / p95 over the class;
- agreement with the solo run of the same set-up: the run's outcome (intact or corrupted), its
  mix of verdicts (how many sessions intact, foreign, garbage, lost, error) and each session's
  verdict one by one (which sessions break can vary between solo runs: forgot_ready does);
- refusals nobody asked for (errors on requests of a set-up whose solo run had none), grouped
  by message;
- peak resident memory of the server's process group (tritonserver, its guardian and the
  Python-backend stubs), sampled every 0.2 s;
- every failure by type, with its message. A failure is reported, never raised.

    python benchmarks/classroom.py [--learners 5 10 20] [--mix the_fix,custom_one_instance,...]

Against TRITON_URL (an external server) memory is not sampled: its processes are not ours.

On `HTTPConnectionClosed: connection closed.` (geventhttpclient), seen in a few earlier runs of
driver_overhead.py and of a ten-learner probe: the request was sent and the connection closed
before any reply, i.e. the server went away. benchmarks/connection_closed.py measures it: Triton
keeps idle HTTP connections open, serves 300 sessions at once with one HTTP thread as with eight,
and killing tritonserver during a run gives exactly that message for every chunk in flight. Ten
runs of driver_overhead.py at a load average of 12 to 18, and 2 x 40 rounds of ten learners at
once (about 76,000 traced requests each, glibc malloc, with and without the run queue), had no
transport failure. The lab never resends such a chunk (it may have run); only a refused
handshake is tried again (app/lab/traffic/transports.py).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from app.lab.deployment import loaded_models
from app.lab.deployment.deployer import Deployer  # noqa: E402
from app.lab.deployment.deployments import LabSettings  # noqa: E402
from app.lab.deployment.presets import PRESETS, Traffic  # noqa: E402
from app.lab.deployment.setup import LabSetup  # noqa: E402
from app.lab.judgement import prediction
from app.lab.observation import server_log
from app.lab.server.connection import LabServer  # noqa: E402
from app.lab.traffic import driver, run_queue  # noqa: E402
from benchmarks._common import PeakMemory, run_workers, torch_build  # noqa: E402

CUSTOM = {
    # one instance, so eight sessions share four slots in turn: intact, with a backlog
    "custom_one_instance": LabSetup(LabSettings(scheduler="direct", instances=1, slots=4, queue_delay_us=0),
                                    Traffic(sessions=8, length=20, seed=11)),
    # the oldest scheduler keyed by correlation ID, with more sessions than candidates
    "custom_oldest_busy": LabSetup(LabSettings(scheduler="oldest", instances=2, slots=2, queue_delay_us=1000,
                                               state_key="corrid"),
                                   Traffic(sessions=10, length=16, think_ms=10.0, seed=23)),
}
DEFAULT_MIX = ("the_mistake", "the_fix", "oldest_right", "forgot_ready", *CUSTOM)


def setup_of(name: str) -> LabSetup:
    return LabSetup.from_preset(name) if name in PRESETS else CUSTOM[name]


@dataclass
class Outcome:
    """One run of one set-up, as the learner would see it, or the failure that stopped it."""

    learner: str
    setup: str
    seconds: float = 0.0
    model: str = ""
    verdicts: tuple[str, ...] = ()
    outcome: str = ""  # "intact" / "corrupted" (prediction.outcome_of), "" when it failed
    refusals: list[str] = field(default_factory=list)  # each refused request's message
    waited: int = 0  # the most runs ahead of it while it queued (driver's on_wait)
    failure: str = ""  # "Type: message" of an exception, "" when the run finished


def press_run(server, deployer, learner: str, name: str) -> Outcome:
    """What the lab page's Run does (lab_page._run), timed from the press to the result."""
    setup = setup_of(name)
    out = Outcome(learner, name)
    start = time.perf_counter()
    try:
        setup.scenario("check").validate()
        applied = deployer.apply(setup.settings, owner=learner)
        scenario = setup.scenario(applied.model)
        out.model = applied.model

        def on_wait(wait) -> None:
            out.waited = max(out.waited, wait.position)

        with server_log.raised_verbosity(server, 1):
            result = driver.run(server, scenario, progress=lambda done, total: None, on_wait=on_wait)
        out.verdicts = tuple(result.sessions.sort_values("session")["verdict"])
        out.outcome = prediction.outcome_of(result.sessions)
        out.refusals = [e for e in result.requests["error"] if e]
    except Exception as err:  # reported, never raised: a benchmark counts failures
        out.failure = f"{type(err).__name__}: {err}"
        if os.environ.get("CLASSROOM_TRACEBACKS"):
            traceback.print_exc()
    out.seconds = time.perf_counter() - start
    return out


def class_run(server, deployer, mix: list[str], learners: int) -> tuple[list[Outcome], float]:
    """All learners press Run at the same moment; their outcomes and the wall-clock seconds."""
    barrier = threading.Barrier(learners)
    outcomes: list[Outcome | None] = [None] * learners

    def learner(i: int) -> None:
        name = f"learner-{i:02d}"
        with contextlib.suppress(threading.BrokenBarrierError):  # start anyway: the figures show it
            barrier.wait(timeout=120)
        outcomes[i] = press_run(server, deployer, name, mix[i % len(mix)])

    wall = run_workers(learner, learners)
    return [o for o in outcomes if o is not None], wall


def report(learners: int, outcomes: list[Outcome], solo: dict[str, Outcome], wall: float, peak_mb: float | None) -> dict:
    """Print one class's figures; return them for the summary table."""
    print(f"\n== {learners} learners at once (wall {wall:.1f} s) ==")
    for o in sorted(outcomes, key=lambda o: o.learner):
        alone = solo.get(o.setup)
        same = alone is not None and not alone.failure and not o.failure and o.verdicts == alone.verdicts
        mix = alone is not None and Counter(o.verdicts) == Counter(alone.verdicts)
        agreement = "= solo" if same else "same mix as solo" if mix else f"DIFFER from solo: {dict(Counter(o.verdicts))}"
        state = o.failure or f"{o.outcome}, verdicts {agreement}"
        print(f"  {o.learner} {o.setup:<20} {o.seconds:6.2f} s  waited behind {o.waited:2d}  {state}")
    finished = [o for o in outcomes if not o.failure]
    times = [o.seconds for o in finished]
    # Nearest rank (inverted_cdf): a time some learner really waited, not an interpolation.
    p50 = float(np.percentile(times, 50, method="inverted_cdf")) if times else float("nan")
    p95 = float(np.percentile(times, 95, method="inverted_cdf")) if times else float("nan")
    sessions_same = sessions_total = runs_same = mixes_same = 0
    for o in finished:
        alone = solo[o.setup]
        if alone.failure:
            continue
        sessions_total += len(alone.verdicts)
        sessions_same += sum(a == b for a, b in zip(o.verdicts, alone.verdicts, strict=True)) if len(o.verdicts) == len(alone.verdicts) else 0
        runs_same += o.outcome == alone.outcome
        mixes_same += Counter(o.verdicts) == Counter(alone.verdicts)
    unasked = Counter(msg for o in finished if not solo[o.setup].refusals for msg in o.refusals)
    failures = Counter(o.failure for o in outcomes if o.failure)
    print(f"  time to result: p50 {p50:.2f} s, p95 {p95:.2f} s over {len(times)} finished runs of {learners}")
    if sessions_total:
        print(f"  agreement with solo: run outcomes {runs_same}/{len(finished)}, verdict mixes {mixes_same}/{len(finished)}, "
              f"sessions one by one {sessions_same}/{sessions_total} ({100 * sessions_same / sessions_total:.1f} %)")
    print(f"  refusals not asked for: {sum(unasked.values())}")
    for msg, n in unasked.most_common():
        print(f"    {n} x {msg}")
    print(f"  runs that failed: {sum(failures.values())}")
    for msg, n in failures.most_common():
        print(f"    {n} x {msg}")
    if peak_mb is not None:
        print(f"  peak memory of the server's process group: {peak_mb:.0f} MB")
    return {"learners": learners, "p50": p50, "p95": p95, "finished": len(times),
            "sessions": (sessions_same, sessions_total), "runs": (runs_same, len(finished)),
            "mixes": (mixes_same, len(finished)),
            "unasked": sum(unasked.values()), "failed": sum(failures.values()), "peak_mb": peak_mb}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, nargs="+", default=[5, 10, 20])
    parser.add_argument("--solo-repeats", type=int, default=3,
                        help="runs of each set-up alone; the first is the reference, the others say how much a "
                             "set-up varies with nobody else on the server")
    parser.add_argument("--mix", default=",".join(DEFAULT_MIX),
                        help=f"comma-separated set-ups, dealt to learners in turn (choices: {', '.join(DEFAULT_MIX)})")
    args = parser.parse_args()
    mix = [m.strip() for m in args.mix.split(",") if m.strip()]
    unknown = [m for m in mix if m not in PRESETS and m not in CUSTOM]
    if unknown:
        parser.error(f"unknown set-ups {unknown}; choose from {', '.join(DEFAULT_MIX)}")

    print(torch_build())
    print(f"{os.cpu_count()} CPU cores; runs at once (TRITON_LAB_PARALLEL_RUNS) {run_queue.default_parallel()}, "
          f"stub budget (TRITON_LAB_MAX_STUBS) {loaded_models.default_budget()}")
    server = LabServer.from_env()
    start = time.perf_counter()
    try:
        server.start()
    except Exception as err:
        print(f"the server did not start: {type(err).__name__}: {err}")
        return
    print(f"server ready in {time.perf_counter() - start:.1f} s ({'embedded' if server.is_embedded else server.url})")
    deployer = Deployer(server)
    pgid = server.embedded.pid if server.is_embedded and server.embedded is not None else None
    summary = []
    try:
        print("\n== each set-up alone ==")
        solo = {}
        for name in dict.fromkeys(mix):
            press_run(server, deployer, "solo", name)  # loads the deployment: its first run is not the solo figure
            solo[name] = alone = press_run(server, deployer, "solo", name)
            again = [press_run(server, deployer, "solo", name) for _ in range(max(0, args.solo_repeats - 1))]
            same = sum(not a.failure and a.verdicts == alone.verdicts for a in again)
            print(f"  {name:<20} {alone.seconds:6.2f} s  {alone.failure or alone.outcome}  "
                  f"verdicts {dict(Counter(alone.verdicts))}  refusals {len(alone.refusals)}  "
                  f"later solo runs with the same verdicts: {same}/{len(again)}")
            for other in again:
                if other.verdicts != alone.verdicts:
                    print(f"    a later solo run: {other.failure or dict(Counter(other.verdicts))}")
            for msg, n in Counter(alone.refusals).most_common():
                print(f"    {n} x {msg}")
        for learners in args.learners:
            if pgid is not None:
                with PeakMemory(pgid) as peak:
                    outcomes, wall = class_run(server, deployer, mix, learners)
                peak_mb = peak.peak_mb
            else:
                outcomes, wall = class_run(server, deployer, mix, learners)
                peak_mb = None
            summary.append(report(learners, outcomes, solo, wall, peak_mb))
            if not server.alive():
                print("  the server is no longer alive: stopping here")
                break
    except Exception as err:  # a benchmark reports, it does not crash
        print(f"the benchmark stopped early: {type(err).__name__}: {err}")
        traceback.print_exc()
    finally:
        server.stop()

    if summary:
        print("\n| learners | p50 time to result | p95 time to result | run outcomes as solo | verdict mixes as solo "
              "| sessions as solo | refusals not asked for | failed runs | peak server memory |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for row in summary:
            (s, st), (r, rt), (m, mt) = row["sessions"], row["runs"], row["mixes"]
            memory = f"{row['peak_mb'] / 1024:.1f} GB" if row["peak_mb"] is not None else "n/a"
            share = f"{100 * s / st:.0f} % ({s}/{st})" if st else "n/a"
            print(f"| {row['learners']} | {row['p50']:.1f} s | {row['p95']:.1f} s | {r}/{rt} | {m}/{mt} | {share} | "
                  f"{row['unasked']} | {row['failed']} | {memory} |")


if __name__ == "__main__":
    main()
