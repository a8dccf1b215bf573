"""Words for the presenter's demos (app/presenter/engine.py codes) and the class vote."""
from __future__ import annotations

from app.i18n import N_, Words
from app.text import prediction as prediction_words
from app.text import presets as preset_words

TITLES = {
    "state_key": N_("Oldest: where the model keeps its state"),
    "ready": N_("Direct: honouring READY"),
    "scheduler": N_("Dynamic batcher or sequence batcher"),
}

# The question asked of the class; {setup:text} is the asked side's preset title.
QUESTIONS = {
    "state_key": N_("Eight sessions stream at once through this deployment: `oldest`, with the model keeping its "
                    "state per batch row (`state_key: slot`). What happens to their transcripts?"),
    "ready": N_("Eight sessions, starting and pausing at different moments, stream through `direct` with a model "
                "that ignores READY (`honour_ready: false`). What happens to their transcripts?"),
    "scheduler": N_("Eight sessions stream at once through the recogniser deployed behind the dynamic batcher, "
                    "2 instances with 4 rows each. What happens to their transcripts?"),
}

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


def title(code: str, _: Words) -> str:
    return _(TITLES[code])


def question(code: str, _: Words) -> str:
    return _(QUESTIONS[code])


def side(code: str, _: Words) -> str:
    return _(SIDES[code])


def setup_title(preset: str, _: Words) -> str:
    return _(preset_words.TITLES[preset])


def outcome(side: str, outcome: str, _: Words) -> str:
    return _.render(OUTCOMES[side], outcome=_(prediction_words.OUTCOMES[outcome]))


def step(number: int, _: Words) -> str:
    return _(STEPS[number])
