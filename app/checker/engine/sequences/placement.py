"""Where each request ran, from what the server wrote: its log (which instance and slot held each
sequence) and its trace (which requests ran in one execution). Pure: lines and frames in, frames out.

Sequence batcher, log at verbosity 1 (app/lab/observation/server_log.py): "Enqueuing CORRID c into batcher
<instance>, sequence slot s" for a request that has a slot, and the sequence's end ("End
sequence", the reaper's "force-ending", or "Releasing canceled sequence"). A correlation ID is
reused only after its previous sequence ended, so the k-th run of lines for an ID between two
ends belongs to the k-th sequence that used it.

Trace (TIMESTAMPS): Triton's Python backend reports one compute start and end per execution,
the same for every request of a batch, so requests with equal stamps ran together. The trace
does not name the instance: where the log did not place a request, executions are packed into
lanes (an execution starts in the lowest lane free at its start), as many lanes as executions
overlapped, which is at most the number of instances.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeAlias

import pandas as pd

from app.lab.observation import LogCode, server_log

Event: TypeAlias = tuple[str, str | None, int | None]  # ("slot" or how it ended, instance, slot)

# Only these lines matter; the rest of a verbosity-1 log (about twenty lines a request) is skipped unparsed.
_WANTED = ("Enqueuing CORRID", "End sequence CORRID", "end sequence CORRID", "Reaper: force-ending CORRID",
           "Releasing canceled sequence CORRID", "force-end cancelled sequence CORRID")
# How a sequence's slot was given back: its END, the idle reaper, or a cancelled request.
_ENDED_BY = {LogCode.SEQUENCE_END: "end", LogCode.REAPER_FORCE_END: "reaped", LogCode.CANCELLED_RELEASED: "cancelled"}


def log_lines(window: server_log.LogWindow) -> Iterator[str]:
    """The lines a server_log.LogWindow gained, read one at a time and only those naming a
    CORRID kept: at verbosity 1 a phase of thousands of requests writes tens of megabytes."""
    if window.path is None:
        return
    try:
        with open(window.path, "rb") as handle:
            handle.seek(window.offset)
            for raw in handle:
                if b"CORRID" in raw and raw.endswith(b"\n"):
                    yield raw.decode(errors="replace")
    except OSError:
        return


def sequence_events(lines: Iterable[str], model: str) -> dict[str, list[Event]]:
    """corrid -> [(event, instance or None, slot or None)] in log order, for `model`.
    event: "slot" (a request placed), or how the sequence ended: "end", "reaped", "cancelled"."""
    out: dict[str, list[Event]] = {}
    for line in lines:
        if not any(marker in line for marker in _WANTED):
            continue
        for entry in server_log.parse([line]):  # a written line can hold two entries (server_log.split_line)
            _note(out, entry, model)
    return out


def _note(out: dict[str, list[Event]], entry: server_log.LogEntry, model: str) -> None:
    if entry.corrid is None:
        return
    batcher = entry.values.get("batcher")
    if entry.model not in (None, model) or (batcher is not None and not batcher.startswith(f"{model}_")):
        return  # another model's line (a line naming neither is kept: the scheduler's cancel notice)
    if entry.code == LogCode.SEQUENCE_ENQUEUED:
        out.setdefault(entry.corrid, []).append(("slot", batcher, int(entry.values["slot"])))
    elif entry.code in _ENDED_BY:
        out.setdefault(entry.corrid, []).append((_ENDED_BY[entry.code], None, None))


def place_sequences(steps: pd.DataFrame, events: dict[str, list[Event]]) -> pd.DataFrame:
    """Add `instance` and `slot` to the rows of one phase: the slot its sequence held (None where
    the log said nothing). Sequences of one ID are told apart by when they started."""
    steps = steps.copy()
    steps["instance"] = None
    steps["slot"] = pd.array([pd.NA] * len(steps), dtype="Int64")
    steps["ended_by"] = None
    if steps.empty or not events:
        return steps
    firsts = steps.groupby(["corrid", "conversation"])["t_send"].min().reset_index().sort_values("t_send")
    for corrid, group in firsts.groupby("corrid"):
        segments = _segments(events.get(str(corrid), []))
        for k, sequence in enumerate(group["conversation"]):
            if k < len(segments):
                mask = (steps["corrid"] == corrid) & (steps["conversation"] == sequence)
                steps.loc[mask, "instance"] = segments[k][0]
                steps.loc[mask, "slot"] = segments[k][1]
                steps.loc[mask, "ended_by"] = segments[k][2]
    return steps


def _segments(events: list[Event]) -> list[tuple[str | None, int | None, str | None]]:
    """One (instance, slot, how it ended) per sequence of an ID: the first slot line after the
    previous end, and the end that closes it (None while it is still open)."""
    out: list[tuple[str | None, int | None, str | None]] = []
    current: tuple[str | None, int | None] | None = None
    for event, instance, slot in events:
        if event == "slot":
            if current is None:
                current = (instance, slot)
        elif current is not None:
            out.append((*current, event))
            current = None
        # An end with no slot line since the last one is the same sequence's second notice (a
        # cancelled sequence is released and then force-ended): it starts nothing new.
    if current is not None:
        out.append((*current, None))
    return out


def executions(steps: pd.DataFrame) -> pd.DataFrame:
    """Add `execution` (one number per batch run), `exec_start`/`exec_end` (seconds on the check's
    clock, t_send's: the server's clock is pinned by its earliest request start to the earliest
    send) and `lane` (the instance where known, else a packed lane) to traced rows."""
    steps = steps.copy()
    for column in ("execution", "exec_start", "exec_end", "lane"):
        steps[column] = None
    traced = steps["compute_start_ns"].notna() & steps["compute_end_ns"].notna() if "compute_start_ns" in steps else None
    if traced is None or not traced.any():
        return steps
    rows = steps[traced]
    offset_s = float(rows["t_send"].min()) - int(rows["request_start_ns"].min()) / 1e9
    keys = list(zip(rows["variant"], rows["compute_start_ns"].astype("int64"), rows["compute_end_ns"].astype("int64"), strict=True))
    numbers: dict[tuple[str, int, int], int] = {}  # (variant, compute start, compute end) -> execution
    for key in sorted(set(keys), key=lambda k: (k[1], k[2])):
        numbers[key] = len(numbers)
    steps.loc[traced, "execution"] = [numbers[k] for k in keys]
    steps.loc[traced, "exec_start"] = rows["compute_start_ns"].astype("int64") / 1e9 + offset_s
    steps.loc[traced, "exec_end"] = rows["compute_end_ns"].astype("int64") / 1e9 + offset_s
    lanes = _lanes(steps[traced])
    steps.loc[traced, "lane"] = [lanes[e] for e in steps.loc[traced, "execution"]]
    return steps


def _lanes(rows: pd.DataFrame) -> dict[int, str]:
    """Execution -> lane: the instance its requests' sequences held when the log said, else
    "lane <n>" from packing each variant's executions in time order."""
    out: dict[int, str] = {}
    for _, group in rows.groupby("variant"):
        spans = group.groupby("execution").agg(start=("exec_start", "min"), end=("exec_end", "max"), instance=("instance", "first"))
        free_at: list[float] = []
        for execution, span in spans.sort_values("start").iterrows():
            if isinstance(span["instance"], str):
                out[int(execution)] = span["instance"]
                continue
            lane = next((i for i, end in enumerate(free_at) if end <= span["start"]), None)
            if lane is None:
                lane = len(free_at)
                free_at.append(span["end"])
            else:
                free_at[lane] = span["end"]
            out[int(execution)] = f"lane {lane}"
    return out


def followers(steps: pd.DataFrame) -> pd.Series:
    """For each follower row of an abandon round, the victim role whose slot its sequence took
    ("" where the log did not place both, or it took another slot)."""
    out = pd.Series("", index=steps.index, dtype=object)
    rounds = steps[(steps["phase"] == "abandon_round") & steps["instance"].notna()]
    for _, group in rounds.groupby("variant"):
        starts = group.groupby("conversation").agg(t=("t_send", "min"), role=("role", "first"), instance=("instance", "first"),
                                                   slot=("slot", "first"))
        victims = starts[starts["role"].isin(["victim_abandon", "victim_cancel"])]
        for sequence, f in starts[starts["role"] == "follower"].iterrows():
            # The victim that last held this slot before the follower came (rounds may reuse one slot).
            before = victims[(victims["instance"] == f["instance"]) & (victims["slot"] == f["slot"]) & (victims["t"] < f["t"])]
            if len(before):
                mask = (steps["conversation"] == sequence) & (steps["phase"] == "abandon_round")
                out[mask] = before.sort_values("t").iloc[-1]["role"]
    return out
