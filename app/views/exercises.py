"""Failure-mode exercises: read the scenario, predict, run it on the real server, see why."""
from __future__ import annotations

import json

import streamlit as st
from tritonclient.utils import InferenceServerException

from app.lab import exercises
from app.lab.deployments import DeploymentError
from app.lab.server.errors import ServerError
from app.ui import server_log
from app.ui.session import lab, learner

RESULT_KEY = "exercise-result-{}"


def _failure(err: Exception, doing: str) -> str:
    """What a learner reads when part of an exercise fails: the reason, never a traceback."""
    if isinstance(err, (ServerError, DeploymentError, ValueError)):
        return f"The exercise could not {doing}: {err}"
    if isinstance(err, InferenceServerException):
        return f"Triton refused a request the exercise needs: {err.message()}"
    if isinstance(err, OSError):
        return f"The exercise could not reach a server or start a process: {err}"
    return f"The exercise stopped unexpectedly ({type(err).__name__}): {err}"


def _run(name: str, choice: str, server, deployer) -> None:
    bar = st.progress(0.0, text="Starting")
    try:
        with st.spinner("Running on the Triton server..."):
            # Exercises call progress from this (the script) thread, so it may draw directly.
            result = exercises.run(name, server, deployer, progress=lambda f, m: bar.progress(f, text=m))
    except Exception as err:
        st.error(_failure(err, "run"))
        return
    finally:
        bar.empty()
    st.session_state[RESULT_KEY.format(name)] = (choice, result)
    try:
        from app.quiz.store import ProgressStore

        ProgressStore().record_prediction(learner(), f"exercise:{name}", choice, result.outcome, result.held(choice))
    except Exception as err:  # progress is a bonus; the result is still shown
        st.warning(f"Your prediction could not be saved: {err}")


def _show(exercise, choice: str, result) -> None:
    seen = exercise.option(result.outcome).text
    if result.held(choice):
        st.success(f"Your prediction held. The server did this: {seen}")
    else:
        st.warning(f"Your prediction did not hold. The server did this: {seen}")
    if not result.as_taught:
        usual = exercise.option(exercise.correct).text
        st.info(f"On this run the server did not show the usual outcome ({usual}). Timing decides some of "
                "these cases: run it again and compare.")
    st.markdown("**Measured**")
    st.dataframe(result.numbers_table(), hide_index=True, width="stretch")
    try:
        charts = exercises.figures(result)
    except Exception as err:  # the measurements above and the findings below still stand
        st.error(_failure(err, "draw its charts"))
        charts = []
    for index, (caption, fig) in enumerate(charts):
        st.plotly_chart(fig, key=f"exercise-{result.name}-fig-{index}", width="stretch")
    st.markdown("**What happened**\n" + "\n".join(f"- {line}" for line in result.findings))
    st.markdown(f"**Why**\n\n{result.explanation}")
    server_log.show(result.log, key=f"exercise-{result.name}-log")
    st.download_button("Download the result (JSON)", json.dumps(result.to_json(), default=str, indent=1),
                       file_name=f"{result.name}.json", mime="application/json", key=f"exercise-{result.name}-json")


def render() -> None:
    st.title("Failure modes")
    st.markdown("Each exercise puts you in a situation that goes wrong in production. Predict what Triton will do, "
                "then run it on the real server and read the evidence.")
    handle = lab()  # shows the reason (and a restart button) itself when the server is not there
    name = st.selectbox("Exercise", list(exercises.EXERCISES), key="exercise-name",
                        format_func=lambda n: exercises.EXERCISES[n].title)
    exercise = exercises.get(name)
    st.subheader(exercise.title)
    st.markdown(exercise.scenario)
    choice = st.radio(f"**Predict:** {exercise.question}", [o.key for o in exercise.options], index=None,
                      format_func=lambda k: exercise.option(k).text, key=f"exercise-{name}-prediction")
    clicked = st.button("Run on the server", key=f"exercise-{name}-run", type="primary",
                        disabled=choice is None or handle is None)
    if choice is None:
        st.caption("Make a prediction first.")
    if clicked and choice is not None and handle is not None:
        _run(name, choice, *handle)
    stored = st.session_state.get(RESULT_KEY.format(name))
    if stored is not None:
        _show(exercise, *stored)


render()
