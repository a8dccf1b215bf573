"""Generation lab page: choose static or in-flight batching (or both on the same workload), predict, run on the
real server, and read the step-by-row timeline, latencies, step fill and per-request table. Its second lab, the
paged engine (app/generation/paged/view.py), is chosen at the top (`g_lab=engine` in the URL).

The page sits with the pages (app/views), above app/ui, whose widgets it uses; its engine (app/generation/runs.py
and app/generation/engine), figures (app/generation/figures.py) and words (app/generation/words.py) sit in the
feature folder. The whole set-up lives in the URL (app/generation/setup.py: g_* parameters)."""
from __future__ import annotations

from dataclasses import fields
from typing import Any

import streamlit as st

from app.generation import figures, runs
from app.generation import words as gw
from app.generation.paged import view as engine_view
from app.generation.paged import words as pw
from app.generation.paged.setup import LAB_KEY, LABS
from app.generation.setup import LIMITS, MODES, PRESETS, QUERY_KEYS, STRATEGIES, GenSetup
from app.i18n import N_
from app.lab.server import LabServer
from app.quiz.store import ProgressStore
from app.text.errors import EXPLAINED, explain
from app.ui import chart, class_store, language
from app.ui.language import _, t
from app.ui.learner_id import learner
from app.ui.shared_server import NEXT_STEPS, lab

P = "gen."  # widget key prefix
SETUP_KEY = P + "setup"
RESULT_KEY = P + "result"  # (setup, prediction, [GenRun])
PREDICTION_KEY = P + "prediction"
CHOICE_FIELDS = ("mode", "strategy")  # drawn as radios; every other field is a number
NUMBER_FIELDS = [f.name for f in fields(GenSetup) if f.name not in CHOICE_FIELDS]


def _start() -> GenSetup:
    """The set-up to draw: the one held in this session, else the link's, else the first preset."""
    state = st.session_state
    # Streamlit drops a widget's value after a run that did not draw it (the learner was in the engine's lab),
    # so the held set-up puts the widgets' values back.
    if SETUP_KEY not in state or any(P + name not in state for name in (*NUMBER_FIELDS, *CHOICE_FIELDS)):
        query = st.query_params.to_dict()
        if SETUP_KEY not in state:
            state[SETUP_KEY] = GenSetup.from_query(query) if any(k in query for k in QUERY_KEYS) else PRESETS["side_by_side"]
        for name in (*NUMBER_FIELDS, *CHOICE_FIELDS):
            state[P + name] = getattr(state[SETUP_KEY], name)
    setup: GenSetup = state[SETUP_KEY]
    return setup


def _preset(name: str) -> None:
    setup = PRESETS[name]
    st.session_state[SETUP_KEY] = setup
    for field in (*NUMBER_FIELDS, *CHOICE_FIELDS):
        st.session_state[P + field] = getattr(setup, field)


def _controls(start: GenSetup) -> GenSetup:
    _t = t()
    cols = st.columns(len(PRESETS))
    for col, (name, (label, why)) in zip(cols, gw.PRESETS.items(), strict=True):
        col.button(_(label), key=P + "preset-" + name, help=_(why), on_click=_preset, args=(name,), width="stretch")
    mode = language.choice(st.radio, _(gw.SETTINGS["mode"]), list(MODES), key=P + "mode", horizontal=True,
                           format_func=lambda m: _t(gw.MODE_CHOICES[m]))
    values: dict[str, Any] = {"mode": mode}  # GenSetup's fields, each of its own type
    left, right = st.columns(2)
    with left:
        st.markdown("**" + _("Deployment") + "**")
        values["strategy"] = language.choice(st.radio, _(gw.SETTINGS["strategy"]), list(STRATEGIES), key=P + "strategy",
                                             disabled=mode == "static", format_func=lambda s: _t(gw.STRATEGY_CHOICES[s]))
        for name in ("max_batch_size", "queue_delay_ms", "max_candidates", "instances"):
            values[name] = _number(name, disabled=name == "max_candidates" and (mode == "static" or values["strategy"] == "direct"))
    with right:
        st.markdown("**" + _("Workload") + "**")
        for name in ("requests", "mean_gap_ms", "min_tokens", "max_tokens", "prompt_seed", "seed"):
            values[name] = _number(name)
    del start
    setup = GenSetup(**values).clamped()
    st.session_state[SETUP_KEY] = setup
    wanted = setup.to_query()
    if {k: st.query_params.get(k) for k in wanted} != wanted:
        st.query_params.update(wanted)
    return setup


def _number(name: str, disabled: bool = False) -> int:
    low, high = LIMITS[name]
    return int(st.number_input(_(gw.SETTINGS[name]), min_value=low, max_value=high, step=1, key=P + name, disabled=disabled))


def _question(setup: GenSetup) -> tuple[str, str | None]:
    kind = "compare" if setup.mode == "compare" else "single"
    _t = t()
    answers = gw.ANSWERS[kind]
    choice = language.choice(st.radio, "**" + _("Predict:") + "** " + _(gw.QUESTIONS[kind]), list(answers), index=None,
                             format_func=lambda k: _t(answers[k]), key=f"{PREDICTION_KEY}-{kind}")
    return kind, choice


def _run(setup: GenSetup, kind: str, choice: str, server: LabServer) -> None:
    try:
        with st.spinner(_("Running on the Triton server...")):
            done = runs.run_setup(server, setup)
    except EXPLAINED as err:  # a bug keeps its traceback
        said = explain(err, t(), wording=gw.PROBLEMS, next_steps=NEXT_STEPS)
        st.error(t().render(N_("The run could not finish: {reason:text}"), reason=str(said)))
        return
    st.session_state[RESULT_KEY] = (setup, kind, choice, done)
    seen = runs.answer(kind, done)
    try:  # the instructor's page lists every prediction; progress is a bonus, the result is still shown
        ProgressStore().record_prediction(learner(), f"generation:{kind}", choice, seen, seen == choice)
    except EXPLAINED as err:
        st.warning(t().render(N_("Your prediction could not be saved: {reason:text}"), reason=class_store.saving_failed(err)))


def _show(setup: GenSetup, kind: str, choice: str, done: list[runs.GenRun]) -> None:
    _t = t()
    seen = runs.answer(kind, done)
    said = _t(gw.ANSWERS[kind][seen])
    if seen == choice:
        st.success(_t.render(N_("Your prediction held. The server did this: {seen:text}"), seen=said))
    else:
        st.warning(_t.render(N_("Your prediction did not hold. The server did this: {seen:text}"), seen=said))
    st.dataframe(figures.numbers_table(done, _t), width="stretch")
    tables = runs.joined(done)
    x = "tick" if not st.toggle(_("Time across instead of model steps"), key=P + "time-axis") else "time"
    for index, drawn in enumerate(figures.charts(tables["tokens"], tables["requests"], tables["steps"], setup.max_batch_size, x,
                                                 _t)):
        st.markdown("**" + drawn.caption + "**")
        chart.show(drawn.figure, drawn.summary, key=f"{P}fig-{index}", width="stretch")
    shown = tables["requests"][list(gw.REQUEST_COLUMNS)].copy()
    shown["mode"] = shown["mode"].map(lambda m: figures.mode_name(m, _t))
    shown[["ttft_ms", "e2e_ms"]] = shown[["ttft_ms", "e2e_ms"]].round(1)
    st.dataframe(shown.rename(columns={k: _t(v) for k, v in gw.REQUEST_COLUMNS.items()}), hide_index=True, width="stretch")


def _which_lab() -> str:
    """The generator (Triton's batchers) or the paged engine; the link's `g_lab`, else the generator, so links made
    before the engine existed open what they opened then."""
    _t = t()
    if P + "lab" not in st.session_state:
        asked = st.query_params.get(LAB_KEY)
        st.session_state[P + "lab"] = asked if asked in LABS else LABS[0]
    chosen = str(language.choice(st.radio, _("Lab"), list(LABS), key=P + "lab", horizontal=True,
                                 format_func=lambda k: _t(pw.LAB_CHOICES[k])))
    if st.query_params.get(LAB_KEY) != chosen:
        st.query_params[LAB_KEY] = chosen
    return chosen


def render() -> None:
    st.title(_(gw.PAGE_TITLE))
    if _which_lab() == "engine":
        engine_view.render(lab())
        return
    st.markdown(_(gw.PAGE_INTRO))
    setup = _controls(_start())
    kind, choice = _question(setup)
    handle = lab()
    clicked = st.button(_("Run on the server"), key=P + "run", type="primary", disabled=choice is None or handle is None)
    if choice is None:
        st.caption(_("Make a prediction first."))
    if clicked and choice is not None and handle is not None:
        _run(setup, kind, choice, handle[0])
    stored = st.session_state.get(RESULT_KEY)
    if stored is not None:
        _show(*stored)




render()
