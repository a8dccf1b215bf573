"""Words of the id_collision exercise (engine.py beside it)."""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("Correlation ID collision: two clients, one sequence ID")
SCENARIO = N_(
    "A recogniser runs on the oldest strategy and, correctly for oldest, keeps each session's state under its "
    "correlation ID. Two client apps each pick the sequence ID themselves, say from a counter that starts at the "
    "same number, and both open a stream with that ID at the same moment over separate connections."
)
QUESTION = N_("What does Triton do with the second client's START for an ID that is already in flight?")
OPTIONS = {
    "refused": N_("It refuses it: that sequence ID is already in use."),
    "apart": N_("It keeps the two streams apart: each connection is its own sequence."),
    "merged": N_("It treats both as one sequence: they read each other's state, and the first END ends it for both."),
}
NUMBERS = {
    "shared_corrid": N_("shared correlation ID"),
    "collide_verdicts": N_("same ID: verdicts"),
    "collide_foreign_sessions": N_("same ID: sessions that read foreign state"),
    "collide_chunks_reading_other_session": N_("same ID: chunks that read the other session's state"),
    "collide_chunks_right": N_("same ID: chunks decoded right"),
    "collide_chunks": N_("same ID: chunks"),
    "collide_refused_chunks": N_("same ID: chunks refused"),
    "refused_after_other_end": N_("refused after the other session's END"),
    "fixed_intact": N_("unique IDs: every session intact"),
    "conflict_warnings_logged": N_("conflict warnings in Triton's log"),
}
FINDINGS = {
    # findings
    "same_id": N_("Same ID: verdicts {verdicts:verdicts}; {cross:count} of {chunks:count} chunks read the other session's state."),
    "session_foreign": N_("{who:session}: foreign, it read the state of {other:session}."),
    "session_verdict": N_("{who:session}: {verdict:verdict}."),
    "unique_intact": N_("Unique IDs: every session intact."),
    "unique_verdicts": N_("Unique IDs: verdicts {verdicts:verdicts}."),
    "log_warning": N_("Triton's log, {level:text}: `{message:text}`"),
    "log_unavailable": N_("Triton's log was not available on this run, so its conflict warnings could not be counted."),
    "refused_after_end": N_("{who:session}'s chunk {chunk:count} was refused after {ended:session} sent END: `{message:text}`"),
    # explanation
    "mechanism": N_(
        "Triton identifies a sequence only by its correlation ID; it does not know which client or connection a "
        "request came from."
    ),
    "seen_merged": N_(
        "On this server a START for an ID already in flight is not refused: the second client's chunks join the "
        "running sequence (its START resets the model's state for that ID), and from then on both clients' chunks "
        "update one state cell, the one keyed by the shared ID, so each reads what the other wrote ({cross:count} of "
        "{chunks:count} chunks did) and both transcripts are corrupted, with the verdict 'foreign' naming the other "
        "session. When the shorter stream sends END the sequence is over for both: the longer stream's next chunk "
        "has no START and is refused."
    ),
    "seen_refused": N_("On this run the server refused the second client's START for the ID in flight: one client got an error."),
    "seen_apart": N_("On this run both transcripts came back intact: the two streams did not overlap in time."),
    "log_only_trace": N_(
        "The only trace on the server side is a WARNING in Triton's log (quoted in the log panel): the sequence "
        "'has a conflict' and the previous one 'will be terminated early'. Despite those words nothing is ended: both "
        "clients carry on as one sequence. The clients get no error for it."
    ),
    "fix": N_(
        "Nothing in the server can tell two clients apart by ID; the fix is on the client side: IDs unique across "
        "every client of the model (a UUID string, or a counter with a per-process random prefix, as this lab uses)."
    ),
    "fixed_intact": N_("With them both sessions came back intact."),
    "fixed_verdicts": N_("With them the sessions came back with verdicts {verdicts:verdicts}."),
}
STEPS = {
    "deploying": N_("Deploying oldest with state keyed by correlation ID"),
    "same_id": N_("Two clients, both with correlation ID {corrid:text}"),
    "unique_ids": N_("The fix: the same two clients with unique IDs"),
    "measuring": N_("Measuring"),
}

# Each chart's message in words, beside it (figures.py beside it): numbers read off the chart.
CHART_SUMMARIES = {
    "chunks": N_("Whose state each chunk read: {runs:text}."),
    "run_item": N_("{run:text}: {other:count} of {chunks:count} chunks read the other session's state, {right:count} "
                   "came back right"),
}
