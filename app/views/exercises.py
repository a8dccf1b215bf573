"""Failure-mode exercises: read the scenario, predict, run it on the real server, see why.

Each exercise's engine (app/recogniser/exercises/<name>/engine.py, or the generator's in app/generation/exercises; both
families listed by app/registry/families.py) returns codes and numbers; every word here comes from its words
(app/registry/exercise_words.py) in the learner's language, rendered when the page is drawn, so a result reads in
whichever language the learner switches to.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

import streamlit as st

from app.checker import words as check_words
from app.checker.page import report as check_report
from app.generation import words as generation_words
from app.i18n import N_
from app.quiz.store import ProgressStore
from app.registry import exercise_figures as exercise_charts
from app.registry import exercise_words as words
from app.registry import families
from app.text.errors import EXPLAINED, explain
from app.ui import chart, class_store, language, server_log
from app.ui.language import _, t
from app.ui.learner_id import learner
from app.ui.shared_server import NEXT_STEPS, lab

if TYPE_CHECKING:
    from app.exercise_kit import Exercise, ExerciseResult
    from app.lab.deployment import Deployer
    from app.lab.progress import Stage
    from app.lab.server import LabServer

RESULT_KEY = "exercise-result-{}"

# The generator's exercises raise the generation engine's codes too (app/generation/words.PROBLEMS), and the
# verification exercise the deployment checker's (app/checker/words PROBLEMS).
WORDING = {**generation_words.PROBLEMS, **check_words.PROBLEMS}

# What part of the exercise failed, for _failure's sentence.
RUN, DRAW = "run", "draw"
_BECAUSE = {
    RUN: N_("The exercise could not run: {reason:text}"),
    DRAW: N_("The exercise could not draw its charts: {reason:text}"),
}


def _failure(err: BaseException, doing: str) -> str:
    """What a learner reads when part of an exercise fails: the reason (app/text/errors.explain)."""
    _t = t()
    return _t.render(_BECAUSE[doing], reason=str(explain(err, _t, wording=WORDING, next_steps=NEXT_STEPS)))


def _run(name: str, choice: str, server: LabServer, deployer: Deployer) -> None:
    _t = t()
    bar = st.progress(0.0, text=_("Starting"))
    try:
        with st.spinner(_("Running on the Triton server...")):
            # Exercises call progress from this (the script) thread, so it may draw directly.
            def progress(done: int, total: int, stage: Stage) -> None:
                bar.progress(done / total, text=words.step(name, stage, _t))
            result = families.run(name, server, deployer, progress=progress)
    except EXPLAINED as err:  # a bug keeps its traceback
        st.error(_failure(err, RUN))
        return
    finally:
        bar.empty()
    st.session_state[RESULT_KEY.format(name)] = (choice, result)
    try:
        ProgressStore().record_prediction(learner(), f"exercise:{name}", choice, result.outcome, result.held(choice))
    except EXPLAINED as err:  # progress is a bonus; the result is still shown
        st.warning(_t.render(N_("Your prediction could not be saved: {reason:text}"), reason=class_store.saving_failed(err)))


def _show(exercise: Exercise, choice: str, result: ExerciseResult) -> None:
    _t = t()
    seen = words.option(exercise.name, result.outcome, _t)
    if result.held(choice):
        st.success(_t.render(N_("Your prediction held. The server did this: {seen:text}"), seen=seen))
    else:
        st.warning(_t.render(N_("Your prediction did not hold. The server did this: {seen:text}"), seen=seen))
    if not result.as_taught:
        usual = words.option(exercise.name, exercise.correct, _t)
        st.info(_t.render(N_("On this run the server did not show the usual outcome ({usual:text}). Timing decides "
                             "some of these cases: run it again and compare."), usual=usual))
    st.markdown("**" + _("Measured") + "**")
    st.dataframe(words.numbers_table(result, _t), hide_index=True, width="stretch")
    try:
        charts = exercise_charts.charts(result, _t)
    except EXPLAINED as err:  # the measurements above and the findings below still stand
        st.error(_failure(err, DRAW))
        charts = []
    except Exception as err:  # a bug in the charts: shown as one, with its traceback, and the rest of the result still stands
        st.exception(err)
        charts = []
    for index, drawn in enumerate(charts):
        chart.show(drawn.figure, drawn.summary, key=f"exercise-{result.name}-fig-{index}", width="stretch")
    findings = "\n".join(f"- {words.finding(result.name, found, _t)}" for found in result.findings)
    st.markdown("**" + _("What happened") + "**\n" + findings)
    st.markdown("**" + _("Why") + "**\n\n" + words.explanation(result, _t))
    for label, check in result.checks.items():  # an exercise that ran the deployment checker: its reports
        with st.expander(_t.render(N_("The deployment checker's report on `{model:text}`"), model=check.facts.name)):
            check_report.body(check_report.CheckRun(check), key=f"exercise-{result.name}-check-{label}")
    server_log.show(result.log, key=f"exercise-{result.name}-log")
    st.download_button(_("Download the result (JSON)"), json.dumps(result.to_json(), default=str, indent=1),
                       file_name=f"{result.name}.json", mime="application/json", key=f"exercise-{result.name}-json")


def render() -> None:
    _t = t()
    st.title(_("Failure modes"))
    st.markdown(_("Each exercise puts you in a situation that goes wrong in production. Predict what Triton will do, "
                  "then run it on the real server and read the evidence."))
    name = language.choice(st.selectbox, _("Exercise"), families.names(), key="exercise-name",
                           format_func=lambda n: words.title(n, _t))
    exercise = families.get(name)
    st.subheader(words.title(name, _t))
    st.markdown(words.scenario(name, _t))
    choice = language.choice(
        st.radio, "**" + _("Predict:") + "** " + words.question(name, _t), list(exercise.options), index=None,
        format_func=lambda k: words.option(name, k, _t), key=f"exercise-{name}-prediction")
    # After the text and the question: they show while Triton is still starting; only Run waits.
    handle = lab()  # shows the reason (and a restart button) itself when the server is not there
    clicked = st.button(_("Run on the server"), key=f"exercise-{name}-run", type="primary",
                        disabled=choice is None or handle is None)
    if choice is None:
        st.caption(_("Make a prediction first."))
    if clicked and choice is not None and handle is not None:
        _run(name, choice, *handle)
    stored = st.session_state.get(RESULT_KEY.format(name))
    if stored is not None:
        _show(exercise, *stored)


render()
