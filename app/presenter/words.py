"""Words for the Presenter's page around any demo: its sides, steps, the class vote and the reveal's headline.
The recogniser's demos' titles and questions are app/recogniser/words/demo.py."""
from __future__ import annotations

from app.i18n import N_, Words
from app.recogniser.words import prediction as prediction_words

SIDES = {"before": N_("Before"), "after": N_("After")}
STEPS = {
    1: N_("The change"),
    2: N_("The question"),
    3: N_("The class votes"),
    4: N_("The run"),
    5: N_("The reveal"),
}
# The reveal's headline: what the asked side's run did ({outcome:text} is intact or corrupted).
OUTCOMES = {
    "before": N_("Before the change, the run came back {outcome:text}."),
    "after": N_("After the change, the run came back {outcome:text}."),
}
POLL_STATES = {"open": N_("open"), "closed": N_("closed"), "revealed": N_("revealed")}
# The vote chart's message in a sentence beside it (figures.py), read off the chart: tests/content/test_coverage.py
# leaves CHART_SUMMARIES out of the text map (lessons/COVERAGE.md says why).
CHART_SUMMARIES = {
    # figures.votes_figure
    "votes": N_("{n:count} votes: {options:text}."),
    "votes_item": N_("“{option:text}” {n:count}"),
    "votes_right": N_("Right: {options:text}."),
}


def side(code: str, _: Words) -> str:
    return _(SIDES[code])


def outcome(side: str, outcome: str, _: Words) -> str:
    return _.render(OUTCOMES[side], outcome=_(prediction_words.OUTCOMES[outcome]))


def step(number: int, _: Words) -> str:
    return _(STEPS[number])
