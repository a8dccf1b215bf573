"""A streaming (decoupled) model's response streams, measured: every request alone, then staggered.

A decoupled model answers one request with any number of responses (model_transaction_policy
decoupled; server docs/user_guide/decoupled_models.md at r24.10), and an iterative-sequence model
(sequence_batching.iterative_sequence) runs each request again and again, one response per
execution, so requests that arrive while others are generating join their executions. The check
asks what vLLM asks of itself: is each request's whole stream the same whether it ran alone or
shared executions with others?

Over gRPC streaming (tritonclient.grpc start_stream / async_stream_infer with
enable_empty_final_response, so that the last response says it is the last through its
`triton_final_response` parameter), with nothing else of the check's in flight on the model:

  stream_alone  every request alone, one at a time, twice (passes a and b): the references,
                and whether they are reproducible;
  staggered     the same requests on one stream, arriving STAGGER_SHARE of a lone stream's
                median duration apart (spread over the model's batch), so later requests join
                running ones; the lab's paged engine's arrive all at once, needing more KV cache
                than it has, with a shared prefix (paged_engine.py).

The client knows only the model's metadata and config: the inputs are the checker's own
(generated, or a data file's entries, one request each; inputs.py, input_data.py), and no
sequence ID or flags are sent (an iterative sequence is numbered by Triton itself). A stream that
hears nothing for `idle_s` is given up (never ended) and its stream cancelled; one that runs past
MAX_RESPONSES responses is given up as well. An error response on the gRPC stream names no request
(tritonclient passes only the message), so it is charged to every stream still open then.
Codes and values only.
"""
from __future__ import annotations

import contextlib
import queue
import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException, np_to_triton_dtype

from app.checker.engine import compare, endpoints, inputs, paged_engine, witness
from app.checker.engine.aliases import Arrays
from app.checker.engine.facts import ModelFacts
from app.checker.engine.inputs import InputSource
from app.checker.engine.options import CheckOptions
from app.checker.engine.target import Target
from app.lab.json_value import JSONObject
from app.lab.problems import LabError
from app.lab.progress import Progress, Stage

ALONE_PHASE, STAGGERED_PHASE = "stream_alone", "staggered"
PASSES = ("a", "b")
DEFAULT_REQUESTS = 12  # requests per check when --sessions does not say
IDLE_S = 5.0  # a stream that hears nothing this long is given up: it never ended
MAX_RESPONSES = 4096  # a stream longer than this is given up too
STAGGER_SHARE = 1.0  # the gap between arrivals: this share of a lone stream's median duration, over the batch size
MIN_GAP_S = 0.0002  # small enough that streams of a millisecond still overlap (the check's witness needs them to)
FINAL = "triton_final_response"


@dataclass
class Stream:
    """One request's response stream as the client heard it. `responses[r]` holds every output of
    response r (without the batch dimension); `ended`: the last response said it was final;
    `given_up`: "" or why the client stopped waiting (idle: nothing heard for idle_s; too_long:
    past MAX_RESPONSES; cancelled, disconnected: a client fault's victim, faults.py); `error`: the server's message where a response was an error."""

    request: int
    phase: str
    pass_: str
    sent_s: float = 0.0
    responses: list[Arrays] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    ended: bool = False
    ended_s: float | None = None
    given_up: str = ""
    error: str = ""

    @property
    def done(self) -> bool:
        return self.ended or bool(self.given_up) or bool(self.error)

    @property
    def duration_s(self) -> float | None:
        return None if self.ended_s is None else self.ended_s - self.sent_s

    def to_json(self) -> dict[str, object]:
        return {"request": self.request, "phase": self.phase, "pass": self.pass_, "sent_s": round(self.sent_s, 4),
                "responses": len(self.responses), "ended": self.ended, "given_up": self.given_up or None,
                "error": self.error or None, "duration_s": None if self.duration_s is None else round(self.duration_s, 4)}


@dataclass
class StreamTables:
    """What measure() saw: the lone streams per pass, the staggered streams, the gap between
    arrivals, the idle limit, and one row per phase (phase, variant, started_s, wall_s, requests)."""

    requests: int
    alone: dict[str, list[Stream]]
    staggered: list[Stream]
    gap_s: float
    idle_s: float
    phases: pd.DataFrame
    outputs: list[str]  # compared outputs, in the model's order
    ignored: list[str]
    batch_sizes: dict[int, int] | None = None  # executions per batch size while the staggered streams ran (None: unread)
    clock: float = 0.0  # perf_counter at the check's start: every stream's times count from it
    # The client faults played after the staggered run, in order: faults.FaultRun, Any as faults.py depends on this module.
    faults: list[Any] = field(default_factory=list)


def input_source(facts: ModelFacts, options: CheckOptions) -> InputSource:
    """One request per session: generated from the metadata, or the data file's entries in
    order (a file of streams: every step of every stream), with their golden streams."""
    from app.checker.engine.streaming import stream_golden  # the data file's side, kept apart

    dims = inputs.concrete_shapes(facts, options.shapes)
    if options.input_data is not None:
        return stream_golden.from_data(facts, options, dims)
    if paged_engine.is_paged(facts):  # requests the engine takes, sharing a prefix, past its cache
        return paged_engine.paged_inputs(facts, paged_engine.request_count(facts, options.sessions), options.seed)
    count = options.sessions or DEFAULT_REQUESTS
    return inputs.Generated(facts, dims, [1] * count, options.seed, inputs.drawn_sizes(facts, dims, options.seed))


class Listener:
    """The stream callback's side: responses by request id, and a queue that wakes the waiter."""

    def __init__(self, facts: ModelFacts, clock: float):
        self.facts, self.clock = facts, clock
        self.streams: dict[str, Stream] = {}
        self.heard: dict[str, float] = {}
        self.events: queue.Queue[str] = queue.Queue()
        self.lock = threading.Lock()
        self.lost: InferenceServerException | None = None  # the first error saying the gRPC endpoint refused or dropped the connection

    def add(self, stream: Stream) -> str:
        rid = f"{stream.phase}-{stream.pass_}-{stream.request}"
        with self.lock:
            self.streams[rid] = stream
            self.heard[rid] = time.perf_counter()
        return rid

    def __call__(self, result: grpcclient.InferResult | None, error: InferenceServerException | None) -> None:
        now = time.perf_counter()
        if error is not None:
            if endpoints.is_connection_error(error) and self.lost is None:
                self.lost = error  # the network's failure, not the model's: measure() ends the check (exit 2)
            rid = _error_id(error) or ""
            with self.lock:
                stream = self.streams.get(rid)
                if stream is None:  # an error that names no request: every open stream hears it
                    for open_rid, open_stream in self.streams.items():
                        if not open_stream.done:
                            open_stream.error = str(error)
                            self.events.put(open_rid)
                    return
                stream.error = _message(error)
            self.events.put(rid)
            return
        assert result is not None  # tritonclient gives a result wherever it gives no error
        response = result.get_response()
        rid = response.id
        final = bool(response.parameters[FINAL].bool_param) if FINAL in response.parameters else False
        with self.lock:
            stream = self.streams.get(rid)
            if stream is None or stream.done:
                return
            self.heard[rid] = now
            if response.outputs:
                outputs = {}
                for out in response.outputs:
                    array = result.as_numpy(out.name)
                    if array is not None and self.facts.batched and array.ndim > 0 and array.shape[0] == 1:
                        array = array[0]
                    outputs[out.name] = array
                stream.responses.append(outputs)
                stream.times.append(now - self.clock)
                if len(stream.responses) > MAX_RESPONSES:
                    stream.given_up = "too_long"
            if final:
                stream.ended = True
                stream.ended_s = now - self.clock
        self.events.put(rid)

    def wait(self, rids: list[str], idle_s: float) -> None:
        """Until every stream in rids is done, giving up those that hear nothing for idle_s."""
        while True:
            with self.lock:
                now = time.perf_counter()
                open_ = [r for r in rids if not self.streams[r].done]
                for r in open_:
                    if now - self.heard[r] > idle_s:
                        self.streams[r].given_up = "idle"
                open_ = [r for r in open_ if not self.streams[r].done]
                if not open_:
                    return
                soonest = min(self.heard[r] for r in open_) + idle_s - now
            with contextlib.suppress(queue.Empty):
                self.events.get(timeout=max(0.01, soonest))


def _error_id(error: object) -> str | None:
    """The request id an error names, where the server said it."""
    for attribute in ("request_id",):
        rid = getattr(error, attribute, None)
        if callable(rid):
            rid = rid()
        if rid:
            return str(rid)
    return None


def _message(error: object) -> str:
    return error.message() if isinstance(error, InferenceServerException) and error.message() else str(error)


def _inputs(facts: ModelFacts, arrays: Arrays) -> list[grpcclient.InferInput]:
    out = []
    for spec in facts.inputs:
        array = arrays.get(spec.name)
        if array is None:
            continue
        datatype = "BYTES" if array.dtype == np.object_ else spec.datatype if spec.datatype == "BF16" else np_to_triton_dtype(array.dtype)
        tensor = grpcclient.InferInput(spec.name, list(array.shape), datatype)
        tensor.set_data_from_numpy(array)
        out.append(tensor)
    return out


class Session:
    """One gRPC stream to the model, opened and cancelled as the phase needs."""

    def __init__(self, target: Target, facts: ModelFacts, listener: Listener, source: InputSource, url: str | None = None):
        self.target, self.facts, self.listener, self.source = target, facts, listener, source
        self.url = url or target.grpc_url  # --grpc-url where given; a fault's relay (relay.py) in front of it
        self.client: grpcclient.InferenceServerClient | None = None

    def open(self) -> None:
        self.client = grpcclient.InferenceServerClient(self.url)
        self.client.start_stream(callback=self.listener)

    def send(self, stream: Stream) -> str:
        assert self.client is not None
        rid = self.listener.add(stream)
        stream.sent_s = time.perf_counter() - self.listener.clock
        try:
            self.client.async_stream_infer(self.facts.name, _inputs(self.facts, self.source.arrays(stream.request, 0)),
                                           request_id=rid, enable_empty_final_response=True)
        except InferenceServerException as err:
            stream.error = _message(err)
        return rid

    def close(self, cancel: bool) -> None:
        if self.client is None:
            return
        try:
            self.client.stop_stream(cancel_requests=cancel)
        finally:
            self.client.close()
            self.client = None


def measure(target: Target, facts: ModelFacts, source: InputSource, options: CheckOptions, progress: Progress | None = None,
            idle_s: float = IDLE_S) -> StreamTables:
    """Every request alone twice, then all of them staggered; LabError when the server cannot be reached."""
    count = len(source.lengths)
    clock = time.perf_counter()
    planned = 3 * count
    done = 0
    phases: list[JSONObject] = []

    def tick(phase: str, variant: str) -> None:
        if progress is not None:
            progress(done, planned, Stage(phase, {"variant": variant}))

    listener = Listener(facts, clock)
    session = Session(target, facts, listener, source)
    alone: dict[str, list[Stream]] = {}
    try:
        started = time.perf_counter() - clock
        for pass_ in PASSES:
            alone[pass_] = []
            session.open()
            for request in range(count):
                stream = Stream(request, ALONE_PHASE, pass_)
                rid = session.send(stream)
                listener.wait([rid], idle_s)
                stop_if_unreachable(target, listener)
                alone[pass_].append(stream)
                done += 1
                tick(ALONE_PHASE, "alone")
                if not stream.ended:  # given up or failed: cancel it, so the next request runs alone
                    session.close(cancel=True)
                    session.open()
            session.close(cancel=False)
        phases.append({"phase": ALONE_PHASE, "variant": "alone", "started_s": started,
                       "wall_s": time.perf_counter() - clock - started, "requests": 2 * count})
        # The paged engine's requests arrive all at once: more than its cache holds (memory pressure).
        gap = MIN_GAP_S if paged_engine.is_paged(facts) else stagger_gap(facts, alone["a"], alone["b"])
        counts_before = witness.batch_counts(target.server, facts.name)  # the staggered run's witness: what ran in it
        started = time.perf_counter() - clock
        staggered = [Stream(request, STAGGERED_PHASE, "a") for request in range(count)]
        session.open()
        rids = []
        for request, stream in enumerate(staggered):
            due = started + request * gap
            pause = due - (time.perf_counter() - clock)
            if pause > 0:
                time.sleep(pause)
            rids.append(session.send(stream))
        listener.wait(rids, idle_s)
        stop_if_unreachable(target, listener)
        session.close(cancel=not all(s.ended for s in staggered))
        ran = witness.ran_between(counts_before, witness.batch_counts(target.server, facts.name))
        done += count
        tick(STAGGERED_PHASE, "all_instances")
        phases.append({"phase": STAGGERED_PHASE, "variant": "all_instances", "started_s": started,
                       "wall_s": time.perf_counter() - clock - started, "requests": count})
    except InferenceServerException as err:
        session.close(cancel=True)
        if endpoints.is_connection_error(err):
            raise endpoints.unreachable(target.grpc_url, err) from None
        raise LabError("check_stream_failed", model=facts.name, message=_message(err)) from None
    except LabError:
        session.close(cancel=True)
        raise
    ignored = [o.name for o in facts.outputs if o.name in options.ignore_outputs or o.name in compare.default_ignored(facts)]
    outputs = [o.name for o in facts.outputs if o.name not in ignored]
    return StreamTables(count, alone, staggered, gap, idle_s, pd.DataFrame(phases), outputs, ignored, ran, clock)


def stop_if_unreachable(target: Target, listener: Listener) -> None:
    """A stream that failed because the gRPC endpoint refused or dropped the connection says
    nothing about the model: the check ends (exit 2) naming the address, never a broken stream."""
    if listener.lost is not None:
        raise endpoints.unreachable(target.grpc_url, listener.lost)


def stagger_gap(facts: ModelFacts, lone: list[Stream], warm: list[Stream] | None = None) -> float:
    """Seconds between staggered arrivals: the median lone stream's duration, over the rows an
    execution holds (at least 2), times STAGGER_SHARE, so about a batch of requests is generating
    at any time and every later request joins running ones. The shorter median of the two lone
    passes: the first may include the model's warm-up, and a gap longer than a stream lets no two
    streams overlap, which leaves the staggered check without its witness (witness.streams_shared)."""
    medians = [statistics.median(d) for d in ([s.duration_s for s in p if s.duration_s is not None] for p in (lone, warm or [])) if d]
    median = min(medians) if medians else 0.1
    return max(MIN_GAP_S, STAGGER_SHARE * median / max(2, facts.max_batch_size))
