"""Each checker chart's message in a sentence beside it (app/checker/figures.py), for a learner who cannot
tell its colours apart or reads the page with a screen reader.

Every sentence only reads numbers off the chart it sits beside, so CHART_SUMMARIES is what
tests/content/test_coverage.py leaves out of the text map (lessons/COVERAGE.md says why).
English templates marked with N_(); fields are filled by app/checker/figures.py from the tables it draws.
"""
from __future__ import annotations

from app.i18n import N_

CHART_SUMMARIES = {
    # figures.timeline
    "check_timeline": N_("{executions:count} executions of {sessions:sessions} on {lanes:count} rows; "
                         "steps that differed from their reference: {diverged:count}."),
    # figures.timeline of a decoupled model
    "check_stream_timeline": N_("{requests:requests}, each sent alone twice and staggered once ({streams:streams}): "
                                "{alone:replies} heard alone, {staggered:replies} staggered; responses that differed from "
                                "their lone stream: {diverged:count}; streams given up or failed: {stopped:count}."),
    # figures.errors
    "check_errors": N_("{check:text} — lines beyond their tolerance: {lines:count}; the largest difference was "
                       "{largest:text} ({session:session}, {output:text}, step {step:count})."),
    "check_errors_no_reply": N_("{check:text} — lines beyond their tolerance: {lines:count}; steps with no reply to "
                                "compare: {missing:count}."),
}
