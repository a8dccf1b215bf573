"""Words for the sentiment model's runs (engine.py codes)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from app.i18n import N_, Words

if TYPE_CHECKING:
    from app.live.sentiment.engine import SentimentRun

MODES = {
    "one_at_a_time": N_("one at a time"),
    "at_once": N_("{concurrency:count} at once"),
    "one_request": N_("one request of all"),
    "in_order": N_("in order"),
    "shuffled": N_("shuffled"),
}
LABELS = {1: N_("positive"), 0: N_("negative")}
# Each chart's message in a sentence beside it (figures.py), read off the chart: tests/content/test_coverage.py
# leaves CHART_SUMMARIES out of the text map (lessons/COVERAGE.md says why).
CHART_SUMMARIES = {
    # figures.throughput
    "throughput": N_("Reviews scored per second: {runs:text}."),
    "throughput_item": N_("{mode:text} {rate:count}"),
    "throughput_gain": N_("The fastest way was {ratio:ratio} the slowest."),
    # figures.server_batches
    "server_batches": N_("Batches the server formed: {runs:text}."),
    "server_batches_item": N_("{mode:text}: {reviews:count} reviews in {executions:count} batches, the largest of "
                              "{largest:count}"),
}


def mode(run: SentimentRun, _: Words) -> str:
    """How a SentimentRun sent its reviews; an unknown mode (a caller's own name) is shown as given."""
    template = MODES.get(run.mode)
    return _.render(template, concurrency=run.concurrency) if template else str(run.mode)


def label(value: object, _: Words) -> str:
    return _(LABELS[int(bool(value))])


def diff(value: float, _: Words) -> str:
    """The largest score difference between runs, as a phrase."""
    if value == 0:
        return _("scores exactly equal")
    return _.render(N_("scores within {diff:text} of each other"), diff=f"{value:.0e}")
