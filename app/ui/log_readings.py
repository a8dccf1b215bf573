"""One-line readings of Triton's log lines, for the log panel and the CLI (no Streamlit here).

The engine classifies a line into a LogCode with values (app/lab/server_log.py); this is
the one place that turns a code into words. Each reading says what the line means for the
learner, using the values taken from the line itself.
"""
from __future__ import annotations

from app.lab.run_log import RunLog
from app.lab.server_log import Level, LogCode, LogEntry, Unavailable

READINGS: dict[LogCode, str] = {
    LogCode.SEQUENCE_CONFLICT: "A START arrived for correlation ID {corrid} while a sequence with that ID was still "
                               "running: Triton terminates the running one early (requests it already holds still "
                               "run) and carries on with the new one under the same ID. No client gets an error.",
    LogCode.START_FLAG_MISSING: "Triton refused a request for sequence {corrid}: it holds no running sequence with that "
                                "ID (never started, ended, or reaped), so the request needed a START.",
    LogCode.INFER_FAILED: "Triton refused a request and told the client why.",
    LogCode.REAPER_IDLE: "Sequence {corrid} sent nothing for longer than max_sequence_idle_microseconds.",
    LogCode.REAPER_FORCE_END: "The idle reaper ended sequence {corrid} and freed slot {slot} of {batcher}; the model "
                              "gets no request and no END for it.",
    LogCode.SEQUENCE_ENQUEUED: "A request of sequence {corrid} went into its slot {slot} of {batcher}.",
    LogCode.BACKLOG_ENQUEUED: "No free slot: sequence {corrid} waits in the backlog.",
    LogCode.SEQUENCE_END: "Sequence {corrid} sent END and leaves slot {slot} of {batcher}.",
    LogCode.SLOT_FREED: "Slot {slot} of {batcher} is free for the next sequence.",
    LogCode.CANCELLED_RELEASED: "A cancelled request released sequence {corrid} and its slot.",
    LogCode.MODEL_LOADING: "Triton started loading {model} version {version}.",
    LogCode.MODEL_LOADED: "{model} is loaded and ready.",
    LogCode.MODEL_UNLOADED: "{model} version {version} was unloaded.",
    LogCode.MODEL_LOAD_FAILED: "{model} failed to load; the version that was serving keeps serving.",
}
UNCLASSIFIED = {
    Level.WARNING: "A warning this lab does not classify: read the line itself.",
    Level.ERROR: "An error this lab does not classify: read the line itself.",
    Level.FATAL: "A fatal error: the server is going down.",
}
UNAVAILABLE = {
    Unavailable.EXTERNAL_SERVER: "The server log is not available: this lab talks to an external Triton "
                                 "(TRITON_URL) and was not given its log file (set TRITON_LOG_FILE to the "
                                 "server's --log-file to quote it here).",
    Unavailable.NOT_STARTED: "The server log is not available: the embedded server was not running.",
}


class _Values(dict):
    def __missing__(self, key: str) -> str:  # a line that lacks a value its reading names
        return "?"


def reading(entry: LogEntry) -> str:
    if entry.code is None:
        return UNCLASSIFIED.get(entry.level, "")
    return READINGS[entry.code].format_map(_Values(entry.values))


def routine_counts(log: RunLog) -> str:
    """Lines counted, not quoted, for the panel's caption: '412 x a request went into its sequence's slot, ...'."""
    names = {LogCode.SEQUENCE_ENQUEUED: "a request went into its sequence's slot", LogCode.SEQUENCE_END: "a sequence sent END",
             LogCode.SLOT_FREED: "a slot was freed"}
    counts = log.counts()
    return ", ".join(f"{counts[code]} x {name}" for code, name in names.items() if counts.get(code))


def summary_lines(log: RunLog | None, per_kind: int = 3) -> list[str]:
    """The panel as plain text for the CLI: the first few evidence lines of each kind, verbatim,
    each followed by its reading (a backlog of hundreds must not hide the reaper's lines)."""
    if log is None:
        return []
    if not log.available:
        return [UNAVAILABLE[log.unavailable]]
    evidence = log.evidence()
    routine = routine_counts(log)
    lines = [f"{len(evidence)} line(s) of evidence" + (f"; also {routine}" if routine else "")]
    shown: dict[object, int] = {}
    for entry in evidence:
        kind = entry.code or entry.level
        shown[kind] = shown.get(kind, 0) + 1
        if shown[kind] <= per_kind:
            lines += [f"  {entry.raw.splitlines()[0]}", f"    -> {reading(entry)}"]
    hidden = sum(n - per_kind for n in shown.values() if n > per_kind)
    if hidden:
        lines.append(f"  ... and {hidden} more of the same kinds (all in the JSON)")
    return lines
