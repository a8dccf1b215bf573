"""Words for the recogniser's Presenter demos (app/recogniser/demo.py codes): their titles, the question asked of
the class, and the title of the preset each side runs. The page's words around any demo are app/presenter/words.py."""
from __future__ import annotations

from app.i18n import N_, Words
from app.recogniser.words import presets as preset_words

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


def title(code: str, _: Words) -> str:
    return _(TITLES[code])


def question(code: str, _: Words) -> str:
    return _(QUESTIONS[code])


def setup_title(preset: str, _: Words) -> str:
    return _(preset_words.TITLES[preset])
