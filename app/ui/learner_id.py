"""This browser's learner id, kept in st.session_state and in the URL (?learner=...), so a link keeps it."""
from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from app.i18n import N_
from app.quiz import access_rules
from app.ui.language import t

if TYPE_CHECKING:
    from app.quiz.store import ProgressStore


def learner() -> str:
    """This browser's learner id, "<name>.<token>" (see app/quiz/access_rules.py).

    A link's ?learner= is used only when it holds a whole id: whoever holds the link is that
    learner. A bare name (an old link, a guess) opens no one's progress: it becomes a new id
    under that name, and show_learner_notice() says so. A bare name put into this
    browser's state (a name box) likewise becomes a new id.
    """
    state = st.session_state
    current = state.get(LEARNER)
    if access_rules.is_learner_id(current):
        return current
    name = current
    if current is None:
        asked = st.query_params.get("learner")
        if access_rules.is_learner_id(asked):
            state[LEARNER] = asked
            return asked
        if asked:
            state[LEARNER_NOTICE] = access_rules.clean_name(asked) or ""
        name = asked
    learner_id = access_rules.make_learner_id(name)
    state[LEARNER] = learner_id
    return learner_id


LEARNER = "learner"
LEARNER_NOTICE = "learner-notice"


def learner_name() -> str:
    """The name part of this learner's id: what the learner and the instructor read."""
    return access_rules.learner_name(learner())


def rename_learner(store: ProgressStore, name: str) -> bool:
    """Give this learner a new name, keeping the token and every saved attempt and prediction.

    store is the ProgressStore; False when the name is unusable (blank).
    """
    old = learner()
    new = access_rules.renamed(old, name)
    if new is None:
        return False
    if new != old:
        store.rename_learner(old, new)
        st.session_state[LEARNER] = new
    return True


def show_learner_notice() -> None:
    """Say, once, that the link named a learner without a key and a fresh id was made."""
    learner()
    name = st.session_state.pop(LEARNER_NOTICE, None)
    if name is None:
        return
    st.info(t().render(N_("This link names a learner (`{name:text}`) but holds no key, so it opens no one's saved "
                          "progress: you start fresh under that name. Your own link is in the address bar now: "
                          "bookmark it to come back, and keep it to yourself."), name=name),
            icon=":material/key:")
