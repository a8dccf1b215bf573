"""Run the guide's experiments on a live server and record every request: tables, no verdicts.

Sequence batcher, on all instances and then on a temporary one-instance copy:
  reference      every session alone (one request in flight), twice, with fresh IDs; the first
                 run is the reference every later reply is compared with, the second measures
                 the model's own nondeterminism;
  interleaved    every session again, with more sessions in flight than the model has slots
                 (instances x slots), so some wait in the backlog; short and long sessions, random gaps;
                 its start is ordered so the backlog forms by construction (backlog_gate.py);
  id_reuse       a wave that fills every slot and ends, then a wave that reuses each of its IDs
                 (so freed slots, on every instance, get reused IDs), then a chain of lone
                 sessions on one reused ID, one more than there are instances;
  abandon_round  the slots filled by holders and two victims: one stops without END (left to the
                 idle timeout read from the config), one gives up on a request (a client timeout
                 shorter than any reply) and stops; a follower per victim waits in the backlog and takes the
                 freed slot. Holders, and followers already in, keep their slots until every follower is
                 served, spreading their steps (at most 0.4 of the idle timeout apart), so the freed slots
                 are the victims'.
  slow_client    (all instances, a client fault: CheckOptions.faults) a victim's client quiet past the
                 idle timeout beside neighbours, its late step refused, then its session again from
                 START under the same ID (app/checker/engine/slow_client.py).
Dynamic or no batcher: every request alone twice (reference), then all of them concurrently in
two shuffled orders (batches of other compositions), then alone again in another order after
that traffic (after_traffic). A model whose config turns the response cache on is answered from
the server's cache when the server has one: if its statistics count cache hits during the second
lone run, every later request would be one too, so the three checks are skipped (`response_cache`)
instead of passing on stored answers; only the first lone run reached the model, and its refusals
are still reported. A server without a cache runs the model for every request, and the checks run.

Each reply is compared with the reference as it arrives (app/checker/engine/compare.py), and with
its step's golden output where the data file has validation_data, and only the differences are
kept (and, for a float reply holding NaN or Inf, its first elements), so memory grows with the
sessions' steps, not with their outputs. A phase runs when a check asked for judges it
(app/checker/engine/checks.py, CheckOptions.runs). The replies that differ beyond any
tolerance are kept too, up to a cap, for the diagnosis (app/checker/engine/observed.py).
Where the server can tell (app/checker/engine/placement.py), rows get the slot their sequence held
(the log at verbosity 1) and the execution they ran in (the trace).
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import math
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from tritonclient.utils import InferenceServerException

from app.checker.engine import checks, compare, endpoints, observed, placement, slow_client, witness
from app.checker.engine.backlog_gate import BacklogGate
from app.checker.engine.facts import ModelFacts, TensorSpec
from app.checker.engine.options import CheckOptions
from app.checker.engine.target import CopySkipped, Target
from app.lab.observation import server_log, server_trace
from app.lab.problems import LabError
from app.lab.progress import Progress, Stage
from app.lab.scenario.ids import unique_ids
from app.lab.scenario.transport import Transport
from app.lab.traffic import NO_ANSWER, TIMEOUT_S, Link, open_link

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from app.checker.engine.inputs import InputSource
    from app.lab.server import LabServer

GIVE_UP_AFTER_S = 0.0002  # the cancelled request's client timeout: shorter than any reply takes (a reply in 1 ms was seen)
PROGRESS_EVERY_S = 0.2
RELEASE_AFTER_IDLE = 2.0  # holders give up holding this many idle timeouts (plus a second) after the victims stopped
HOLD_UNTIL = 1.8  # idle timeouts after the victims stopped that holders spread their steps over
HOLD_GAP = 0.4  # the longest pause between a holder's steps, in idle timeouts


def stage(phase: str, variant: str) -> Stage:
    """The checker's progress stage: the phase code, the variant code in its values (words:
    app/checker/words.PHASES, VARIANTS); progress is called from the measuring thread only."""
    return Stage(phase, {"variant": variant})


# Per request sent. "conversation" is the number of its sequence in the check (the requests from one START to its END
# under one correlation ID: a _Sequence), "session" the client session whose inputs that sequence plays (and whose
# lone runs are its reference); both names are the report's keys, kept as schema 1 has them.
COLUMNS = ("phase", "pass", "variant", "role", "conversation", "session", "step", "corrid", "start", "end",
           "request_id", "t_send", "t_recv", "error", "judged", "outcome", "values", "golden", "nonfinite")
SHOWN_ELEMENTS = 4  # of a reply that differs, the first few elements are kept for the report


@dataclass
class Tables:
    """What measure() saw. `steps` has one row per request sent; `diff.<OUTPUT>` columns hold
    its difference from the reference (NaN for the reference run itself and where it has no
    reference step), `values` the first elements of both where they differ; with golden outputs,
    `gold.<OUTPUT>` its difference from the step's golden output (NaN where none) and `golden`
    the first elements where they differ; `nonfinite` the first elements of each compared float
    output that holds NaN or Inf (None: none does). `outputs` says which outputs were compared;
    `phases` one row per phase run; `skipped` what was not run and why (codes and values);
    `data_lengths` each of the data file's sequences' length (empty for generated inputs): session i
    plays sequence i % len(data_lengths) (the report's inputs.streams, perf_analyzer's word)."""

    facts: ModelFacts
    options: CheckOptions
    steps: pd.DataFrame
    outputs: pd.DataFrame
    phases: pd.DataFrame
    skipped: pd.DataFrame
    lengths: list[int] = field(default_factory=list)
    input_source: str = "generated"
    where: str = "embedded"
    traced: bool = False
    placed: bool = False
    golden: bool = False  # the data file has golden outputs (validation_data)
    data_lengths: list[int] = field(default_factory=list)
    # For the diagnosis and the export (app/checker/engine/observed.py): the replies that differed
    # from their references, by request_id; the lone references, by (session, step); and the
    # requests whose differing replies were past the memory cap and not kept.
    observed: dict[str, dict[str, np.ndarray[Any, Any]]] = field(default_factory=dict)
    references: dict[tuple[int, int], dict[str, np.ndarray[Any, Any]]] = field(default_factory=dict)
    unobserved: set[str] = field(default_factory=set)
    # Each witnessed check's evidence that its situation happened, by (check, variant) (witness.py);
    # None: tables no measurement wrote (a hand-built test's), whose verdicts carry no witness.
    witnesses: dict[tuple[str, str], dict[str, Any]] | None = None
    # The interleaved run's most pending requests in Triton's metrics, by variant (backlog_gate.py)
    pending_peaks: dict[str, float | None] = field(default_factory=dict)


class _Recorder:
    """Rows kept column by column (far less memory per row than a dict each)."""

    def __init__(self, diff_columns: list[str]):
        self.names = list(COLUMNS) + diff_columns
        self.columns: dict[str, list[Any]] = {name: [] for name in self.names}
        self.lock = threading.Lock()
        self.count = 0

    def add(self, row: dict[str, Any]) -> None:
        with self.lock:
            for name in self.names:
                self.columns[name].append(row.get(name))
            self.count += 1

    def frame(self, start: int = 0) -> pd.DataFrame:
        with self.lock:
            return pd.DataFrame({name: values[start:] for name, values in self.columns.items()})


@dataclass
class _Sequence:
    role: str
    session: int
    corrid: int | str
    length: int  # the session's full length: END goes with step length - 1
    sends: int  # steps it sends (fewer than length for a victim)
    number: int = 0  # the check's count of sequences sent (the "conversation" column of its tables and report)


class Measurement:
    """One check's traffic. Use measure() below; this holds the state its phases share."""

    def __init__(self, target: Target, facts: ModelFacts, source: InputSource, options: CheckOptions, progress: Progress | None,
                 planned: int):
        self.server = target.server
        self.facts = facts
        self.source = source
        self.options = options
        self.progress = progress
        self.planned = planned
        self.compared = [o for o in facts.outputs if o.name not in set(options.ignore_outputs) | set(compare.default_ignored(facts))]
        self.floats = [o for o in self.compared if compare.is_float(o.datatype)]
        golden = [f"gold.{o.name}" for o in self.compared] if source.golden is not None else []
        self.recorder = _Recorder([f"diff.{o.name}" for o in self.compared] + golden)
        self.references: dict[tuple[int, int], dict[str, np.ndarray[Any, Any]]] = {}
        self.observations = observed.Observations(self.compared, options.tolerance)  # replies that differed
        self.t0 = time.perf_counter()
        self.counter = itertools.count()
        self.sequences = itertools.count()
        self.abort = threading.Event()
        self.abort_code: str | None = None
        self.witnesses: dict[tuple[str, str], dict[str, Any]] = {}  # (check, variant) -> its witness (witness.py)
        self.pending_peaks: dict[str, float | None] = {}  # variant -> the interleaved run's backlog as Triton counted it
        self.abort_error: LabError | None = None  # set instead of abort_code where the gRPC endpoint stopped answering
        self.phases: list[dict[str, Any]] = []
        self.skipped: list[dict[str, Any]] = []
        self.trace_on = self.server.trace_dir is not None
        self.run_id = secrets.token_hex(4)
        self._links: list[Any] = []
        self._local = threading.local()
        self.placed = False
        self.transport = Transport.parse(options.transport)
        self.link_url = target.grpc_url if self.transport.uses_grpc else self.server.url

    # -- sending ----------------------------------------------------------------------------
    def ids(self, count: int) -> list[int | str]:
        """Correlation IDs the model's CORRID type can hold, never used before by this process."""
        raw = unique_ids(count)
        kind = self.facts.corrid_type
        if kind == "STRING":
            return [str(i) for i in raw]
        if kind in ("INT32", "UINT32"):
            return [(i & 0x7FFFFFFF) or 1 for i in raw]  # the counter part: unique within this process
        return list(raw)

    def _link(self, sequence: int) -> Link:
        """This thread's link over the check's transport. A gRPC stream fixes its headers when it
        opens, so each sequence gets a stream of its own, carrying its session header."""
        link: Link | None = getattr(self._local, "link", None)
        if link is not None and self.transport is Transport.GRPC_STREAM and self._local.sequence != sequence:
            link.close()
            self._links.remove(link)
            link = None
        if link is None:
            link = self._local.link = open_link(self.transport, self.link_url)
            self._local.sequence = sequence
            self._links.append(link)
        return link

    def headers(self, sequence: int, corrid: int | str | None) -> dict[str, str]:
        """--session-header: each session's ID in that header (the sequence's correlation ID; on the
        stateless path the request's own sequence number), so a balancer that hashes on it keeps a
        sequence on one replica."""
        name = self.options.session_header
        if not name:
            return {}
        return {name: str(corrid) if corrid is not None else f"{self.run_id}-{sequence}"}

    def close_links(self) -> None:
        for link in self._links:
            link.close()
        self._links.clear()
        self._local = threading.local()

    def send(self, model: str, phase: str, variant: str, role: str, sequence: int, session: int, step: int,
             corrid: int | str | None = None, start: bool = False, end: bool = False, pass_: str = "", judged: bool = True,
             link: Link | None = None, outcome: str = "") -> dict[str, Any]:
        """One request, alone on `link` (default: this thread's HTTP link); its row is recorded."""
        row: dict[str, Any] = {"phase": phase, "pass": pass_, "variant": variant, "role": role, "conversation": sequence,
               "session": session, "step": step, "corrid": "" if corrid is None else str(corrid), "start": start, "end": end,
               "request_id": f"{self.run_id}:{next(self.counter)}", "judged": judged, "outcome": outcome}
        if self.abort.is_set():
            row.update(error="not sent: the check stopped", t_send=time.perf_counter() - self.t0, judged=False, outcome="not_sent")
            row["t_recv"] = row["t_send"]
            self.recorder.add(row)
            return row
        arrays = self.source.arrays(session, step)
        flags = {"sequence_id": corrid, "sequence_start": start, "sequence_end": end} if corrid is not None else {}
        box: dict[str, Any] = {}
        link = link or self._link(sequence)
        link.acquire()
        row["t_send"] = time.perf_counter() - self.t0
        answered = threading.Event()

        def done(result: Any, error: str) -> None:
            box.update(result=result, error=error)
            answered.set()

        link.send(model, arrays, row["request_id"], self.headers(sequence, corrid), flags, done)
        answered.wait(TIMEOUT_S + 5.0)  # a stream answers on its own thread; the other links before send() returns
        self._finish(row, box.get("result"), box.get("error", "no reply recorded"))
        return row

    def _finish(self, row: dict[str, Any], result: Any, error: str) -> None:  # result: tritonclient's InferResult
        row["t_recv"] = time.perf_counter() - self.t0
        row["error"] = error or ""
        got: dict[str, np.ndarray[Any, Any]] = {}
        if not error:
            for spec in self.facts.outputs:
                value = result.as_numpy(spec.name)
                if value is not None:
                    got[spec.name] = value
        key = (row["session"], row["step"])
        if row["pass"] == "a":
            if not error:
                self.references[key] = got
        else:
            ref = self.references.get(key)
            if ref is not None and not error:
                row["values"] = self._compare(row, "diff", ref, got, self.compared)
        if not error:
            self._golden_and_finite(row, got)
        self._stop_if_server_gone(error)
        self.observations.keep(row, got)
        self.recorder.add(row)

    def _stop_if_server_gone(self, error: str) -> None:
        """A request the server never answered, from a server that no longer answers: the check stops."""
        if not error or not error.startswith(NO_ANSWER) or self.abort.is_set():
            return
        if not self.server.alive():
            self.abort_code = "check_server_gone"
            self.abort.set()
        elif self.transport.uses_grpc:  # the HTTP side answers: was it the gRPC endpoint that went away?
            try:
                endpoints.probe_grpc(self.link_url)
            except LabError as err:  # the network's failure, never the model's: the check ends with exit 2
                self.abort_error = err
                self.abort.set()

    def _golden_and_finite(self, row: dict[str, Any], got: dict[str, np.ndarray[Any, Any]]) -> None:
        """The reply's float outputs that hold NaN or Inf, and its difference from the step's
        golden output where the data file has one."""
        nonfinite = {o.name: _first(got.get(o.name)) for o in self.floats if compare.non_finite(got.get(o.name), o.datatype)}
        row["nonfinite"] = nonfinite or None
        expected = self.source.expected(row["session"], row["step"])
        if expected is None:
            return
        # an output the golden entry leaves out is not compared at that step
        row["golden"] = self._compare(row, "gold", expected, got, [s for s in self.compared if s.name in expected])

    @staticmethod
    def _compare(row: dict[str, Any], column: str, expected: dict[str, np.ndarray[Any, Any]], got: dict[str, np.ndarray[Any, Any]],
                 specs: list[TensorSpec]) -> dict[str, Any] | None:
        """Each output's difference from `expected` into row["<column>.<OUTPUT>"]; the first
        elements of both where they differ (None where none does)."""
        shown: dict[str, Any] = {}
        for spec in specs:
            diff = compare.difference(expected.get(spec.name), got.get(spec.name), spec.datatype)
            row[f"{column}.{spec.name}"] = diff
            if diff:
                shown[spec.name] = {"expected": _first(expected.get(spec.name)), "got": _first(got.get(spec.name))}
        return shown or None

    # -- running a phase --------------------------------------------------------------------
    def _trace_every_request(self, model: str) -> bool:
        with self.server.client(timeout_s=10) as client:  # closed here, not by the garbage collector mid-test
            return server_trace.enable(client, model)

    def run_phase(self, phase: str, variant: str, model: str, body: Callable[[], None], capacity: int = 0, workers: int = 1,
                  log: bool = False) -> pd.DataFrame:
        """Run body() (which sends the phase's requests from worker threads) while reporting
        progress from this thread; then attach trace and log placement to the phase's rows."""
        start_row = self.recorder.count
        self.run_id = secrets.token_hex(4)
        started = time.perf_counter() - self.t0
        window = server_log.LogWindow.start(self.server) if log else None
        traced = self.trace_on and phase != "reference" and self._trace_every_request(model)
        try:
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"check-{phase}") as runner:
                future = runner.submit(body)
                while not future.done():
                    wait([future], timeout=PROGRESS_EVERY_S, return_when=FIRST_EXCEPTION)
                    if self.progress:
                        self.progress(min(self.recorder.count, self.planned), self.planned, stage(phase, variant))
                future.result()
        finally:
            self.close_links()
            if traced:
                _trace_off(self.server, model)
        if self.abort.is_set():
            raise self.abort_error or LabError(self.abort_code or "check_server_gone", url=self.server.url)
        frame = self.recorder.frame(start_row)
        if traced and not frame.empty:
            # the given-up request too: the server may run it after its client stopped waiting
            answered_or_given_up = (frame["error"] == "") | (frame["outcome"] == "cancel_target")
            trace = server_trace.collect(self.server.trace_dir, self.run_id, expected=int(answered_or_given_up.sum()))
            traced = not trace.empty
            self._stamps.append(trace)
        if window is not None and window.available and not frame.empty:
            events = placement.sequence_events(placement.log_lines(window), model)
            if events:
                self.placed = True
                self._places.append(placement.place_sequences(frame, events)[["request_id", "instance", "slot", "ended_by"]])
        self.phases.append({"phase": phase, "variant": variant, "model": model, "started_s": started,
                            "wall_s": time.perf_counter() - self.t0 - started, "requests": len(frame), "workers": workers,
                            "capacity": capacity, "overflow": bool(capacity and workers > capacity), "traced": bool(traced),
                            "placed": bool(window is not None and window.available)})
        return frame

    _stamps: list[Any]
    _places: list[Any]

    def skip(self, check: str, variant: str, reason: str, **values: object) -> None:
        self.skipped.append({"check": check, "variant": variant, "reason": reason, "values": values})

    def pool(self, tasks: list[Callable[[], object]], workers: int) -> None:
        """Run tasks on `workers` threads, in order (the first `workers` start together)."""
        with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="check-session") as threads:
            futures = [threads.submit(task) for task in tasks]
            for future in futures:
                future.result()

    # -- a sequence ---------------------------------------------------------------------------
    def play(self, model: str, phase: str, variant: str, c: _Sequence, pause: Callable[[int], float],
                 on_reply: Callable[[int, dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
        """Send c's steps in order, pausing pause(k) before step k > 0; a refused request ends it."""
        rows = []
        for k in range(c.sends):
            if k:
                gap = pause(k)
                if gap > 0:
                    time.sleep(gap)
            row = self.send(model, phase, variant, c.role, c.number, c.session, k, c.corrid, k == 0, k == c.length - 1)
            rows.append(row)
            if on_reply:
                on_reply(k, row)
            if row["error"]:
                break
        return rows

    def sequence(self, role: str, session: int, corrid: int | str, length: int | None = None, sends: int | None = None) -> _Sequence:
        length = self.source_length(session) if length is None else length
        return _Sequence(role, session, corrid, length, length if sends is None else sends, next(self.sequences))

    def source_length(self, session: int) -> int:
        return self.lengths[session]

    lengths: list[int]

    def gaps(self, phase: str, session: int, sequence: int) -> Callable[[int], float]:
        """Random think times, uniform on 0..2 x think_ms, seeded per phase and sequence."""
        rng = np.random.default_rng([self.options.seed, sum(map(ord, phase)), session, sequence])
        mean = self.options.think_ms_used / 1000.0
        return lambda k: float(rng.uniform(0.0, 2.0 * mean)) if mean else 0.0


def _first(array: object) -> list[Any] | None:
    """A reply's first elements as plain values for the report: bytes as text, and NaN and Inf as
    "nan", "inf" and "-inf" (JSON has no such numbers)."""
    if array is None:
        return None
    values = np.asarray(array).reshape(-1)[:SHOWN_ELEMENTS]
    if values.dtype.kind not in "biufOS":  # BF16 (ml_dtypes) has no plain Python value of its own
        values = values.astype(np.float64)
    out = []
    for value in values.tolist():
        if isinstance(value, bytes):
            value = value.decode(errors="replace")
        elif isinstance(value, float) and not math.isfinite(value):
            value = str(value)
        out.append(value)
    return out


def _trace_off(server: LabServer, model: str) -> None:
    with contextlib.suppress(Exception), server.client(timeout_s=10) as client:  # the server went away: nothing left to switch off
        client.update_trace_settings(model_name=model, settings={"trace_level": ["OFF"]})


# -- the sequence batcher ---------------------------------------------------------------------
def _reference_sequences(m: Measurement, model: str) -> None:
    for pass_ in ("a", "b"):
        def body(pass_: str = pass_) -> None:
            for session, corrid in zip(range(len(m.lengths)), m.ids(len(m.lengths)), strict=True):
                c = m.sequence("alone", session, corrid)
                for k in range(c.sends):
                    row = m.send(model, "reference", "alone", "alone", c.number, session, k, corrid, k == 0, k == c.length - 1, pass_=pass_)
                    if row["error"]:
                        break
        m.run_phase("reference", "alone", model, body)
        if pass_ == "a" and not m.references:
            frame = m.recorder.frame()
            raise LabError("check_model_fails", model=m.facts.name, error=str(frame["error"].iloc[0]) if len(frame) else "-")


def _interleaved(m: Measurement, model: str, variant: str, capacity: int) -> None:
    n = len(m.lengths)
    workers = min(n, capacity + max(1, math.ceil(capacity / 2)))
    ids = m.ids(n)

    sequences = [m.sequence("interleaved", s, i) for s, i in zip(range(n), ids, strict=True)]
    # the first `workers` start together: their start is ordered so that some wait in the backlog
    gate = BacklogGate.plan(sequences[:workers], capacity, m.facts.idle_timeout_us / 1e6, m.server.metrics_url, model)

    def task(c: _Sequence) -> Callable[[], object]:
        gaps = m.gaps("interleaved", c.session, c.number)
        if gate is None:
            return lambda: m.play(model, "interleaved", variant, c, gaps)

        def gated() -> object:
            gate.before_first(c.number)
            return m.play(model, "interleaved", variant, c, gate.pause(c.number, gaps), gate.on_reply(c.number))
        return gated

    tasks = [task(c) for c in sequences]

    def body() -> None:
        watcher = threading.Thread(target=gate.watch, name="check-backlog-gate", daemon=True) if gate else None
        if watcher:
            watcher.start()
        try:
            m.pool(tasks, workers)
        finally:
            if gate and watcher:
                gate.full.set()  # a holder that failed before its reply must not keep the watcher waiting
                watcher.join()
                m.pending_peaks[variant] = gate.pending_peak

    m.run_phase("interleaved", variant, model, body, capacity, workers, log=True)


def _id_reuse(m: Measurement, model: str, variant: str, capacity: int, instances: int) -> None:
    n = len(m.lengths)
    wave = min(capacity, max(1, n))
    ids = m.ids(wave)

    def wave_tasks(role: str, offset: int) -> list[Callable[[], object]]:
        tasks: list[Callable[[], object]] = []
        for j, corrid in enumerate(ids):
            c = m.sequence(role, (j + offset) % n, corrid)

            def play(c: _Sequence = c) -> None:
                m.play(model, "id_reuse", variant, c, m.gaps("id_reuse", c.session, c.number))
            tasks.append(play)
        return tasks

    def body() -> None:
        m.pool(wave_tasks("first_use", 0), wave)  # every slot taken, then every sequence ends
        m.pool(wave_tasks("reuse", wave), wave)  # each ID again, on whichever freed slot it gets
        for j in range(instances + 1):  # one ID alone, again and again: lone sequences take the lowest free slot
            c = m.sequence("chain", (j + 2 * wave) % n, ids[0])
            m.play(model, "id_reuse", variant, c, lambda k: 0.0)

    m.run_phase("id_reuse", variant, model, body, capacity, wave, log=True)


def _abandon_round(m: Measurement, model: str, variant: str, capacity: int) -> None:
    idle_s = m.facts.idle_timeout_us / 1e6
    order = sorted(range(len(m.lengths)), key=lambda s: (-m.lengths[s], s))
    victims_pool = [s for s in order if m.lengths[s] >= 3]
    if not victims_pool:
        for check in ("abandoned", "cancelled"):
            m.skip(check, variant, "sessions_too_short", steps=max(m.lengths))
        return
    rounds = [("abandon", "cancel")] if capacity >= 2 else [("abandon",), ("cancel",)]

    def one_round(kinds: tuple[str, ...]) -> None:
        holders = capacity - len(kinds)
        ids = iter(m.ids(holders + 2 * len(kinds)))
        released, stopped = threading.Event(), threading.Event()
        victims_left = [len(kinds)]
        followers_left = [len(kinds)]
        lock = threading.Lock()
        stopped_at: list[float] = []

        def holder_pause(c: _Sequence, normal: Callable[[int], float]) -> Callable[[int], float]:
            def pause(k: int) -> float:
                if not released.is_set() and stopped_at and time.monotonic() > stopped_at[0] + RELEASE_AFTER_IDLE * idle_s + 1.0:
                    released.set()  # the followers never got in: stop holding
                if released.is_set():
                    return normal(k)
                if not stopped_at:
                    return idle_s / 4
                # Spread the steps left over the time until the followers are in (the victims' slots are
                # reaped an idle timeout after they stopped, the followers come half of one later), so a
                # short holder does not end first and hand its own slot to a follower (seen with 4 to 6
                # steps and a 1 s idle timeout); never more than HOLD_GAP of the timeout between steps,
                # so the reaper never takes a holder's slot.
                needed = stopped_at[0] + HOLD_UNTIL * idle_s - time.monotonic()
                return min(HOLD_GAP * idle_s, max(idle_s / 4, needed / max(1, c.sends - k)))
            return pause

        def victim_done() -> None:
            with lock:
                victims_left[0] -= 1
                if victims_left[0] == 0:
                    stopped_at.append(time.monotonic())
                    stopped.set()

        def follower_reply(k: int, row: dict[str, Any]) -> None:
            if k == 0:
                with lock:
                    followers_left[0] -= 1
                    if followers_left[0] == 0:
                        released.set()

        tasks: list[Callable[[], object]] = []
        for h in range(holders):
            c = m.sequence("holder", order[h % len(order)], next(ids))

            def hold(c: _Sequence = c) -> None:
                m.play(model, "abandon_round", variant, c, holder_pause(c, m.gaps("abandon_round", c.session, c.number)))
            tasks.append(hold)
        for v, kind in enumerate(kinds):
            session = victims_pool[(holders + v) % len(victims_pool)]
            length = m.lengths[session]
            keep = max(1, min(length - 1, length // 2))
            c = m.sequence(f"victim_{kind}", session, next(ids), length, keep)
            tasks.append(functools.partial(_victim, m, model, variant, c, kind, victim_done))
        for f in range(len(kinds)):
            c = m.sequence("follower", order[(holders + len(kinds) + f) % len(order)], next(ids))

            def follower(c: _Sequence = c) -> None:
                # Half an idle timeout after the victims' last requests: the follower then waits
                # about that long in the backlog, well inside its own idle timeout, when a slot frees.
                stopped.wait(timeout=TIMEOUT_S)
                time.sleep(idle_s / 2)
                # A follower holds its slot, as the holders do, until every follower is in: the
                # victims' slots free at their own idle timeouts, and a quick follower that ended
                # first would free a slot for the next follower before the other victim's freed.
                pause = holder_pause(c, m.gaps("abandon_round", c.session, c.number))
                m.play(model, "abandon_round", variant, c, pause, follower_reply)
            tasks.append(follower)
        m.pool(tasks, len(tasks))
        released.set()

    def body() -> None:
        for kinds in rounds:
            one_round(kinds)

    m.run_phase("abandon_round", variant, model, body, capacity, capacity + 2, log=True)


def _victim(m: Measurement, model: str, variant: str, c: _Sequence, kind: str, done: Callable[[], None]) -> None:
    """The abandoned victim sends its first steps and goes. The cancelled one sends all but the
    last of them, then gives up on the last (a client timeout shorter than any reply) and goes.
    Whether the server still ran that request, the client cannot know."""
    try:
        plain = c.sends if kind == "abandon" else c.sends - 1
        rows = m.play(model, "abandon_round", variant, _Sequence(c.role, c.session, c.corrid, c.length, plain, c.number),
                          m.gaps("abandon_round", c.session, c.number)) if plain else []
        if kind == "cancel" and not (rows and rows[-1]["error"]):
            _given_up_request(m, model, variant, c, plain)
    finally:
        done()


def _given_up_request(m: Measurement, model: str, variant: str, c: _Sequence, k: int) -> None:
    """One request whose HTTP client stops waiting after GIVE_UP_AFTER_S. Not a gRPC deadline:
    on Triton 2.51 a gRPC request cancelled while it executes can crash the server (SIGSEGV in
    the gRPC handler, server issue 7368, fixed after 24.10 by server PRs 7840 and 8078); seen
    here too, right after "skipping response generation as grpc transaction was cancelled"."""
    link = open_link(Transport.HTTP, m.server.url, in_flight=1, timeout_s=GIVE_UP_AFTER_S)
    try:
        m.send(model, "abandon_round", variant, c.role, c.number, c.session, k, c.corrid, k == 0, k == c.length - 1,
               judged=False, link=link, outcome="cancel_target")
    finally:
        link.close()


# -- dynamic batcher or none -------------------------------------------------------------------
def _stateless(m: Measurement, model: str) -> None:
    requests = [(s, k) for s in range(len(m.lengths)) for k in range(m.lengths[s])]

    def alone(order: list[tuple[int, int]], phase: str, pass_: str) -> Callable[[], None]:
        def body() -> None:
            for s, k in order:
                m.send(model, phase, "alone", "alone", next(m.sequences), s, k, pass_=pass_)
        return body

    m.run_phase("reference", "alone", model, alone(requests, "reference", "a"))
    if not m.references:
        frame = m.recorder.frame()
        raise LabError("check_model_fails", model=m.facts.name, error=str(frame["error"].iloc[0]) if len(frame) else "-")
    cached = bool((m.facts.config.get("response_cache") or {}).get("enable"))
    hits_before = _cache_hits(m, model) if cached else None
    m.run_phase("reference", "alone", model, alone(requests, "reference", "b"))
    if cached and _answered_from_cache(m, model, hits_before, len(requests)):
        return
    batch = max(1, m.facts.max_batch_size)
    workers = min(len(m.lengths), max(4, min(32, 2 * batch * m.facts.instances)))
    rng = np.random.default_rng([m.options.seed, 3])
    if m.options.runs("concurrent", sequence=False):
        # the batch_composition check's witness: the batch sizes the server ran during both rounds
        counts_before = witness.batch_counts(m.server, model)
        for round_ in ("c1", "c2"):
            queue = deque(requests[i] for i in rng.permutation(len(requests)))
            lock = threading.Lock()

            def client(queue: deque[tuple[int, int]] = queue, lock: threading.Lock = lock, round_: str = round_, w: int = 0) -> None:
                pause = m.gaps("concurrent", w, 0)
                while True:
                    with lock:
                        if not queue:
                            return
                        s, k = queue.popleft()
                    m.send(model, "concurrent", "all_instances", round_, next(m.sequences), s, k)
                    gap = pause(0)
                    if gap:
                        time.sleep(gap)
            def clients(client: Callable[..., None] = client) -> None:
                m.pool([functools.partial(client, w=w) for w in range(workers)], workers)
            m.run_phase("concurrent", "all_instances", model, clients, 0, workers)
        ran = witness.ran_between(counts_before, witness.batch_counts(m.server, model))
        m.witnesses[("batch_composition", "all_instances")] = witness.batches(ran, m.facts.max_batch_size)
    if m.options.runs("after_traffic", sequence=False):
        shuffled = [requests[i] for i in rng.permutation(len(requests))]
        m.run_phase("after_traffic", "alone", model, alone(shuffled, "after_traffic", ""))


def _cache_hits(m: Measurement, model: str) -> int | None:
    """Requests the server has answered from its response cache for `model` so far (the statistics
    extension's inference_stats.cache_hit count, over its versions); None when it does not say."""
    try:
        with m.server.client(timeout_s=30) as client:
            stats = client.get_inference_statistics(model)
    except InferenceServerException:
        return None
    return sum(int((s.get("inference_stats", {}).get("cache_hit") or {}).get("count", 0)) for s in stats.get("model_stats", []))


def _answered_from_cache(m: Measurement, model: str, before: int | None, requests: int) -> bool:
    """Whether the second lone run was answered from the server's cache (or the server cannot say):
    then no repeated request reaches the model, and every stateless check is skipped."""
    after = _cache_hits(m, model) if before is not None else None
    if after is not None and after == before:
        return False  # the server has no cache: Triton ran the model for every request
    # the checks judged against the lone reference (golden and finite still judge the replies, cached or not)
    blind = [(c.code, s.variant) for c in checks.for_path(sequence=False) if c.judged_by == checks.REFERENCE for s in c.scopes]
    for check, variant in blind:
        if not m.options.wants(check):
            continue
        if after is None or before is None:
            m.skip(check, variant, "response_cache_unknown")
        else:
            m.skip(check, variant, "response_cache", cache_hits=after - before, requests=requests)
    return True


# -- the whole measurement -------------------------------------------------------------------------
def planned_requests(facts: ModelFacts, lengths: list[int], options: CheckOptions) -> int:
    """About how many requests measure() sends (for a progress bar)."""
    total = sum(lengths)
    if not facts.sequence:
        return total * (2 + 2 * options.runs("concurrent", sequence=False) + options.runs("after_traffic", sequence=False))
    variants = 2 if options.one_instance and facts.instances > 1 else 1
    mean = total / max(1, len(lengths))
    per_variant = total + (2 * min(facts.capacity, len(lengths)) + facts.instances + 1) * mean + (facts.capacity + 2) * mean
    return int(2 * total + variants * per_variant)


def measure(target: Target, facts: ModelFacts, source: InputSource, lengths: list[int], options: CheckOptions,
            progress: Progress | None = None, copy: Callable[[], AbstractContextManager[str]] | None = None) -> Tables:
    """Run every phase the model's scheduler calls for. `copy()` returns a context manager that
    yields the one-instance copy's name (target.one_instance_copy), or raises CopySkipped."""
    m = Measurement(target, facts, source, options, progress, planned_requests(facts, lengths, options))
    m.lengths = lengths
    m._stamps, m._places = [], []
    model = target.model
    if facts.sequence:
        _reference_sequences(m, model)
        with server_log.raised_verbosity(m.server, 1):
            _sequence_phases(m, model, "all_instances", facts.capacity, facts.instances)
            if options.one_instance:
                _one_instance(m, copy)
            else:
                for check in _one_instance_checks(options):
                    m.skip(check, "one_instance", "not_requested")
    else:
        _stateless(m, model)
    return _tables(m, target, source)


def _sequence_phases(m: Measurement, model: str, variant: str, capacity: int, instances: int) -> None:
    if m.options.runs("interleaved", sequence=True, variant=variant):
        _interleaved(m, model, variant, capacity)
    if m.options.runs("id_reuse", sequence=True, variant=variant):
        _id_reuse(m, model, variant, capacity, instances)
    if m.options.runs("abandon_round", sequence=True, variant=variant):
        _abandon_round(m, model, variant, capacity)
    if variant == checks.ALL_INSTANCES and m.options.faults and m.options.wants(slow_client.CHECK):
        slow_client.play(m, model, variant, capacity)


def _one_instance_checks(options: CheckOptions) -> list[str]:
    """The checks asked for that have a verdict on the one-instance copy."""
    return [c.code for c in checks.for_path(sequence=True) if options.wants(c.code) and checks.ONE_INSTANCE in c.variants]


def _one_instance(m: Measurement, copy: Callable[[], AbstractContextManager[str]] | None) -> None:
    codes = _one_instance_checks(m.options)
    if not codes:
        return
    if copy is None:
        for check in codes:
            m.skip(check, "one_instance", "no_model_files", model=m.facts.name)
        return
    with ExitStack() as stack:
        try:
            name = stack.enter_context(copy())
        except CopySkipped as skipped:
            for check in codes:
                m.skip(check, "one_instance", skipped.reason, **skipped.values)
            return
        _sequence_phases(m, name, "one_instance", m.facts.slots_per_instance, 1)


def _tables(m: Measurement, target: Target, source: InputSource) -> Tables:
    steps = m.recorder.frame()
    if m._stamps:
        stamps = pd.concat(m._stamps, ignore_index=True).drop_duplicates("request_id")
        steps = steps.merge(stamps, on="request_id", how="left")
    else:
        for column in server_trace.COLUMNS[1:]:
            steps[column] = pd.NA
    if m._places:
        places = pd.concat(m._places, ignore_index=True)
        steps = steps.merge(places, on="request_id", how="left")
    else:
        steps["instance"] = None
        steps["slot"] = pd.NA
        steps["ended_by"] = None
    steps["follows"] = placement.followers(steps)
    steps = placement.executions(steps)
    outputs = pd.DataFrame(
        [{"name": o.name, "datatype": o.datatype, "compared": o in m.compared,
          "ignored_by": "user" if o.name in m.options.ignore_outputs else ("lab" if o.name in compare.default_ignored(m.facts) else "")}
         for o in m.facts.outputs],
        columns=["name", "datatype", "compared", "ignored_by"],
    )
    return Tables(
        facts=m.facts, options=m.options, steps=steps, outputs=outputs,
        phases=pd.DataFrame(m.phases, columns=["phase", "variant", "model", "started_s", "wall_s", "requests", "workers", "capacity",
                                               "overflow", "traced", "placed"]),
        skipped=pd.DataFrame(m.skipped, columns=["check", "variant", "reason", "values"]),
        lengths=list(m.lengths), input_source=source.source, where=target.where,
        traced=bool(m._stamps) and any(not s.empty for s in m._stamps), placed=m.placed,
        golden=source.golden is not None, data_lengths=[len(s) for s in getattr(source, "sequences", [])],
        observed=m.observations.arrays, references=m.references, unobserved=m.observations.unkept, witnesses=m.witnesses, pending_peaks=m.pending_peaks,
    )
