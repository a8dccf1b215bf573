"""A class at once: N simulated learners press Run together on one lab server.

Each learner runs one set-up from a mix (the presets the_mistake, the_fix, oldest_right,
forgot_ready and two custom ones) through the same calls the live lab page makes
(app/views/lab.py: deployer.apply, then driver.run with the server's log verbosity raised).
Every set-up is first run alone; then, for each N, all learners start together (a barrier) and
the script prints:

- each learner's time to result (Run pressed -> result), and p50 / p95 over the class;
- agreement with the solo run of the same set-up: the run's outcome (intact or corrupted), its
  mix of verdicts (how many sessions intact, foreign, garbage, lost, error) and each session's
  verdict one by one (which sessions break can vary between solo runs: forgot_ready does);
- refusals nobody asked for (errors on requests of a set-up whose solo run had none), grouped
  by message;
- peak memory of the server's process group (tritonserver, its guardian and the Python-backend
  stubs), resident (RSS summed, which counts shared libraries once per stub) and private (USS
  summed), sampled every 0.2 s; the memory budget, and how many deployments it unloaded;
- every failure by type, with its message. A failure is reported, never raised.

    python benchmarks/classroom.py [--learners 5 10 20] [--mix the_fix,custom_one_instance,...]

With `--replicas [R ...]` (default 1 3; learners then default to 20 40) the class runs on R app
replicas instead of one process: the script starts one Triton (embedded, or TRITON_URL) and one
PostgreSQL (tests/postgres.py's PostgresServer: Debian's server, `apt-get install -y postgresql`)
and, for each R and N, R worker processes, each one replica (TRITON_URL at that Triton,
TRITON_LAB_DATABASE_URL at that database, a data folder of its own), dealt the learners in turn.
The workers start, report ready, and all press Run when the script says go; after their result
each learner votes in a poll the script opened through app.quiz.votes. Besides the figures
above it prints the votes the poll counted against the votes the learners were told were
stored, and the class database's statements per run (a SQLAlchemy before_cursor_execute
listener on each replica's engine: those of the runs' own threads, and those of other threads,
the lease heartbeats, divided by the runs). The set-ups alone run first, in one worker.

    python benchmarks/classroom.py --replicas [1 3] [--learners 20 40]

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
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from app.lab.deployment import Deployer, LabSettings, loaded_models  # noqa: E402
from app.lab.observation import server_log
from app.lab.records import Traffic  # noqa: E402
from app.lab.server import LabServer  # noqa: E402
from app.lab.traffic import run_queue  # noqa: E402
from app.recogniser.engine import driver
from app.recogniser.engine.judgement import prediction
from app.recogniser.engine.presets import PRESETS
from app.recogniser.engine.setup import LabSetup
from benchmarks._common import PeakMemory, run_workers, torch_build  # noqa: E402

CUSTOM = {
    # one instance, so eight sessions share four slots in turn: intact, with a backlog
    "custom_one_instance": LabSetup(LabSettings(scheduler="direct", instances=1, slots=4, queue_delay_us=0),
                                    Traffic(sessions=8, chunks=20, seed=11)),
    # the oldest scheduler keyed by correlation ID, with more sessions than candidates
    "custom_oldest_busy": LabSetup(LabSettings(scheduler="oldest", instances=2, slots=2, queue_delay_us=1000,
                                               state_key="corrid"),
                                   Traffic(sessions=10, chunks=16, think_ms=10.0, seed=23)),
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
    """What the lab page's Run does (app/views/lab.py's _run), timed from the press to the result."""
    setup = setup_of(name)
    out = Outcome(learner, name)
    start = time.perf_counter()
    try:
        setup.scenario("check").validate()
        applied = deployer.apply(setup.settings)
        scenario = setup.scenario(applied.model)
        out.model = applied.model

        def on_wait(wait) -> None:
            out.waited = max(out.waited, wait.position)

        with server_log.raised_verbosity(server, 1):
            result = driver.run(server, scenario, progress=lambda done, total, stage: None, on_wait=on_wait)
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


def print_solo(name: str, alone: Outcome, again: list[Outcome]) -> None:
    """One set-up's solo run, and whether later solo runs gave the same verdicts."""
    same = sum(not a.failure and a.verdicts == alone.verdicts for a in again)
    print(f"  {name:<20} {alone.seconds:6.2f} s  {alone.failure or alone.outcome}  "
          f"verdicts {dict(Counter(alone.verdicts))}  refusals {len(alone.refusals)}  "
          f"later solo runs with the same verdicts: {same}/{len(again)}")
    for other in again:
        if other.verdicts != alone.verdicts:
            print(f"    a later solo run: {other.failure or dict(Counter(other.verdicts))}")
    for msg, n in Counter(alone.refusals).most_common():
        print(f"    {n} x {msg}")


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
    parser.add_argument("--learners", type=int, nargs="+", default=None,
                        help="class sizes (default 5 10 20; with --replicas 20 40)")
    parser.add_argument("--replicas", type=int, nargs="*", default=None, metavar="R",
                        help="run each class on R app replica processes sharing one PostgreSQL (default 1 3)")
    parser.add_argument(WORKER_FLAG, action="store_true", help=argparse.SUPPRESS)  # one replica, started by this script
    parser.add_argument("--solo-repeats", type=int, default=3,
                        help="runs of each set-up alone; the first is the reference, the others say how much a "
                             "set-up varies with nobody else on the server")
    parser.add_argument("--mix", default=",".join(DEFAULT_MIX),
                        help=f"comma-separated set-ups, dealt to learners in turn (choices: {', '.join(DEFAULT_MIX)})")
    args = parser.parse_args()
    if args.replica_worker:
        replica_worker()
        return
    mix = [m.strip() for m in args.mix.split(",") if m.strip()]
    unknown = [m for m in mix if m not in PRESETS and m not in CUSTOM]
    if unknown:
        parser.error(f"unknown set-ups {unknown}; choose from {', '.join(DEFAULT_MIX)}")
    if args.replicas is not None:
        replicas = args.replicas or [1, 3]
        if min(replicas) < 1:
            parser.error("--replicas takes counts of 1 or more")
        replicas_main(replicas, args.learners or [20, 40], mix, args.solo_repeats)
        return
    args.learners = args.learners or [5, 10, 20]

    print(torch_build())
    print(f"{os.cpu_count()} CPU cores; runs at once (TRITON_LAB_PARALLEL_RUNS) {run_queue.default_parallel()}, "
          f"stub budget (TRITON_LAB_MAX_STUBS) {loaded_models.default_budget()}, "
          f"memory budget (TRITON_LAB_MEMORY_MB) {loaded_models.default_memory_budget_mb()} MB")
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
            print_solo(name, alone, [press_run(server, deployer, "solo", name) for _ in range(max(0, args.solo_repeats - 1))])
        for learners in args.learners:
            if pgid is not None:
                with PeakMemory(pgid) as peak:
                    outcomes, wall = class_run(server, deployer, mix, learners)
                peak_mb = peak.peak_mb
                print(f"  peak private memory of the server's process group: {peak.peak_private_mb:.0f} MB; "
                      f"deployments unloaded to make room so far: {len(server.models.memory().unloaded)}")
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


# -- replicas: N learners over R app processes, one Triton, one PostgreSQL ---------------------

WORKER_FLAG = "--replica-worker"
SPEC_ENV = "CLASSROOM_WORKER_SPEC"  # what a worker is to do, as JSON
READY, GO, RESULT = "CLASSROOM-READY", "CLASSROOM-GO", "CLASSROOM-RESULT "
POLL_DEMO = "state_key"


class StatementCounter:
    """A before_cursor_execute listener: statements sent to the database, by what the sending
    thread was doing ("run", "vote"; anything else, such as the lease heartbeats, "other")."""

    def __init__(self) -> None:
        self.counts: Counter = Counter()
        self._lock = threading.Lock()
        self._local = threading.local()

    def __call__(self, conn, cursor, statement, parameters, context, executemany) -> None:
        label = getattr(self._local, "label", None) or "other"
        with self._lock:
            self.counts[label] += 1

    @contextlib.contextmanager
    def labelled(self, label: str) -> Iterator[None]:
        before = getattr(self._local, "label", None)
        self._local.label = label
        try:
            yield
        finally:
            self._local.label = before

    def reset(self) -> None:
        with self._lock:
            self.counts.clear()


def _emit(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def replica_worker() -> None:
    """One replica: this process's LabServer on TRITON_URL and the class database of
    TRITON_LAB_DATABASE_URL, as an app process has them; what it did goes back as one JSON line."""
    from sqlalchemy import event

    from app.lab import database
    from app.quiz import votes

    spec = json.loads(os.environ[SPEC_ENV])
    url = database.class_database_url()
    engine = database.engine_for(url)  # the schema is brought up here, before anything is counted
    counter = StatementCounter()
    event.listen(engine, "before_cursor_execute", counter)
    server = LabServer.from_env()
    server.start()  # an external server: connects, starts nothing
    deployer = Deployer(server)

    if spec["mode"] == "solo":
        solo = {}
        for name in spec["mix"]:
            press_run(server, deployer, "solo", name)  # loads the deployment: its first run is not the solo figure
            alone = press_run(server, deployer, "solo", name)
            again = [press_run(server, deployer, "solo", name) for _ in range(max(0, spec["repeats"] - 1))]
            solo[name] = {"alone": asdict(alone), "again": [asdict(a) for a in again]}
        _emit(RESULT + json.dumps({"solo": solo}))
        return

    learners = spec["learners"]  # [[learner, set-up, option], ...]
    barrier = threading.Barrier(len(learners))
    outcomes: list[dict | None] = [None] * len(learners)
    voted = [False] * len(learners)
    vote_failures: list[str] = []
    store = votes.store()
    _emit(READY)
    if sys.stdin.readline().strip() != GO:
        return
    counter.reset()

    def learner(i: int) -> None:
        name, setup, option = learners[i]
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait(timeout=120)
        with counter.labelled("run"):
            outcomes[i] = asdict(press_run(server, deployer, name, setup))
        try:
            with counter.labelled("vote"):
                store.vote(spec["poll"], name, option)
            voted[i] = True  # the store returned: the vote is acknowledged
        except Exception as err:  # counted, never raised
            vote_failures.append(f"{type(err).__name__}: {err}")

    wall = run_workers(learner, len(learners))
    _emit(RESULT + json.dumps({"outcomes": outcomes, "voted": sum(voted), "vote_failures": vote_failures,
                               "statements": dict(counter.counts), "wall": wall}))


def _outcome(data: dict) -> Outcome:
    return Outcome(**{**data, "verdicts": tuple(data["verdicts"])})


class Worker:
    """A replica process of this script (python benchmarks/classroom.py --replica-worker)."""

    def __init__(self, name: str, env: dict[str, str], spec: dict, folder: Path) -> None:
        self.name = name
        data = folder / f"data-{name}"
        data.mkdir(parents=True, exist_ok=True)
        self.log_path = folder / f"{name}.log"
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), WORKER_FLAG], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True,
                env={**os.environ, **env, "TRITON_LAB_DATA": str(data), SPEC_ENV: json.dumps(spec)})

    def read_until(self, marker: str) -> str:
        """Lines up to the one that starts with marker (others are printed); that line's rest."""
        for line in self.process.stdout:
            if line.startswith(marker):
                return line[len(marker):].strip()
            print(f"  [{self.name}] {line.rstrip()}")
        tail = self.log_path.read_text(errors="replace").splitlines()[-15:]
        raise RuntimeError(f"replica {self.name} exited with {self.process.wait()} before {marker.strip()}:\n" + "\n".join(tail))

    def go(self) -> None:
        self.process.stdin.write(GO + "\n")
        self.process.stdin.flush()

    def stop(self) -> None:
        from app.lab.server import stop_group

        stop_group(self.process, grace_s=10)


def _solo_in_a_replica(env: dict[str, str], mix: list[str], repeats: int, folder: Path) -> dict[str, Outcome]:
    worker = Worker("solo", env, {"mode": "solo", "mix": list(dict.fromkeys(mix)), "repeats": repeats}, folder)
    try:
        solo_data = json.loads(worker.read_until(RESULT))["solo"]
    finally:
        worker.stop()
    solo = {}
    print("\n== each set-up alone (one replica) ==")
    for name, data in solo_data.items():
        solo[name] = alone = _outcome(data["alone"])
        print_solo(name, alone, [_outcome(a) for a in data["again"]])
    return solo


def replica_class(env: dict[str, str], db_url: str, mix: list[str], replicas: int, learners: int, folder: Path,
                  pgid: int | None) -> tuple[list[Outcome], float, float | None, dict]:
    """One class: learners dealt to replicas in turn (learner i on replica i mod R, set-ups in
    turn over each round of R, so one set-up's learners sit on different replicas), all pressing
    Run on "go", each voting after their result."""
    from app.quiz import votes
    from app.recogniser import demo as demos

    store = votes.store(db_url)
    code = store.open_demo(POLL_DEMO)
    options = demos.get(POLL_DEMO).options
    dealt: list[list[list[str]]] = [[] for _ in range(replicas)]
    for i in range(learners):
        dealt[i % replicas].append([f"learner-{i:02d}", mix[(i // replicas) % len(mix)], options[i % len(options)]])
    workers = [Worker(f"r{r}-of-{replicas}-n{learners}", env, {"mode": "class", "learners": dealt[r], "poll": code}, folder)
               for r in range(replicas) if dealt[r]]
    results = []
    peak = PeakMemory(pgid) if pgid is not None else contextlib.nullcontext()
    try:
        for worker in workers:
            worker.read_until(READY)  # every replica is up before anyone presses Run
        with peak:
            start = time.perf_counter()
            for worker in workers:
                worker.go()
            results = [json.loads(worker.read_until(RESULT)) for worker in workers]
            wall = time.perf_counter() - start
    finally:
        for worker in workers:
            worker.stop()
    store.close(code)
    statements = Counter()
    for result in results:
        statements.update(result["statements"])
    extra = {"replicas": replicas, "cast": sum(r["voted"] for r in results), "counted": sum(store.tally(code).values()),
             "vote_failures": Counter(f for r in results for f in r["vote_failures"]), "statements": statements}
    outcomes = [_outcome(o) for r in results for o in r["outcomes"] if o is not None]
    return outcomes, wall, (peak.peak_mb if pgid is not None else None), extra


def replicas_main(replica_counts: list[int], class_sizes: list[int], mix: list[str], repeats: int) -> None:
    from tests.postgres import PostgresMissing, PostgresServer

    print(torch_build())
    print(f"{os.cpu_count()} CPU cores; runs at once across replicas (TRITON_LAB_PARALLEL_RUNS) {run_queue.default_parallel()}, "
          f"stub budget across replicas (TRITON_LAB_MAX_STUBS) {loaded_models.default_budget()}")
    try:
        postgres = PostgresServer().start()
    except PostgresMissing as err:
        print(f"no PostgreSQL to share between replicas: {err}")
        return
    server = LabServer.from_env()
    folder = Path(tempfile.mkdtemp(prefix="classroom-replicas-"))
    summary = []
    try:
        start = time.perf_counter()
        server.start()
        print(f"server ready in {time.perf_counter() - start:.1f} s ({'embedded' if server.is_embedded else server.url}); "
              f"PostgreSQL on 127.0.0.1:{postgres.port}")
        db_url = postgres.create_database("classroom")
        env = {**server.environment(), "TRITON_LAB_DATABASE_URL": db_url, "PYTHONUNBUFFERED": "1"}
        pgid = server.embedded.pid if server.is_embedded and server.embedded is not None else None
        solo = _solo_in_a_replica(env, mix, repeats, folder)
        for replicas in replica_counts:
            for learners in class_sizes:
                outcomes, wall, peak_mb, extra = replica_class(env, db_url, mix, replicas, learners, folder, pgid)
                print(f"\n-- {replicas} replica(s) --", end="")
                row = report(learners, outcomes, solo, wall, peak_mb)
                runs = len(outcomes)
                st = extra["statements"]
                print(f"  votes counted {extra['counted']} of {extra['cast']} acknowledged ({learners} learners)")
                for msg, n in extra["vote_failures"].most_common():
                    print(f"    vote failed {n} x {msg}")
                print(f"  class database statements: {dict(st)} over {runs} runs")
                summary.append({**row, **extra, "per_run": (st["run"] / runs, st["other"] / runs) if runs else None})
                if not server.alive():
                    print("  the server is no longer alive: stopping here")
                    break
    except Exception as err:  # a benchmark reports, it does not crash
        print(f"the benchmark stopped early: {type(err).__name__}: {err}")
        traceback.print_exc()
    finally:
        server.stop()
        postgres.close()
        shutil.rmtree(folder, ignore_errors=True)

    if summary:
        print("\n| replicas | learners | p50 time to result | p95 time to result | refusals not asked for | run outcomes as solo "
              "| verdict mixes as solo | failed runs | votes counted / cast | DB statements per run (run threads + other threads) "
              "| peak server memory |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for row in summary:
            (r, rt), (m, mt) = row["runs"], row["mixes"]
            memory = f"{row['peak_mb'] / 1024:.1f} GB" if row["peak_mb"] is not None else "n/a"
            per_run = f"{row['per_run'][0]:.1f} + {row['per_run'][1]:.1f}" if row["per_run"] else "n/a"
            print(f"| {row['replicas']} | {row['learners']} | {row['p50']:.1f} s | {row['p95']:.1f} s | {row['unasked']} | "
                  f"{r}/{rt} | {m}/{mt} | {row['failed']} | {row['counted']} / {row['cast']} | {per_run} | {memory} |")


if __name__ == "__main__":
    main()
