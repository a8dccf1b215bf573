"""The evidence that a check's situation happened, read from the server's own statistics and
metrics, and the verdict a check gets without it.

A check judges what the traffic it sent produced. When the deployment or the load never produced
the situation a check tests (no batch of more than one request formed, no two streams shared an
execution), every reply matches its reference and the check would "hold" for something it never
saw. So each check that tests a situation records its witness, and a held check whose witness
says the situation did not happen is `not_exercised` instead, with what to change to exercise it.
A broken check is its own witness: it saw the situation go wrong (verdicts.witnessed applies this).

Batch sizes come from Triton's statistics extension (GET v2/models/<m>/stats): each version's
`batch_stats` lists, per batch size, the executions of that size (`compute_infer.count`); the
difference over a phase is what ran in it. A client's fault (streaming/faults.py) and the slow
client (sequences/slow_client.py) read Triton's metrics instead: the model's pending requests
(PENDING) and its state gauge, before the fault and until they settle (FaultReadings). Codes and values only.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

import pandas as pd
from tritonclient.utils import InferenceServerException

from app.checker.engine.aliases import Values
from app.lab.observation import server_stats

if TYPE_CHECKING:
    from app.lab.server import LabServer


NOT_EXERCISED = "not_exercised"
STATISTICS = "statistics"
NO_BATCH = "no_batch_formed"  # not_exercised: every execution in the phase ran one request
NO_STATISTICS = "no_statistics"  # not_exercised: the server's statistics did not say what ran
NO_SHARED_STREAM = "no_stream_overlap"  # not_exercised: no stream was generating while another was
NOTHING_COMPARED = "nothing_compared"  # not_exercised: the check compared no reply at all
NO_BACKLOG = "no_backlog"  # not_exercised: never more sequences open at once than there are slots
NO_REUSE_ON_SLOT = "no_reuse_on_freed_slot"  # not_exercised: the log placed no reused ID on a slot its ID had used
SLOT_NOT_REUSED = "slot_not_reused"  # not_exercised: the log placed no follower on the abandoned sequence's slot
ONE_REPLICA_SERVED = "one_replica_served"  # the routing not_exercised: at most one replica served (routing.routed)
# What would exercise a batch where none formed (words: app/checker/words.WITNESS_ADVICE).
ADVICE_UNBATCHED = "cannot_batch"  # max_batch_size 0 or 1: no batch of two requests can form
ADVICE_LONGER_SESSIONS = "longer_sessions"  # holders that keep their slots until the reaper frees the victim's
ADVICE_MORE_SESSIONS = "more_sessions"  # more sessions than instances x slots, so some wait in the backlog
ADVICE_MORE_LOAD = "more_load"  # more sessions, or a queue delay (max_queue_delay_microseconds), lets batches form
ADVICE_SPREAD_REPLICAS = "spread_replicas"  # every replica up behind the balancer, and sessions it can tell apart


class Witness(TypedDict):
    """What every witness says (report schema $defs/witness); each kind below adds its readings."""

    source: str  # statistics, client, log or metrics: where the readings come from
    exercised: bool
    why: str | None  # not exercised: what did not happen (a code above)
    advice: str | None  # not exercised: what would exercise it (an ADVICE_ code)


class _BatchExtras(TypedDict, total=False):
    max_batch_size: int  # absent where the statistics said nothing
    overlapping: int  # the staggered streams' witness only (streams_shared)


class BatchWitness(Witness, _BatchExtras):
    batch_sizes: dict[str, int] | None  # executions per batch size (its text, as JSON keys are)
    largest_batch: int | None
    executions: int | None


class BacklogWitness(Witness):
    capacity: int
    max_open: int
    sequences: int
    longest_first_wait_s: float | None
    pending_peak: float | None


class ReuseWitness(Witness):
    reused: int | None
    same_instance: int | None
    same_slot: int | None


class FreedSlotWitness(Witness):
    next_on_slot: bool | None
    victim_ended_by: str | None
    idle_timeout_s: float | None


class RepliesWitness(Witness):
    compared: int


def batch_counts(server: LabServer, model: str) -> dict[int, int] | None:
    """Executions so far per batch size, over the model's versions; None where the statistics
    cannot be read or say nothing about batches."""
    try:
        with server.client(timeout_s=30) as client:
            stats = client.get_inference_statistics(model)
    except InferenceServerException:
        return None
    counts: dict[int, int] = {}
    found = False
    for version in stats.get("model_stats", []):
        for entry in version.get("batch_stats", []) or []:
            found = True
            size = int(entry.get("batch_size", 0))
            counts[size] = counts.get(size, 0) + int((entry.get("compute_infer") or {}).get("count", 0))
    return counts if found or stats.get("model_stats") else None


def ran_between(before: dict[int, int] | None, after: dict[int, int] | None) -> dict[int, int] | None:
    """Executions per batch size between two readings (sizes that ran none left out); None when
    either reading is missing."""
    if before is None or after is None:
        return None
    ran = {size: count - before.get(size, 0) for size, count in after.items()}
    return {size: n for size, n in sorted(ran.items()) if n > 0}


def batches(ran: dict[int, int] | None, max_batch_size: int) -> BatchWitness:
    """The witness of a phase meant to form batches of several requests: the executions per batch
    size that ran (the server's statistics), the largest, and whether one held more than one."""
    if ran is None:
        return {"source": STATISTICS, "exercised": False, "why": NO_STATISTICS, "batch_sizes": None, "largest_batch": None,
                "executions": None, "advice": None}
    largest = max(ran, default=0)
    exercised = largest > 1
    advice = None if exercised else ADVICE_UNBATCHED if max_batch_size <= 1 else ADVICE_MORE_LOAD
    return {"source": STATISTICS, "exercised": exercised, "why": None if exercised else NO_BATCH,
            "batch_sizes": {str(size): n for size, n in ran.items()}, "largest_batch": largest,
            "executions": sum(ran.values()), "advice": advice, "max_batch_size": max_batch_size}


def streams_shared(ran: dict[int, int] | None, overlapping: int, max_batch_size: int) -> BatchWitness:
    """The staggered streams' witness: the batch sizes the server ran while they generated, and how
    many streams were generating while another one was (the client's clock: sent before another's
    final response came). A model that batches must have run at least one execution of two or more
    requests; one that cannot batch (max_batch_size 0 or 1) needs streams that overlapped."""
    evidence = batches(ran, max_batch_size)
    evidence["overlapping"] = overlapping
    if max_batch_size <= 1:
        exercised = overlapping > 1
        evidence["exercised"] = exercised
        evidence["why"] = None if exercised else NO_SHARED_STREAM
        evidence["advice"] = None if exercised else ADVICE_MORE_LOAD
    elif overlapping <= 1 and evidence["exercised"]:  # batched, yet no two streams were in flight together
        evidence["exercised"], evidence["why"], evidence["advice"] = False, NO_SHARED_STREAM, ADVICE_MORE_LOAD
    return evidence


def backlog(rows: pd.DataFrame, capacity: int, pending_peak: float | None = None) -> BacklogWitness:
    """The interleaved run's witness: the most sequences open at once (from a sequence's first send
    to its last reply, on the client's clock) against the slots. Triton frees a slot only on END or
    the idle reaper, so more open sequences than slots means some waited in the backlog; the longest
    wait for a first reply says for how long. pending_peak is the server's side where its metrics
    were read (backlog_gate.py): requests Triton held pending while every slot was taken."""
    source = "client" if pending_peak is None else "metrics"
    if rows.empty:
        return {"source": source, "exercised": False, "why": NO_BACKLOG, "advice": ADVICE_MORE_SESSIONS, "capacity": capacity,
                "max_open": 0, "sequences": 0, "longest_first_wait_s": None, "pending_peak": pending_peak}
    ends = rows["t_recv"].fillna(rows["t_send"])
    spans = rows.assign(end=ends).groupby("conversation").agg(start=("t_send", "min"), end=("end", "max"))
    # a sequence's end before another's start at the same instant: the slot was free again
    events = sorted([(t, 1) for t in spans["start"]] + [(t, -1) for t in spans["end"]], key=lambda e: (e[0], e[1]))
    open_now = peak = 0
    for _, change in events:
        open_now += change
        peak = max(peak, open_now)
    first = rows[rows["step"] == 0]
    waits = (first["t_recv"] - first["t_send"]).dropna()
    exercised = capacity > 0 and (peak > capacity or bool(pending_peak))
    return {"source": source, "exercised": exercised, "why": None if exercised else NO_BACKLOG,
            "advice": None if exercised else ADVICE_MORE_SESSIONS, "capacity": capacity, "max_open": int(peak),
            "sequences": int(len(spans)), "longest_first_wait_s": round(float(waits.max()), 4) if len(waits) else None,
            "pending_peak": pending_peak}


def reuse(places: Values) -> ReuseWitness:
    """The ID-reuse run's witness: how many reused IDs' sequences the log placed on a slot an earlier
    sequence of the same ID had used (None: the log was not read, so only the reuse itself is known)."""
    same_slot = places.get("same_slot")
    exercised = bool(places.get("reused")) and same_slot != 0
    return {"source": "client" if same_slot is None else "log", "exercised": exercised,
            "why": None if exercised else NO_REUSE_ON_SLOT, "advice": None if exercised else ADVICE_MORE_SESSIONS,
            "reused": places.get("reused"), "same_instance": places.get("same_instance"), "same_slot": same_slot}


def freed_slot(places: Values) -> FreedSlotWitness:
    """An abandoned (or given-up) session's witness: whether the log placed the next session on its
    slot, and how its sequence ended there (end, reaped or cancelled; None: the log did not say)."""
    on_slot = places.get("next_on_slot")
    exercised = on_slot is not False
    # Seen: with short sessions (--steps 4) and a 5 s idle timeout the holders ended before the reaper
    # freed the abandoned slot, so the followers took the holders' slots instead.
    return {"source": "client" if on_slot is None else "log", "exercised": exercised,
            "why": None if exercised else SLOT_NOT_REUSED, "advice": None if exercised else ADVICE_LONGER_SESSIONS,
            "next_on_slot": on_slot, "victim_ended_by": places.get("victim_ended_by"), "idle_timeout_s": places.get("idle_timeout_s")}


def replies(values: Values) -> RepliesWitness:
    """The witness of a check whose situation is the replies themselves (the lone runs, golden,
    finite, after traffic): that it compared any."""
    compared = int(values.get("compared") or 0)
    return {"source": "client", "exercised": compared > 0, "why": None if compared else NOTHING_COMPARED, "advice": None,
            "compared": compared}


# A client's fault (streaming/faults.py) and the slow client (sequences/slow_client.py) are witnessed by the same
# readings: Triton's pending requests for the model and its state gauge, before the fault and until they settle.
SETTLE_S = 10.0  # past the lab generator's own sweep (5 s): a model that frees late is told apart from one that never does
POLL_S = 0.1
PENDING = "nv_inference_pending_request_count"


class FaultReadings(Witness):
    """What a client fault's witness reads from the server, before and after (this one's and the slow client's)."""

    fault: str
    neighbours: int
    pending_before: float | None
    pending_after: float | None
    state_metric: str | None
    state_before: float | None
    state_after: float | None
    settled_s: float | None
    settle_s: float


def readings_at(metrics_url: str, model: str, state_metric: str | None, timeout_s: float = 5.0) -> tuple[float | None, float | None]:
    """(Triton's pending requests for the model, the model's state gauge summed over its instances) now,
    from a metrics endpoint's URL; None for what the endpoint does not say (faults.readings from a target)."""
    text = server_stats.scrape(metrics_url, timeout_s=timeout_s)
    if text is None:
        return None, None

    def total(family: str) -> float | None:
        values = [s.value for _, s in server_stats.model_samples(text, model, (family,))]
        return float(sum(values)) if values else None

    return total(PENDING), total(state_metric) if state_metric else None
