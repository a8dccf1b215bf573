"""One-line readings of Triton's log lines, for the log panel and the CLI (no Streamlit here).

The engine classifies a line into a LogCode with values (app/lab/observation/server_log.py); this is
the one place that turns a code into words, in the reader's language (a Words, app/i18n).
Each reading says what the line means for the learner, using the values taken from the line
itself; the line is always quoted verbatim beside it.
"""
from __future__ import annotations

from app.i18n import N_, Words, words
from app.lab.observation import Level, LogCode, LogEntry, RunLog, Unavailable

READINGS: dict[LogCode, str] = {
    LogCode.SEQUENCE_CONFLICT: N_("A START arrived for correlation ID {corrid:text} while a sequence with that ID was still "
                                  "open. Triton only warns: despite the line's 'terminated early', it ends nothing, and "
                                  "from now on both clients' requests run as one sequence in the same slot. No client "
                                  "gets an error."),
    LogCode.START_FLAG_MISSING: N_("Triton refused a request for sequence {corrid:text}: it holds no running sequence with that "
                                   "ID (never started, ended, or reaped), so the request needed a START."),
    LogCode.INFER_FAILED: N_("Triton refused a request and told the client why."),
    LogCode.REAPER_IDLE: N_("No request of sequence {corrid:text} arrived for longer than max_sequence_idle_microseconds. "
                            "Triton also writes this line one window after a sequence that ended with END, and then only "
                            "forgets the ID: only a 'force-ending' line means the reaper ended a live sequence."),
    LogCode.REAPER_FORCE_END: N_("The idle reaper ended sequence {corrid:text} and freed slot {slot:text} of {batcher:text}; the model "
                                 "gets no request and no END for it."),
    LogCode.SEQUENCE_ENQUEUED: N_("A request of sequence {corrid:text} went into its slot {slot:text} of {batcher:text}."),
    LogCode.BACKLOG_ENQUEUED: N_("No free slot: sequence {corrid:text} waits in the backlog."),
    LogCode.SEQUENCE_END: N_("Sequence {corrid:text} sent END and leaves slot {slot:text} of {batcher:text}."),
    LogCode.SLOT_FREED: N_("Slot {slot:text} of {batcher:text} is free for the next sequence."),
    LogCode.CANCELLED_RELEASED: N_("A cancelled request released sequence {corrid:text} and its slot."),
    LogCode.MODEL_LOADING: N_("Triton started loading {model:text} version {version:text}."),
    LogCode.MODEL_LOADED: N_("{model:text} is loaded and ready."),
    LogCode.MODEL_UNLOADED: N_("{model:text} version {version:text} was unloaded."),
    LogCode.MODEL_LOAD_FAILED: N_("{model:text} failed to load; the version that was serving keeps serving."),
}
UNCLASSIFIED = {
    Level.WARNING: N_("A warning this lab does not classify: read the line itself."),
    Level.ERROR: N_("An error this lab does not classify: read the line itself."),
    Level.FATAL: N_("A fatal error: the server is going down."),
}
UNAVAILABLE = {
    Unavailable.EXTERNAL_SERVER: N_("The server log is not available: this lab talks to an external Triton "
                                    "(TRITON_URL) and was not given its log file (set TRITON_LOG_FILE to the "
                                    "server's --log-file to quote it here)."),
    Unavailable.NOT_STARTED: N_("The server log is not available: the embedded server was not running."),
}
ROUTINE = {
    LogCode.SEQUENCE_ENQUEUED: N_("{n:count} × a request went into its sequence's slot"),
    LogCode.SEQUENCE_END: N_("{n:count} × a sequence sent END"),
    LogCode.SLOT_FREED: N_("{n:count} × a slot was freed"),
}


def _english() -> Words:
    return words("en")


def unavailable(why: Unavailable, _: Words | None = None) -> str:
    return (_ or _english())(UNAVAILABLE[why])


def reading(entry: LogEntry, _: Words | None = None) -> str:
    _ = _ or _english()
    if entry.code is None:
        template = UNCLASSIFIED.get(entry.level)
        return _(template) if template else ""
    template = READINGS[entry.code]
    return _.render(template, **{name: entry.values.get(name, "?") for name in _fields(template)})


def _fields(template: str) -> list[str]:
    import string

    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


def routine_counts(log: RunLog, _: Words | None = None) -> str:
    """Lines counted, not quoted, for the panel's caption: '412 × a request went into its sequence's slot, ...'."""
    _ = _ or _english()
    counts = log.counts()
    return _(N_(", ")).join(_.render(template, n=counts[code]) for code, template in ROUTINE.items() if counts.get(code))


def summary_lines(log: RunLog | None, _: Words | None = None, per_kind: int = 3) -> list[str]:
    """The panel as plain text for the CLI: the first few evidence lines of each kind, verbatim,
    each followed by its reading (a backlog of hundreds must not hide the reaper's lines)."""
    _ = _ or _english()
    if log is None:
        return []
    if log.unavailable is not None:  # not log.available
        return [unavailable(log.unavailable, _)]
    evidence = log.evidence()
    routine = routine_counts(log, _)
    head = _.render(N_("{n:count} line(s) of evidence"), n=len(evidence))
    if routine:
        head += _.render(N_("; also {routine:text}"), routine=routine)
    lines = [head]
    shown: dict[object, int] = {}
    for entry in evidence:
        kind = entry.code or entry.level
        shown[kind] = shown.get(kind, 0) + 1
        if shown[kind] <= per_kind:
            lines += [f"  {entry.raw.splitlines()[0]}", f"    -> {reading(entry, _)}"]
    hidden = sum(n - per_kind for n in shown.values() if n > per_kind)
    if hidden:
        lines.append("  " + _.render(N_("... and {n:count} more of the same kinds (all in the JSON)"), n=hidden))
    return lines
