"""The lab's presets (app/recogniser/engine/presets.PRESETS, by name): button label, title and why."""
from __future__ import annotations

from app.i18n import N_

LABELS = {
    "the_mistake": N_("The mistake"),
    "the_fix": N_("The fix"),
    "oldest_right": N_("Oldest, done right"),
    "oldest_wrong": N_("Oldest, done wrong"),
    "forgot_ready": N_("Forgot READY"),
}

TITLES = {
    "the_mistake": N_("The mistake: a stateful recogniser behind the dynamic batcher"),
    "the_fix": N_("The fix: the sequence batcher, direct strategy"),
    "oldest_right": N_("Oldest done right: state keyed by correlation ID"),
    "oldest_wrong": N_("Oldest done wrong: state keyed by batch row"),
    "forgot_ready": N_("Forgot READY: padding rows folded into live sessions"),
}

WHY = {
    "the_mistake": N_("Any request may land in any row of any instance, so sessions read each other's state."),
    "the_fix": N_("Each session keeps one instance and one slot for its whole life."),
    "oldest_right": N_("Rows move between executions, but the model finds each session's state by its CORRID."),
    "oldest_wrong": N_("Oldest promises no fixed row, so a row's state belongs to whoever sat there last."),
    "forgot_ready": N_("When a higher slot of the same instance has a request ready, direct fills a waiting session's slot with "
                       "a READY=0 padding row of garbage; a model that processes it corrupts that session."),
}
