"""Live element of lesson 7: the verification a team runs before rolling a scheduler out."""
from __future__ import annotations

import streamlit as st

from app.i18n import N_
from app.lab.cases import rollout as checks
from app.text import rollout as words_of
from app.ui.language import _, t
from app.ui.live.common import explained_failures, store, stored
from app.ui.progress import run_with_progress


def rollout_checks(server, deployer) -> None:
    st.markdown(_(
        "Pick a deployment and run the checks. Try `asr_dynamic` too: a check that cannot fail proves nothing."
    ))
    target = st.selectbox(_("Deployment to verify"), checks.TARGETS, key="rollout-target")
    if st.button(_("Run the checks"), key="rollout-run", type="primary"):
        with explained_failures():
            results = run_with_progress(lambda p: checks.run_all(server, target, p), _("Verifying"))
            store("rollout_checks", (target, results))
    saved = stored("rollout_checks")
    if not saved:
        return
    target, results = saved
    words = t()
    st.markdown(words.render(N_("Results for `{target:text}`:"), target=target))
    for check in results:
        verdict = _("PASS") if check.passed else _("FAIL")
        (st.success if check.passed else st.error)(words.render(
            N_("{outcome:text}: {name:text}: {detail:text}"), outcome=verdict, name=words_of.name(check, words),
            detail=words_of.detail(check, words)))
