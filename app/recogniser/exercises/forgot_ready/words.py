"""Words of the forgot_ready exercise (engine.py beside it)."""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("Forgot READY: padding rows folded into live sessions")
SCENARIO = N_(
    "The recogniser runs on the direct sequence batcher (2 instances × 4 slots), state kept per batch slot, which "
    "direct makes safe. But its execute() processes every row it is handed and never looks at the READY control "
    "input. Six clients stream at different paces (think times from 5 to 65 ms), so at any moment some slots hold "
    "a live session whose next chunk has not arrived yet."
)
QUESTION = N_("What happens to the sessions?")
OPTIONS = {
    "intact": N_("All intact: direct pins each session to its slot, so nothing else touches its state."),
    "garbage": N_("Some are corrupted: rows the scheduler fills with padding are processed and overwrite their state."),
    "refused": N_("Triton refuses requests that arrive while a batch is being formed."),
}
NUMBERS = {
    "ignored_verdicts": N_("READY ignored: verdicts"),
    "ignored_sessions_corrupted": N_("READY ignored: sessions corrupted"),
    "ignored_sessions_read_padding": N_("READY ignored: sessions that read a padding row's state"),
    "ignored_wrong_symbols": N_("READY ignored: wrong symbols"),
    "padding_rows_run": N_("padding rows the model ran"),
    "requests": N_("real requests"),
    "honoured_intact": N_("READY honoured: every session intact"),
    "honoured_padding_rows_run": N_("READY honoured: padding rows skipped"),
}
FINDINGS = {
    # findings
    "ignored": N_("READY ignored: verdicts {verdicts:verdicts}; {padding:count} session(s) read state a padding row wrote."),
    "padding_rows": N_(
        "The model ran {padding:count} padding rows beside {requests:count} real requests (batch sizes {batch_sizes:text})."
    ),
    "session_padding": N_("{who:session}: {verdict:verdict}, it read state a padding row wrote."),
    "honoured_intact": N_("READY honoured: all intact, with {skipped:count} padding rows skipped."),
    "honoured_verdicts": N_("READY honoured: verdicts {verdicts:verdicts}, with {skipped:count} padding rows skipped."),
    # explanation
    "direct_width": N_(
        "Direct gives each sequence a fixed slot, and every execution hands the model a batch that reaches up to the "
        "highest slot with a request ready."
    ),
    "padding_request": N_(
        "Each slot below the highest ready one that has no request ready, whether empty or held by a session that has "
        "not sent its next chunk yet, gets a padding request: READY = 0, CORRID = 0, and input data that is not "
        "initialised. So a waiting session's slot gets one only when a higher slot of the same instance has a request ready."
    ),
    "this_run": N_("This run produced {padding:count} such rows."),
    "folded": N_(
        "A model that ignores READY decodes that garbage and writes it into the slot's state, which belongs to a live "
        "session, so its next real chunk builds on a wrong letter (verdict 'garbage', STATE_OWNER = the padding marker)."
    ),
    "varies": N_("Which sessions are hit depends on who was thinking when others sent, so it varies from run to run."),
    "fixed_intact": N_("The same model honouring READY skipped the padding rows and every session came back intact."),
    "fixed_verdicts": N_(
        "The same model honouring READY skipped the padding rows and the sessions came back with verdicts {verdicts:verdicts}."
    ),
    "rule": N_("Return a response for every row, but touch state only where READY is 1."),
}
STEPS = {
    "ignored": N_("Direct with honour_ready = false: {sessions:count} staggered sessions"),
    "deploying": N_("Deploying the same with honour_ready = true"),
    "honoured": N_("The same sessions, READY honoured"),
    "measuring": N_("Measuring"),
}

# Each chart's message in words, beside it (figures.py beside it): numbers read off the chart.
CHART_SUMMARIES = {
    "sessions": N_("Wrong symbols per session: {runs:text}."),
    "run_item": N_("{run:text}: {intact:count} of {total:count} sessions intact, {wrong:count} wrong symbols in all"),
}
