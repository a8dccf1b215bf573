"""The generation lab's engine mode, as the page draws it: presets, the paged engine's settings for
setting A (and B, on the same requests), the workload, a prediction, the run on the real server, and
the block tables, queue, latencies and numbers.

The whole set-up lives in the URL (app/generation/paged/setup.py: k_*, ka_*, kb_*); widget ranges,
help texts and keys are derived from that one declaration. A run waits its turn on a deployment
another learner is running (the run queue), and the progress bar says how many runs are ahead.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from app.generation.paged import figures, runs
from app.generation.paged import words as pw
from app.generation.paged.engine import SCHEDULERS, PagedSettings, PagedWorkload
from app.generation.paged.setup import LIMITS, PRESETS, QUERY_KEYS, SETTING_FIELDS, SIDES, WORKLOAD_FIELDS, PagedSetup
from app.i18n import N_
from app.lab.deployment import Deployer
from app.lab.problems import LabError
from app.lab.server import LabServer
from app.lab.traffic import Wait
from app.quiz.store import ProgressStore
from app.text.errors import EXPLAINED, explain
from app.ui import chart, class_store, language
from app.ui.language import _, t
from app.ui.learner_id import learner
from app.ui.progress import run_with_progress
from app.ui.shared_server import NEXT_STEPS

P = "kv."  # widget key prefix
SETUP_KEY = P + "setup"
RESULT_KEY = P + "result"  # (setup, kind, choice, [SideRun])
PREDICTION_KEY = P + "prediction"
WAITED_KEY = P + "waited"  # runs.Waited of the last run: whether it waited for another learner's run, and how long
DEFAULT = "too_few_blocks"
WORDING = pw.PROBLEMS  # the paged engine's and the set-up's problem codes, for explain


def widget_key(name: str, side: str | None = None) -> str:
    return f"{P}{side}.{name}" if side else P + name


def _widget_values(setup: PagedSetup) -> dict[str, Any]:  # st.session_state's values: each widget's own type
    """Every widget's value for a set-up, by widget key: the declaration read once."""
    values: dict[str, Any] = {widget_key("compare"): setup.compare}
    for side in SIDES:
        for name in SETTING_FIELDS:
            values[widget_key(name, side)] = getattr(setup.settings(side), name)
    for name in WORKLOAD_FIELDS:
        values[widget_key(name)] = int(getattr(setup.workload, name))
    return values


def _put(setup: PagedSetup) -> None:
    st.session_state[SETUP_KEY] = setup
    st.session_state.update(_widget_values(setup))


def _start() -> None:
    """Hold a set-up in this session: the link's, else the default preset. Streamlit drops a widget's value
    after a run that did not draw it (the learner was in the generator's lab), so the held set-up puts the
    widgets' values back."""
    state = st.session_state
    if SETUP_KEY not in state:
        query = st.query_params.to_dict()
        _put(PagedSetup.from_query(query) if any(k in query for k in QUERY_KEYS) else PRESETS[DEFAULT])
    elif any(key not in state for key in _widget_values(state[SETUP_KEY])):
        _put(state[SETUP_KEY])


def _preset(name: str) -> None:
    _put(PRESETS[name])


def _number(name: str, side: str | None = None, disabled: bool = False) -> int:
    low, high = LIMITS[name]
    help_text = pw.HELP.get(name)
    return int(st.number_input(_(pw.SETTINGS[name]), min_value=low, max_value=high, step=1, key=widget_key(name, side),
                               disabled=disabled, help=_(help_text) if help_text else None))


def _settings(side: str, disabled: bool) -> PagedSettings:
    _t = t()
    st.markdown("**" + _(pw.SIDES[side]) + "**")
    numbers = {name: _number(name, side, disabled) for name in ("num_blocks", "block_size", "max_batch_tokens")}
    scheduler = language.choice(st.radio, _(pw.SETTINGS["scheduler"]), list(SCHEDULERS), key=widget_key("scheduler", side),
                                horizontal=True, disabled=disabled, help=_(pw.HELP["scheduler"]),
                                format_func=lambda s: _t(pw.SCHEDULERS[s]))
    sharing = st.toggle(_(pw.SETTINGS["prefix_sharing"]), key=widget_key("prefix_sharing", side), disabled=disabled,
                        help=_(pw.HELP["prefix_sharing"]))
    return PagedSettings(**numbers, scheduler=str(scheduler), prefix_sharing=bool(sharing))


def _controls() -> PagedSetup:
    cols = st.columns(len(PRESETS))
    for col, (name, (label, why)) in zip(cols, pw.PRESETS.items(), strict=True):
        col.button(_(label), key=P + "preset-" + name, help=_(why), on_click=_preset, args=(name,), width="stretch")
    compare = st.toggle(_(pw.COMPARE), key=widget_key("compare"))
    left, right, workload = st.columns(3)
    with left:
        a = _settings("a", disabled=False)
    with right:
        b = _settings("b", disabled=not compare)
    with workload:
        st.markdown("**" + _("Workload") + "**")
        values = {name: _number(name) for name in WORKLOAD_FIELDS}
    setup = PagedSetup(compare=bool(compare), a=a, b=b, workload=PagedWorkload(**values)).clamped()
    st.session_state[SETUP_KEY] = setup
    wanted = setup.to_query()
    if {k: st.query_params.get(k) for k in wanted} != wanted:
        st.query_params.update(wanted)
    return setup


def _question(setup: PagedSetup) -> tuple[str, str | None]:
    kind = runs.kind(setup)
    _t = t()
    answers = pw.ANSWERS[kind]
    choice = language.choice(st.radio, "**" + _("Predict:") + "** " + _(pw.QUESTIONS[kind]), list(answers), index=None,
                             format_func=lambda k: _t(answers[k]), key=f"{PREDICTION_KEY}-{kind}")
    return kind, choice


def _run(setup: PagedSetup, kind: str, choice: str, server: LabServer) -> None:
    label = t().render(N_("Running {sides:count} engine setting(s) on {requests:count} requests"),
                       sides=len(setup.sides()), requests=setup.workload.total_requests)
    waited = runs.Waited()

    def work(p: Any) -> list[runs.SideRun]:  # app/ui/progress.py's bar: progress(done, total) and .wait(place)
        def on_wait(wait: Wait) -> None:  # the bar says the place now; the result keeps how long it was
            waited.hear(wait)
            p.wait(wait)
        return runs.run_setup(server, setup, progress=p, on_wait=on_wait)

    try:
        done = run_with_progress(work, label)
    except EXPLAINED as err:  # a bug keeps its traceback
        said = explain(err, t(), wording=WORDING, next_steps=NEXT_STEPS)
        st.error(t().render(N_("The run could not finish: {reason:text}"), reason=str(said)))
        return
    st.session_state[RESULT_KEY] = (setup, kind, choice, done)
    st.session_state[WAITED_KEY] = waited
    seen = runs.answer(kind, done)
    try:  # the instructor's page lists every prediction; progress is a bonus, the result is still shown
        ProgressStore().record_prediction(learner(), f"generation:kv_{kind}", choice, seen, seen == choice)
    except EXPLAINED as err:
        st.warning(t().render(N_("Your prediction could not be saved: {reason:text}"), reason=class_store.saving_failed(err)))


def _show(setup: PagedSetup, kind: str, choice: str, done: list[runs.SideRun]) -> None:
    _t = t()
    seen = runs.answer(kind, done)
    said = _t(pw.ANSWERS[kind][seen])
    if seen == choice:
        st.success(_t.render(N_("Your prediction held. The server did this: {seen:text}"), seen=said))
    else:
        st.warning(_t.render(N_("Your prediction did not hold. The server did this: {seen:text}"), seen=said))
    waited = st.session_state.get(WAITED_KEY)
    if waited is not None and waited.most_ahead:
        st.info(_t.render(pw.WAITED, seconds=waited.seconds, ahead=waited.most_ahead))
    for run in done:
        st.caption(figures.setting_line(run.side, run.settings, _t) + f" — `{run.model}`")
    st.dataframe(figures.numbers_table(done, _t), width="stretch")
    for index, drawn in enumerate(figures.charts(done, _t)):
        st.markdown("**" + drawn.caption + "**")
        chart.show(drawn.figure, drawn.summary, key=f"{P}fig-{index}", width="stretch")
    st.dataframe(figures.requests_table(done, _t), hide_index=True, width="stretch")
    del setup


def render(handle: tuple[LabServer, Deployer] | None) -> None:
    """The engine mode below the page's title; `handle` is app.ui.shared_server.lab()'s (None: no server)."""
    st.markdown(_(pw.ENGINE_INTRO))
    _start()
    setup = _controls()
    kind, choice = _question(setup)
    problems = setup.problems()
    if problems:  # said before the run: the engine would only answer each such request with an error
        st.warning(str(explain(LabError(problems), t(), wording=WORDING)))
    clicked = st.button(_("Run on the server"), key=P + "run", type="primary",
                        disabled=choice is None or handle is None or bool(problems))
    if choice is None:
        st.caption(_("Make a prediction first."))
    if clicked and choice is not None and handle is not None:
        _run(setup, kind, choice, handle[0])
    stored = st.session_state.get(RESULT_KEY)
    if stored is not None:
        _show(*stored)
