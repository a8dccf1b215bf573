"""Live lab page: set up a deployment and traffic, predict, run it on the server, read the evidence.

Its controls, kept in step with the URL, are app/recogniser/view/controls.py."""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import streamlit as st

from app.i18n import N_
from app.lab.deployment import Applied, Deployer
from app.lab.observation import server_log as log_reader
from app.lab.server import LabServer
from app.live.common.view import explained_failures
from app.quiz.store import ProgressStore
from app.recogniser import figures
from app.recogniser.engine import driver
from app.recogniser.engine.judgement import prediction
from app.recogniser.engine.setup import LabSetup
from app.recogniser.view import controls as lab_controls
from app.recogniser.view import run_views, transcripts
from app.recogniser.words import prediction as prediction_words
from app.recogniser.words import presets as preset_words
from app.text import problems as problem_words
from app.text.errors import EXPLAINED
from app.ui import chart, class_store, learner_id, server_log, shared_server
from app.ui.language import _, t
from app.ui.progress import run_with_progress

if TYPE_CHECKING:
    from app.lab.records import RunResult


@dataclass
class LabRun:
    setup: LabSetup
    applied: Applied
    result: RunResult
    choice: str
    verdict: prediction.PredictionVerdict


def render() -> None:
    st.title(_("Live lab"))
    st.markdown(_(
        "Deploy the streaming recogniser with the scheduler settings you choose, stream interleaved sessions "
        "through it on the real Triton server, and see whether every transcript survives. The address bar "
        "always holds this set-up: copy it to share or reproduce a run."
    ))
    lab = shared_server.lab()
    if lab is None:
        return
    server, deployer = lab
    for code, values in lab_controls.init_widgets():
        st.warning(lab_controls.fallback_message(code, values))
    lab_controls.preset_buttons()
    setup = lab_controls.controls()
    lab_controls.sync_query(setup)

    problems = setup.problems()
    if problems:
        st.error(_("This set-up cannot be deployed or run yet; nothing has been loaded:") + "\n"
                 + "\n".join(f"- {problem_words.problem(p, t())}" for p in problems))

    choice = st.radio(
        _("**Predict before you run:** what will happen to the transcripts?"),
        list(prediction.CHOICES), format_func=partial(prediction_words.choice, _=t()), index=None,
        key=lab_controls.PREDICTION_KEY,
    )
    apply_col, run_col, _spacer = st.columns([1, 1, 3])
    apply_clicked = apply_col.button(_("Apply"), key="lab.apply", disabled=bool(problems), width="stretch",
                                     help=_("Load this deployment on the server and show its config.pbtxt"))
    run_clicked = run_col.button(_("Run"), key="lab.run", type="primary", disabled=bool(problems) or choice is None,
                                 width="stretch", help=_("Apply, then stream the sessions"))
    if choice is None and not problems:
        run_col.caption(_("Make a prediction first."))

    if (apply_clicked or run_clicked) and problems:
        st.error(_("Fix the problems above first; nothing was loaded or sent."))
    elif apply_clicked:
        with explained_failures():
            _apply(setup, deployer)
    elif run_clicked and choice is not None:
        with explained_failures():
            _run(setup, choice, server, deployer)

    _show_applied()
    last = st.session_state.get("lab-last-run")
    if last is not None:
        _show_run(last)


def _apply(setup: LabSetup, deployer: Deployer) -> Applied:
    # In a worker thread under a bar, so a load that waits for room in the server's memory says so.
    applied = run_with_progress(lambda p: deployer.apply(setup.settings, on_wait=p.wait),
                                _("Loading the deployment on Triton (a few seconds when it is new)..."))
    st.session_state["lab-applied"] = applied
    return applied


def _show_applied() -> None:
    applied = st.session_state.get("lab-applied")
    if applied is None:
        return
    shipped = _("a shipped deployment with exactly these settings")
    shared = _("a model for exactly these settings, shared by everyone who chooses them; runs take turns on it")
    origin = shipped if applied.reused else shared
    with st.expander(t().render(N_("Deployed: `{model:text}` ({origin:text}) — its exact config.pbtxt"),
                                model=applied.model, origin=origin), expanded=False):
        st.code(applied.pbtxt, language="text")


def _run(setup: LabSetup, choice: str, server: LabServer, deployer: Deployer) -> None:
    setup.scenario("check").validate()  # bad text fails here, before anything is loaded
    applied = _apply(setup, deployer)
    scenario = setup.scenario(applied.model)
    # Verbosity 1 for the run, so the log panel can quote the backlog, reaper and refusals.
    with log_reader.raised_verbosity(server, 1):
        result = run_with_progress(lambda p: driver.run(server, scenario, progress=p, on_wait=p.wait),
                                   t().render(N_("Streaming {n:count} sessions through {model:text}"),
                                              n=setup.session_count, model=applied.model))
    verdict = prediction.judge(choice, result.sessions)
    st.session_state["lab-last-run"] = LabRun(setup, applied, result, choice, verdict)
    _record(setup, choice, verdict)


def _record(setup: LabSetup, choice: str, verdict: prediction.PredictionVerdict) -> None:
    try:
        ProgressStore().record_prediction(learner_id.learner(), setup.preset_name() or "custom", choice,
                                          verdict.outcome, held=verdict.held)
    except EXPLAINED as err:  # a locked or read-only progress file must not lose the run
        st.warning(t().render(N_("Your prediction could not be saved: {reason:text}"), reason=class_store.saving_failed(err)))


def _show_run(run: LabRun) -> None:
    result, settings = run.result, run.applied.settings
    st.divider()
    st.header(_("Results of the last run"))
    words = t()
    st.caption(words.render(
        N_("{sessions:count} sessions, {requests:count} requests on `{model:text}` ({scheduler:text}, "
           "{instances:count} instance(s) × {slots:count} slots, state key {state_key:text}, READY {ready:text}) "
           "in {wall:seconds}."),
        sessions=len(result.sessions), requests=len(result.requests), model=run.applied.model,
        scheduler=settings.scheduler, instances=settings.instances, slots=settings.slots, state_key=settings.state_key,
        ready=_("honoured") if settings.honour_ready else _("ignored"), wall=result.wall_s,
    ))
    (st.success if run.verdict.held and run.verdict.reason_seen else st.warning)(
        words.render(N_("You predicted: {choice:text}. {message:text}"), choice=prediction_words.choice(run.choice, words),
                     message=prediction_words.message(run.verdict, words))
    )
    preset = run.setup.preset_name()
    if preset:
        st.info(words.render(N_("Why ({title:text}): {why:text}"), title=_(preset_words.TITLES[preset]),
                             why=_(preset_words.WHY[preset])))
    transcripts.board(result, key="transcript-board")
    st.subheader(_("Slot occupancy"))
    analysed = run_views.analysed(result, settings)  # once, for every chart, sentence and table below
    run_views.timeline(analysed, settings.scheduler, key="slot-timeline")
    st.subheader(_("What the server measured"))
    run_views.server_side(analysed, key_prefix="lab")
    st.subheader(_("Work per instance"))
    run_views.instance_work(analysed, key="lab-instance-work")
    st.subheader(_("State the model holds"))
    chart.show(figures.state_cells(analysed.state_cells, _=words), figures.state_cells_summary(analysed.state_cells, _=words),
               key="lab-state-cells", width="stretch")
    st.caption(_(
        "The recogniser's own metric (asr_state_cells on Triton's metrics endpoint): the state cells each "
        "instance keeps. A session that ends with END gives its cell back; one that vanishes leaves it until "
        "the model evicts it itself (idle_evict_s), because Triton's idle reaper never tells the model."
    ))
    server_log.show(result.log, key="lab-log")


render()
