"""Words for lesson 7's pre-rollout checks (app/lab/cases/rollout.py codes)."""
from __future__ import annotations

from app.i18n import N_, Words
from app.text.sentiment import diff

NAMES = {
    "interleaved_intact": N_("Interleaved sessions stay intact"),
    "fresh_after_end": N_("A new sequence after END inherits nothing"),
    "sentiment_split_invariant": N_("The sentiment model is identical across batch splits"),
}
DETAILS = {
    "all_intact": N_("all {sessions:count} interleaved sessions came back intact"),
    "corrupted": N_("corrupted sessions: {verdicts:verdicts}"),
    "fresh": N_("every new sequence read STATE_IN 0 at its first chunk"),
    "inherited": N_("{inherited:count} of {sequences:count} new sequences began with state left by earlier requests"),
    "identical": N_("labels identical across {splits:count} batch splits; {scores:text}"),
    "differs": N_("labels identical: {labels_identical:yes_no}; largest score difference {diff:text}"),
}


def name(check, _: Words) -> str:
    return _(NAMES[check.name])


def detail(check, _: Words) -> str:
    values = dict(check.values)
    if "max_score_diff" in values:
        values["scores"] = diff(values["max_score_diff"], _)
        values["diff"] = f"{values['max_score_diff']:.1e}"
    return _.render(DETAILS[check.detail], **values)
