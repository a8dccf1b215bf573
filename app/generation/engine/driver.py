"""Send a planned workload to a generator deployment on one gRPC stream and record every response.

Requests leave at their planned arrival times on one bidirectional stream
(tritonclient.grpc start_stream / async_stream_infer with enable_empty_final_response, so each
request's stream ends in a response marked final). Each response becomes one row of the trace
with its client receive time and the model's outputs. A request chosen for cancellation travels
on a stream of its own, which the driver stops with cancel_requests=True once that request has
streamed its N tokens: gRPC cancels the call, Triton marks the request cancelled, and the
deployment either answers it (honour_cancel) or drops it.

Every request's TAG and request ID are unique to the run (app/lab/scenario/ids.py and a random
run ID), so two learners' runs on one deployment never mix in a trace. The run holds its
deployment alone (app/lab/traffic's run queue), as the recogniser's runs do, so its executions
hold its own requests only.
"""
from __future__ import annotations

import queue
import secrets
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from app.generation.engine import analysis
from app.generation.engine.workload import PlannedRequest, Workload
from app.lab.observation import server_stats
from app.lab.progress import REQUESTS, Progress
from app.lab.server import ServerError, UnreachableError
from app.lab.traffic import OnWait, ServerView, run_queue

OUTPUTS = ("TOKEN", "STEP", "ROW", "BATCH", "EXECUTION", "INSTANCE", "STATE_OWNER")
# The trace: one row per response. Output columns are the outputs' names in lower case; -1 where
# a response carries none (an empty final response, an error), [] for an output that is a list.
BASE_COLUMNS = ["run_id", "index", "tag", "request_id", "t_send", "t_recv", "final", "empty", "error"]
TRACE_COLUMNS = [*BASE_COLUMNS, *[name.lower() for name in OUTPUTS]]
# Response kinds worth telling apart, from the client's side.
CANCELLED_BY_CLIENT = "cancelled"  # the error the client's own stream reports after stop_stream(cancel_requests=True)
DEFAULT_TIMEOUT_S = 60.0  # after the last arrival, for every request to end
_UNAVAILABLE = "StatusCode.UNAVAILABLE"


class RunUnfinished(ServerError):
    """The server answered, but some requests never ended within the run's timeout
    (code `gen_run_unfinished`; words: app/generation/words.py)."""


@dataclass
class GenerationRun:
    run_id: str
    model: str
    plans: list[PlannedRequest]
    trace: pd.DataFrame  # TRACE_COLUMNS, one row per response, in receive order
    max_batch_size: int
    cancel_after: dict[int, int]  # request index -> tokens after which its stream was stopped
    server: dict[str, Any] = field(default_factory=dict)  # statistics added by the run (server_stats.delta: why untyped)
    wall_s: float = 0.0

    @property
    def requests(self) -> int:
        return len(self.plans)


def _inputs(plan: PlannedRequest) -> list[grpcclient.InferInput]:
    """PROMPT, MAX_TOKENS and TAG as tritonclient.grpc InferInputs (a batch of one)."""
    return infer_inputs({
        "PROMPT": (np.array([plan.prompt], dtype=np.int32), "INT32"),
        "MAX_TOKENS": (np.array([[plan.max_tokens]], dtype=np.int32), "INT32"),
        "TAG": (np.array([[plan.tag]], dtype=np.uint64), "UINT64"),
    })


def infer_inputs(arrays: Mapping[str, tuple[npt.NDArray[np.generic], str]]) -> list[grpcclient.InferInput]:
    """tritonclient.grpc InferInputs, one per (array, datatype)."""
    out = []
    for name, (array, datatype) in arrays.items():
        tensor = grpcclient.InferInput(name, list(array.shape), datatype)
        tensor.set_data_from_numpy(array)
        out.append(tensor)
    return out


class _Recorder:
    """Collects responses from every stream's callback thread; knows which requests have ended."""

    def __init__(self, run_id: str, plans: Sequence[PlannedRequest], t0: float, cancel_after: Mapping[int, int],
                 progress: Progress | None, shape: StreamShape):
        self.run_id, self.t0, self.progress, self.shape = run_id, t0, progress, shape
        self.by_id = {f"{run_id}:{p.index}": p for p in plans}
        self.by_index = {p.index: p for p in plans}
        self.sent: dict[int, float] = {}
        self.tokens: dict[int, int] = {}
        self.ended: set[int] = set()
        self.rows: list[dict[str, Any]] = []  # the trace to be: a column per output the StreamShape names, of its own type
        self.cancel_after = dict(cancel_after)
        self.to_cancel: queue.Queue[int] = queue.Queue()
        self.lost: str | None = None  # the error of a stream the server broke
        self.unattributed = 0  # error responses that name no request (Triton's stream errors carry no ID)
        self.lock = threading.Lock()
        self.all_ended = threading.Event()
        self.total = len(plans)

    def callback(self, result: grpcclient.InferResult, error: InferenceServerException | None, index: int | None = None) -> None:
        now = time.perf_counter() - self.t0
        with self.lock:
            if error is not None:
                self._error(error, now, index)
            else:
                self._result(result, now)
            if self.lost:
                self.all_ended.set()

    def _row(self, plan: PlannedRequest | None, now: float) -> dict[str, Any]:
        row: dict[str, Any] = {"run_id": self.run_id, "index": -1, "tag": 0, "request_id": "", "t_send": float("nan"),
                               "t_recv": now, "final": False, "empty": True, "error": ""}
        if plan is not None:
            row.update(index=plan.index, tag=plan.tag, request_id=f"{self.run_id}:{plan.index}",
                       t_send=self.sent.get(plan.index, float("nan")))
        row.update({name.lower(): -1 for name in self.shape.outputs})
        row.update({name.lower(): [] for name in self.shape.list_outputs})
        return row

    def _result(self, result: grpcclient.InferResult, now: float) -> None:
        response = result.get_response()
        plan = self.by_id.get(response.id)
        row = self._row(plan, now)
        row["final"] = bool(response.parameters["triton_final_response"].bool_param)
        for name in self.shape.outputs:
            value = result.as_numpy(name)
            if value is not None and value.size:
                row[name.lower()] = int(value.reshape(-1)[0])
                row["empty"] = False
        for name in self.shape.list_outputs:
            value = result.as_numpy(name)
            if value is not None:
                row[name.lower()] = [int(v) for v in value.reshape(-1)]
        self.rows.append(row)
        if plan is None:
            return
        if not row["empty"]:
            self.tokens[plan.index] = self.tokens.get(plan.index, 0) + 1
            if self.cancel_after.get(plan.index) == self.tokens[plan.index]:
                self.to_cancel.put(plan.index)
        if row["final"]:
            self.end(plan.index)

    def _error(self, error: InferenceServerException, now: float, index: int | None) -> None:
        """An error on a stream. gRPC's own (a status such as StatusCode.CANCELLED) ends the stream:
        on a request's own stream after the driver stopped it, that is the cancellation; any other
        means the server broke the stream. Triton's errors for one request carry no status and,
        on a stream, no request ID."""
        status = str(error.status() or "")
        plan = self.by_index.get(index) if index is not None else None
        row = self._row(plan, now)
        row["final"] = True
        cancelled = plan is not None and status == "StatusCode.CANCELLED"
        row["error"] = CANCELLED_BY_CLIENT if cancelled else (error.message() or status)
        self.rows.append(row)
        if status.startswith("StatusCode.") and not cancelled:
            self.lost = f"{status} {error.message() or ''}".strip()
        elif plan is not None:
            self.end(plan.index)
        else:
            # Triton's error on a stream names no request, so it ends "some" request: once every
            # request is accounted for, ended or refused, the run is over.
            self.unattributed += 1
            if len(self.ended) + self.unattributed >= self.total:
                self.all_ended.set()

    def end(self, index: int) -> None:
        """Count a request as ended (called with the lock held)."""
        if index not in self.ended:
            self.ended.add(index)
            if self.progress:
                self.progress(len(self.ended), self.total, REQUESTS)
        if len(self.ended) + self.unattributed >= self.total:
            self.all_ended.set()

    def frame(self) -> pd.DataFrame:
        with self.lock:
            return pd.DataFrame(self.rows, columns=self.shape.trace_columns)


def run(server: ServerView, model: str, workload: Workload | Sequence[PlannedRequest], *,
        cancel_after: Mapping[int, int] | None = None, progress: Progress | None = None, on_wait: OnWait | None = None,
        hold: bool = True, timeout_s: float = DEFAULT_TIMEOUT_S, shape: StreamShape | None = None) -> GenerationRun:
    """Run `workload` (or requests already planned) on `model` and return its trace.

    `cancel_after`: {request index: N}: that request travels on a stream of its own, stopped with
    cancel_requests=True once N of its tokens have arrived. `hold`: the run holds its deployment
    alone (other runs of it wait; `on_wait` hears the place). Raises UnreachableError
    (server_unreachable) when the server does not answer or drops the stream, RunUnfinished
    (gen_run_unfinished) when requests are still open `timeout_s` after the last arrival.
    `shape`: what the model takes and answers (default: the generator's, GENERATOR)."""
    shape = shape or GENERATOR
    plans = workload.plan() if isinstance(workload, Workload) else list(workload)
    cancels = dict(cancel_after or {})
    if not plans:
        raise ValueError("a run needs at least one request")
    if hold:
        with run_queue.hold(server, model, on_wait):
            return _run(server, model, plans, cancels, progress, timeout_s, shape)
    return _run(server, model, plans, cancels, progress, timeout_s, shape)


def _unreachable(server: ServerView, err: Exception) -> UnreachableError:
    return UnreachableError("server_unreachable", url=server.grpc_url, kind=type(err).__name__)


def _run(server: ServerView, model: str, plans: list[PlannedRequest], cancels: dict[int, int],
         progress: Progress | None, timeout_s: float, shape: StreamShape) -> GenerationRun:
    control = server.client(timeout_s=10)
    try:
        config = control.get_model_config(model)  # Triton's own refusal (an unknown model) is raised as it is
    except OSError as err:
        raise _unreachable(server, err) from None
    before = server_stats.snapshot(control, server.metrics_url, model)
    run_id = secrets.token_hex(4)
    t0 = time.perf_counter()
    recorder = _Recorder(run_id, plans, t0, cancels, progress, shape)
    shared = grpcclient.InferenceServerClient(server.grpc_url)
    own: dict[int, grpcclient.InferenceServerClient] = {}
    canceller = threading.Thread(target=_cancel_loop, args=(recorder, own), name="gen-cancel", daemon=True)
    canceller.start()
    try:
        shared.start_stream(callback=recorder.callback)
        for plan in plans:
            delay = plan.arrival_s - (time.perf_counter() - t0)
            if delay > 0:
                recorder.all_ended.wait(delay)  # set early only when the server broke the stream
            if recorder.lost:
                break
            client = shared
            if plan.index in cancels:
                client = own[plan.index] = grpcclient.InferenceServerClient(server.grpc_url)
                client.start_stream(callback=lambda result, error, i=plan.index: recorder.callback(result, error, i))
            with recorder.lock:
                recorder.sent[plan.index] = time.perf_counter() - t0
            try:
                client.async_stream_infer(model, shape.inputs(plan), request_id=f"{run_id}:{plan.index}",
                                          enable_empty_final_response=True)
            except InferenceServerException as err:  # the stream is no longer valid: the server broke it
                recorder.lost = recorder.lost or str(err.message())
                break
        last = max(p.arrival_s for p in plans)
        recorder.all_ended.wait(max(0.0, last + timeout_s - (time.perf_counter() - t0)))
        wall = time.perf_counter() - t0
    finally:
        recorder.to_cancel.put(-1)  # ends the cancel loop
        canceller.join(timeout=30)
        # A stream whose requests all ended closes at once; one the server broke is cancelled.
        shared.stop_stream(cancel_requests=bool(recorder.lost) or not recorder.all_ended.is_set())
        for client in own.values():
            client.stop_stream(cancel_requests=True)
            client.close()
        shared.close()
    if recorder.lost:
        raise UnreachableError("server_unreachable", url=server.grpc_url, kind=recorder.lost)
    open_requests = sorted(set(range(len(plans))) - recorder.ended)
    if open_requests and len(recorder.ended) + recorder.unattributed < len(plans):
        raise RunUnfinished("gen_run_unfinished", model=model, seconds=round(timeout_s),
                            requests=", ".join(str(i) for i in open_requests))
    trace = recorder.frame().sort_values(["t_recv"], kind="stable").reset_index(drop=True)
    after = server_stats.snapshot_after(control, server.metrics_url, model, before,
                                        shape.inferences(trace, len(plans) - len(cancels)), wait_s=5.0)
    control.close()
    return GenerationRun(run_id=run_id, model=model, plans=plans, trace=trace,
                         max_batch_size=int(config.get("max_batch_size", 1)) or 1, cancel_after=cancels,
                         server=server_stats.delta(before, after), wall_s=wall)


def _inferences_seen(trace: pd.DataFrame, floor: int) -> int:
    """How many inferences the streams prove Triton ran: one per request in each execution that
    sent it a token (gen_inflight runs a request once per step, gen_static once), and at least one
    per request that was not cancelled. Triton counts an execution only after its responses went
    out, so the statistics are read once they reach this."""
    tokens = analysis.token_rows(trace)
    return max(floor, len(tokens[["instance", "execution", "tag"]].drop_duplicates()))


@dataclass(frozen=True)
class StreamShape:
    """What a streaming model takes and answers: the driver serves any model described so.

    `outputs` are read as one int each, `list_outputs` as lists of ints; `inputs` builds a
    request's tensors; `inferences(trace, floor)` says how many inferences Triton ran for the
    trace, so the statistics are read once they count them all."""

    outputs: tuple[str, ...]
    inputs: Callable[[PlannedRequest], list[grpcclient.InferInput]]
    inferences: Callable[[pd.DataFrame, int], int]
    list_outputs: tuple[str, ...] = ()

    @property
    def trace_columns(self) -> list[str]:
        return [*BASE_COLUMNS, *[name.lower() for name in (*self.outputs, *self.list_outputs)]]


GENERATOR = StreamShape(OUTPUTS, _inputs, _inferences_seen)

CELLS_METRIC = "gen_state_cells"


def state_cells(metrics_url: str, model: str, timeout_s: float = 5.0) -> int | None:
    """The state cells every instance of `model` holds now (the model's gauge, summed), or None
    when the metrics endpoint does not answer or the model exports none yet."""
    text = server_stats.scrape(metrics_url, timeout_s)
    if text is None:
        return None
    samples = [sample.value for _name, sample in server_stats.model_samples(text, model, {CELLS_METRIC})]
    return int(sum(samples)) if samples else None


def _cancel_loop(recorder: _Recorder, own: dict[int, grpcclient.InferenceServerClient]) -> None:
    """Stop each chosen request's own stream with cancel_requests=True once its tokens are in.
    Runs apart from the callbacks: stopping a stream joins the thread that runs its callbacks."""
    while True:
        index = recorder.to_cancel.get()
        if index < 0:
            return
        client = own.get(index)
        if client is not None:
            client.stop_stream(cancel_requests=True)
            with recorder.lock:
                recorder.end(index)
