"""One check's traffic as it is sent and recorded: the Measurement its rounds (sequence_rounds.py,
stateless_rounds.py, slow_client.py) send through, a row per request (what was sent, when, the
reply's differences from its reference), and how a phase runs with its trace and log placement.
measure.py runs the rounds and turns what was recorded into Tables.
"""
from __future__ import annotations

import contextlib
import itertools
import math
import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from app.checker.engine import compare, endpoints
from app.checker.engine.aliases import Arrays, InferResult, Row
from app.checker.engine.facts import ModelFacts, TensorSpec
from app.checker.engine.options import CheckOptions
from app.checker.engine.sequences import observed, placement
from app.checker.engine.target import Target
from app.checker.engine.witness import Witness
from app.lab.json_value import JSON, JSONObject
from app.lab.observation import server_log, server_trace
from app.lab.problems import LabError
from app.lab.progress import Progress, Stage
from app.lab.scenario.ids import unique_ids
from app.lab.scenario.transport import Transport
from app.lab.traffic import NO_ANSWER, TIMEOUT_S, Link, open_link

if TYPE_CHECKING:

    from app.checker.engine.inputs import InputSource
    from app.lab.server import LabServer

PROGRESS_EVERY_S = 0.2


def stage(phase: str, variant: str) -> Stage:
    """The checker's progress stage: the phase code, the variant code in its values (words:
    app/checker/words.PHASES, VARIANTS); progress is called from the measuring thread only."""
    return Stage(phase, {"variant": variant})


# Per request sent. "conversation" is the number of its sequence in the check (the requests from one START to its END
# under one correlation ID: a Sequence), "session" the client session whose inputs that sequence plays (and whose
# lone runs are its reference); both names are the report's keys, kept as schema 1 has them.
COLUMNS = ("phase", "pass", "variant", "role", "conversation", "session", "step", "corrid", "start", "end",
           "request_id", "t_send", "t_recv", "error", "judged", "outcome", "values", "golden", "nonfinite")
SHOWN_ELEMENTS = 4  # of a reply that differs, the first few elements are kept for the report


class _Recorder:
    """Rows kept column by column (far less memory per row than a dict each)."""

    def __init__(self, diff_columns: list[str]):
        self.names = list(COLUMNS) + diff_columns
        self.columns: dict[str, list[object]] = {name: [] for name in self.names}
        self.lock = threading.Lock()
        self.count = 0

    def add(self, row: Row) -> None:
        with self.lock:
            for name in self.names:
                self.columns[name].append(row.get(name))
            self.count += 1

    def frame(self, start: int = 0) -> pd.DataFrame:
        with self.lock:
            return pd.DataFrame({name: values[start:] for name, values in self.columns.items()})


@dataclass
class Sequence:
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
        self.references: dict[tuple[int, int], Arrays] = {}
        self.observations = observed.Observations(self.compared, options.tolerance)  # replies that differed
        self.t0 = time.perf_counter()
        self.counter = itertools.count()
        self.sequences = itertools.count()
        self.abort = threading.Event()
        self.abort_code: str | None = None
        self.witnesses: dict[tuple[str, str], Witness] = {}  # (check, variant) -> its witness (witness.py)
        self.pending_peaks: dict[str, float | None] = {}  # variant -> the interleaved run's backlog as Triton counted it
        self.abort_error: LabError | None = None  # set instead of abort_code where the gRPC endpoint stopped answering
        self.phases: list[JSONObject] = []
        self.skipped: list[dict[str, object]] = []  # check, variant, reason and the reason's values
        self.trace_on = self.server.trace_dir is not None
        self.run_id = secrets.token_hex(4)
        self._links: list[Link] = []
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
             link: Link | None = None, outcome: str = "") -> Row:
        """One request, alone on `link` (default: this thread's HTTP link); its row is recorded."""
        row: Row = {"phase": phase, "pass": pass_, "variant": variant, "role": role, "conversation": sequence,
               "session": session, "step": step, "corrid": "" if corrid is None else str(corrid), "start": start, "end": end,
               "request_id": f"{self.run_id}:{next(self.counter)}", "judged": judged, "outcome": outcome}
        if self.abort.is_set():
            row.update(error="not sent: the check stopped", t_send=time.perf_counter() - self.t0, judged=False, outcome="not_sent")
            row["t_recv"] = row["t_send"]
            self.recorder.add(row)
            return row
        arrays = self.source.arrays(session, step)
        flags = {"sequence_id": corrid, "sequence_start": start, "sequence_end": end} if corrid is not None else {}
        box: dict[str, InferResult | str] = {}
        link = link or self._link(sequence)
        link.acquire()
        row["t_send"] = time.perf_counter() - self.t0
        answered = threading.Event()

        def done(result: InferResult, error: str) -> None:
            box.update(result=result, error=error)
            answered.set()

        link.send(model, arrays, row["request_id"], self.headers(sequence, corrid), flags, done)
        answered.wait(TIMEOUT_S + 5.0)  # a stream answers on its own thread; the other links before send() returns
        self._finish(row, box.get("result"), box.get("error", "no reply recorded"))
        return row

    def _finish(self, row: Row, result: InferResult | None, error: str) -> None:
        row["t_recv"] = time.perf_counter() - self.t0
        row["error"] = error or ""
        got: Arrays = {}
        if not error:
            assert result is not None  # tritonclient gives a result wherever it gives no error
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

    def _golden_and_finite(self, row: Row, got: Arrays) -> None:
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
    def _compare(row: Row, column: str, expected: Arrays, got: Arrays,
                 specs: list[TensorSpec]) -> JSONObject | None:
        """Each output's difference from `expected` into row["<column>.<OUTPUT>"]; the first
        elements of both where they differ (None where none does)."""
        shown: JSONObject = {}
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

    _stamps: list[pd.DataFrame]
    _places: list[pd.DataFrame]

    def skip(self, check: str, variant: str, reason: str, **values: object) -> None:
        self.skipped.append({"check": check, "variant": variant, "reason": reason, "values": values})

    def pool(self, tasks: list[Callable[[], object]], workers: int) -> None:
        """Run tasks on `workers` threads, in order (the first `workers` start together)."""
        with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="check-session") as threads:
            futures = [threads.submit(task) for task in tasks]
            for future in futures:
                future.result()

    # -- a sequence ---------------------------------------------------------------------------
    def play(self, model: str, phase: str, variant: str, c: Sequence, pause: Callable[[int], float],
                 on_reply: Callable[[int, Row], None] | None = None) -> list[Row]:
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

    def sequence(self, role: str, session: int, corrid: int | str, length: int | None = None, sends: int | None = None) -> Sequence:
        length = self.source_length(session) if length is None else length
        return Sequence(role, session, corrid, length, length if sends is None else sends, next(self.sequences))

    def source_length(self, session: int) -> int:
        return self.lengths[session]

    lengths: list[int]

    def gaps(self, phase: str, session: int, sequence: int) -> Callable[[int], float]:
        """Random think times, uniform on 0..2 x think_ms, seeded per phase and sequence."""
        rng = np.random.default_rng([self.options.seed, sum(map(ord, phase)), session, sequence])
        mean = self.options.think_ms_used / 1000.0
        return lambda k: float(rng.uniform(0.0, 2.0 * mean)) if mean else 0.0


def _first(array: object) -> list[JSON] | None:
    """A reply's first elements as plain values for the report: bytes as text, and NaN and Inf as
    "nan", "inf" and "-inf" (JSON has no such numbers)."""
    if array is None:
        return None
    values = np.asarray(array).reshape(-1)[:SHOWN_ELEMENTS]
    if values.dtype.kind not in "biufOS":  # BF16 (ml_dtypes) has no plain Python value of its own
        values = values.astype(np.float64)
    out: list[JSON] = []
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
