"""Live element of lesson 7: a team runs the rollout guide's checks on a deployment before rolling it out.

The checks are the deployment checker's (app/checker/engine/run.run_check, through
app/live/rollout/engine.py), run in this script thread so its progress callback moves the bar
directly, as on the "Check a deployment" page; its report is drawn by app/checker/page/report.py,
with the lesson's reading of the result above it (words.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from app.checker import words as check_words
from app.checker.page import report as check_report
from app.live.common.view import explained_failures, store, stored
from app.live.rollout import engine as checks
from app.live.rollout import words as words_of
from app.ui import language
from app.ui.language import _, t

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.server import LabServer

RESULT = "rollout_checks"
BOX = {"sequence_held": st.success, "stateless_held": st.success, "recogniser_keeps_state": st.warning, "broken": st.error}


def rollout_checks(server: LabServer, deployer: Deployer) -> None:
    words = t()
    st.markdown(_(words_of.INTRO))
    target = language.choice(st.selectbox, _("Deployment to check"), checks.TARGETS, key="rollout-target",
                             format_func=lambda model: words_of.target(model, words))
    if st.button(_("Run the checks"), key="rollout-run", type="primary"):
        store(RESULT, None)  # a check that fails leaves its message alone, not an older result under it
        with explained_failures(wording=check_words.PROBLEMS):
            store(RESULT, _run(server, deployer, target))
    saved = stored(RESULT)
    if saved is None:
        return
    reading = checks.reading(saved.result)
    BOX[reading](words.render(words_of.RESULT_FOR, model=saved.result.facts.name) + " " + _(words_of.READINGS[reading]))
    check_report.body(saved, key="rollout")


def _run(server: LabServer, deployer: Deployer, model: str) -> check_report.CheckRun:
    """The check, with its progress and its place in the run queue on one bar."""
    with check_report.progress_bar(model) as (progress, waiting):
        return check_report.CheckRun(checks.check_target(server, deployer, model, progress=progress, on_wait=waiting))
