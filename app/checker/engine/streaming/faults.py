"""Faults a real client makes, played on a decoupled model's streams: a request cancelled
mid-stream, and a client that disconnects mid-stream.

Clients cancel, disconnect and give up all the time; a deployment must survive it without leaking
the state it keeps for the request or disturbing its neighbours. After the staggered run, with
nothing else of the check's in flight on the model, each fault in FAULTS is played alone:
NEIGHBOURS requests are sent on one gRPC stream, staggered as in the staggered run; then the
request with the longest lone stream (the victim) on a stream of its own, and as soon as its
first response arrives its client

  cancel_mid_stream      cancels it (tritonclient stop_stream(cancel_requests=True): the RPC ends
                         with an HTTP/2 RST_STREAM, a cancel Triton reads);
  disconnect_mid_stream  vanishes: the victim dialled a loopback relay (relay.py), which resets
                         its TCP connections, as a crashed client's host or a dropped network
                         would; no cancel is ever sent.

Then the check waits up to settle_s for the server to settle, reading Triton's metrics endpoint:
nv_inference_pending_request_count (Triton's pending requests for the model) must fall to 0 and,
where the model exports a gauge of its own state (--state-metric NAME), that gauge must fall back
to its reading before the fault. How long that took says whether the place was freed at once or
later (by the model's own sweep or the idle reaper). The neighbours' streams are compared with
their lone references by the stream judge (stream_judge.py), which also gives the verdict.

The witness is the fault itself: the victim had streamed at least one response and had not ended
when its client cancelled it or went. A victim that ended first leaves the fault not exercised; a model
whose every stream has fewer than two responses has no mid-stream to cancel in, and the fault is
skipped (stream_too_short), a stated reason. Codes and values only.
"""
from __future__ import annotations

import contextlib
import queue
import time
from dataclasses import dataclass, field

from app.checker.engine.facts import ModelFacts
from app.checker.engine.inputs import InputSource
from app.checker.engine.streaming import relay, streams
from app.checker.engine.streaming.streams import Stream, StreamTables
from app.checker.engine.target import Target
from app.checker.engine.witness import POLL_S, SETTLE_S, FaultReadings, readings_at

CANCEL = "cancel_mid_stream"
DISCONNECT = "disconnect_mid_stream"


@dataclass(frozen=True)
class Fault:
    """One client fault as data: the check that judges it, the phase its streams are recorded
    under, and what the victim's stream says of how it ended (Stream.given_up)."""

    code: str
    check: str
    phase: str
    given_up: str


FAULTS = (Fault(CANCEL, "stream_cancelled", "fault_cancel", "cancelled"),
          Fault(DISCONNECT, "stream_disconnected", "fault_disconnect", "disconnected"))
BY_CODE = {f.code: f for f in FAULTS}
BY_CHECK = {f.check: f for f in FAULTS}
NEIGHBOURS = 3


class FaultWitness(FaultReadings):
    victim: int | None  # its request number
    cancelled_after: int | None
    cancel_s: float | None
    freed: str | None  # at_once, later or never


AT_ONCE_S = 0.5  # settled within this of the cancel: freed at once, not by a later sweep or the reaper


@dataclass
class FaultRun:
    """One fault as it happened: its victim and neighbours (streams), how far the victim got before
    its client cancelled it (None: it ended first), and the server's readings before and after."""

    fault: str
    victim: Stream | None
    neighbours: list[Stream] = field(default_factory=list)
    cancelled_after: int | None = None  # responses the victim had streamed when it was cancelled
    cancel_s: float | None = None  # when, from the check's start
    pending_before: float | None = None
    pending_after: float | None = None
    state_metric: str | None = None
    state_before: float | None = None
    state_after: float | None = None
    settled_s: float | None = None  # from the cancel until pending 0 and the state back (None: not within settle_s)
    settle_s: float = SETTLE_S

    @property
    def exercised(self) -> bool:
        return self.victim is not None and self.cancelled_after is not None and self.cancelled_after >= 1

    @property
    def leaked_state(self) -> bool:
        return None not in (self.state_before, self.state_after) and float(self.state_after or 0) > float(self.state_before or 0)

    @property
    def pending_left(self) -> bool:
        return self.pending_after is not None and self.pending_after > 0

    def witness(self) -> FaultWitness:
        """The fault's evidence, for the verdict's values["witness"] (report schema $defs/witness)."""
        why = None if self.exercised else "stream_too_short" if self.victim is None else "ended_before_cancel"
        freed = None if not self.exercised else "never" if self.settled_s is None else "at_once" if self.settled_s <= AT_ONCE_S else "later"
        return {"source": "metrics", "exercised": self.exercised, "why": why, "advice": None if self.exercised else "longer_streams",
                "fault": self.fault, "victim": None if self.victim is None else self.victim.request,
                "cancelled_after": self.cancelled_after, "cancel_s": _round(self.cancel_s), "neighbours": len(self.neighbours),
                "pending_before": self.pending_before, "pending_after": self.pending_after, "state_metric": self.state_metric,
                "state_before": self.state_before, "state_after": self.state_after, "settled_s": _round(self.settled_s),
                "settle_s": self.settle_s, "freed": freed}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def readings(target: Target, model: str, state_metric: str | None) -> tuple[float | None, float | None]:
    """(Triton's pending requests for the model, the model's state gauge summed over its instances)
    now; None for what the metrics endpoint does not say."""
    return readings_at(target.server.metrics_url, model, state_metric)


def play(code: str, target: Target, facts: ModelFacts, source: InputSource, measured: StreamTables, clock: float,
         state_metric: str | None = None, settle_s: float = SETTLE_S) -> FaultRun:
    """Play one fault (a code of FAULTS): LabError (exit 2) where the gRPC endpoint went away, as in streams.measure."""
    fault = BY_CODE[code]
    lone = measured.alone["a"]
    longest = max(lone, key=lambda s: len(s.responses), default=None)
    if longest is None or len(longest.responses) < 2:  # nothing to cancel half-way
        return FaultRun(code, None, state_metric=state_metric, settle_s=settle_s)
    others = sorted((s for s in lone if s.request != longest.request), key=lambda s: -len(s.responses))[:NEIGHBOURS]
    run = FaultRun(code, Stream(longest.request, fault.phase, "victim"),
                   [Stream(s.request, fault.phase, "neighbour") for s in sorted(others, key=lambda s: s.request)],
                   state_metric=state_metric, settle_s=settle_s)
    run.pending_before, run.state_before = readings(target, facts.name, state_metric)
    victim = run.victim
    assert victim is not None
    # One listener per stream: an error that names no request is charged to every open stream of its listener.
    hears_victim, hears_others = streams.Listener(facts, clock), streams.Listener(facts, clock)
    cut = relay.Relay(target.grpc_url) if code == DISCONNECT else None
    alone = streams.Session(target, facts, hears_victim, source, url=cut.address if cut else None)
    beside = streams.Session(target, facts, hears_others, source)
    try:
        alone.open()
        beside.open()
        rids = []
        for neighbour in run.neighbours:  # the neighbours first, so the victim is cancelled as soon as it streams
            rids.append(beside.send(neighbour))
            time.sleep(measured.gap_s)
        victim_rid = alone.send(victim)
        _until_first_response(hears_victim, victim, victim_rid, measured.idle_s)
        if cut is None:  # through the relay, a failure is the relay's; the neighbours say whether the server answers
            streams.stop_if_unreachable(target, hears_victim)
        if not victim.done and victim.responses:
            run.cancelled_after = len(victim.responses)
            run.cancel_s = time.perf_counter() - clock
            if cut is not None:
                cut.cut()
            else:
                alone.close(cancel=True)
            victim.given_up = fault.given_up
        hears_others.wait(rids, measured.idle_s)
        streams.stop_if_unreachable(target, hears_others)
    finally:
        if cut is not None:
            cut.cut()
        with contextlib.suppress(Exception):  # a cut stream's client fails to stop: it is gone already
            alone.close(cancel=True)
        beside.close(cancel=not all(n.ended for n in run.neighbours))
    if run.exercised:
        _settle(target, facts, run, clock)
    return run


def _until_first_response(listener: streams.Listener, stream: Stream, rid: str, idle_s: float) -> None:
    """Until the stream has a response or is done, or idle_s passes with nothing heard."""
    deadline = time.perf_counter() + idle_s
    while not (stream.responses or stream.done) and time.perf_counter() < deadline:
        with contextlib.suppress(queue.Empty):
            listener.events.get(timeout=max(0.01, deadline - time.perf_counter()))


def _settle(target: Target, facts: ModelFacts, run: FaultRun, clock: float) -> None:
    """Read the metrics until Triton holds no pending request for the model and the state gauge is
    back to its reading before the fault, or settle_s has passed since the cancel."""
    assert run.cancel_s is not None
    while True:
        run.pending_after, run.state_after = readings(target, facts.name, run.state_metric)
        since = time.perf_counter() - clock - run.cancel_s
        if not run.pending_left and not run.leaked_state:
            run.settled_s = since
            return
        if since >= run.settle_s:
            return
        time.sleep(POLL_S)
