"""Presenter mode: one core demo, one screen per step, in type a projector can carry.

Peer instruction order: the change, the question, the class votes (live histogram), the run
(both set-ups side by side on identical traffic, with a replay), then the reveal (what Triton
did, which answer was right, and the share of the class that had it). Demos come in two families
(app/presenter/view.py): the recogniser's (app/recogniser/demo.py: sessions, transcripts, slot
replay), the generator's (app/generation/demo.py: static against in-flight batching, drawn
with the generation lab's figures) and the paged engine's (app/generation/paged/demo.py: plenty of KV blocks
against too few, drawn with the engine mode's figures); the steps share the vote and dispatch on the family. The demo, the step and
the vote's code live in the URL (?demo=..&step=..&code=..), so a reload keeps the place.
Below the steps, the class's answers to one quiz item the instructor picks (option counts from
app/quiz/item_analysis.py, each learner's latest attempt), for the discussion after a quiz.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TypeVar

import streamlit as st

from app.charts import item_analysis as item_charts
from app.generation import demo as gen_demo
from app.generation import figures as gen_figures
from app.generation import runs as gen_runs
from app.generation import words as gen_words
from app.generation.paged import demo as kv_demo
from app.generation.paged import figures as kv_figures
from app.generation.paged import runs as kv_runs
from app.generation.paged import words as kv_words
from app.i18n import N_, Words
from app.lab.deployment import Deployer, DiffLine
from app.lab.server import LabServer
from app.presenter import figures as vote_figures
from app.presenter import view as ui
from app.presenter import words as demo_words
from app.quiz import item_analysis, votes
from app.recogniser import demo as demos
from app.recogniser import replay
from app.recogniser.view import transcripts
from app.recogniser.words import demo as rec_demo_words
from app.text.errors import EXPLAINED, explain
from app.ui import chart, class_store, language, shared_server
from app.ui import item_analysis as analysis_words
from app.ui import quiz_sources as sources
from app.ui.access import require_instructor
from app.ui.language import _, t

T = TypeVar("T")

STEPS = (1, 2, 3, 4, 5)
RUNS = "presenter.runs"  # st.session_state: {"demo:code": {side: demos.Side or gen_runs.GenRun}}
REVEALED = "presenter.revealed"  # st.session_state: set of "demo:code" revealed in this session
FIGURES = "presenter.figures"  # st.session_state: figures built for a run, by run id and language

st.title(_("Presenter"))
require_instructor()



def _session_label(s: int | None, words: Words) -> str:
    return words(N_("nobody")) if s is None else words.render(N_("Session {number:count}"), number=s + 1)


def _int(value: str | None, default: int) -> int:
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        return default


demo_name = ui.known(st.query_params.get("demo"))
options = ui.demo_options(demo_name)
gdemo = gen_demo.DEMOS.get(demo_name)  # the generator's demo; None for the other families'
kdemo = kv_demo.DEMOS.get(demo_name)  # the paged engine's demo; None for the other families'
demo = demos.get(demo_name)  # the recogniser's demo (read only where gdemo is None)
step = min(max(_int(st.query_params.get("step"), 1), STEPS[0]), STEPS[-1])
store = votes.store()


def _poll() -> votes.Poll | None:
    """This demo's vote from the URL, or None (no code, an unknown one, or another demo's)."""
    code = votes.normalise_code(st.query_params.get("code"))
    if not code:
        return None
    try:
        poll = store.poll(code)
    except votes.PollNotFound:
        return None
    return poll if poll.demo == demo_name else None


def _go(number: int) -> None:
    st.query_params["step"] = str(number)
    st.query_params["demo"] = demo_name


def _choose_demo() -> None:
    st.query_params["demo"] = st.session_state["presenter-demo"]
    st.query_params["step"] = "1"
    st.query_params.pop("code", None)


def _new_poll() -> None:
    st.query_params["code"] = store.open_demo(demo_name)
    st.query_params["demo"] = demo_name


poll = _poll()
run_key = f"{demo_name}:{poll.code if poll else ''}"
runs = st.session_state.setdefault(RUNS, {})

ui.projector_type()
root = st.container(key=ui.ROOT)
with root:
    st.caption(t().render(N_("Step {n:count} of {total:count}: {name:text}"), n=step, total=len(STEPS),
                          name=demo_words.step(step, t())))
    st.markdown("# " + ui.demo_title(demo_name, t()))


def step_change() -> None:
    st.selectbox(_("Demo"), list(ui.DEMO_NAMES), index=list(ui.DEMO_NAMES).index(demo_name), key="presenter-demo",
                 format_func=partial(ui.demo_title, words=t()), on_change=_choose_demo)
    if gdemo is not None:
        before, after = (gen_figures.mode_name(gdemo.mode(s), t()) for s in gen_demo.SIDES)
        show_change(before, after, gen_demo.changed(gdemo), gen_demo.config_diff(gdemo))
    elif kdemo is not None:
        before, after = (kv_figures.setting_line(side, kdemo.setup.settings(side), t()) for side in kdemo.setup.sides())
        show_change(before, after, kv_demo.changed(kdemo), kv_demo.config_diff(kdemo))
    else:
        before, after = (rec_demo_words.setup_title(demo.preset(s), t()) for s in demos.SIDES)
        show_change(before, after, demos.changed(demo), demos.config_diff(demo))


def show_change(before: str, after: str, changed: tuple[list[str], list[str]], diff: list[DiffLine]) -> None:
    st.markdown(t().render(N_("**{before_side:text}:** {before:text}  \n**{after_side:text}:** {after:text}"),
                           before_side=demo_words.side("before", t()), before=before,
                           after_side=demo_words.side("after", t()), after=after))
    removed, added = changed
    st.markdown(t().render(N_("The `config.pbtxt` change: {removed:count} lines out, {added:count} lines in."),
                           removed=len(removed), added=len(added)))
    st.markdown(ui.diff_html(diff), unsafe_allow_html=True)


def step_question() -> None:
    st.markdown("## " + ui.demo_question(demo_name, t()))
    if gdemo is not None:
        w = gdemo.setup
        st.caption(t().render(gen_words.DEMO_WORKLOAD, requests=w.requests, low=w.min_tokens, high=w.max_tokens,
                              gap=w.mean_gap_ms, batch=w.max_batch_size))
    elif kdemo is not None:
        k = kdemo.setup.workload
        st.caption(t().render(kv_words.DEMO_WORKLOAD, requests=k.total_requests, system=k.system_tokens, gap=k.mean_gap_ms))
    else:
        asked = demo.asks
        st.caption(t().render(N_("The question is about {side:text}: {setup:text}."), side=demo_words.side(asked, t()),
                              setup=rec_demo_words.setup_title(demo.preset(asked), t())))
    letters = "ABCD"
    st.markdown("\n".join(f"{letters[k]}. {ui.option_label(demo_name, o, t())}" for k, o in enumerate(options)))


def step_votes() -> None:
    current = poll
    if current is None:
        _new_poll()
        st.rerun()
    link = ui.join_link(current.code)
    left, right = st.columns([2, 3])
    with left:
        st.markdown(_("Join at"))
        st.markdown(ui.code_html(current.code), unsafe_allow_html=True)
        st.markdown(f"`{link}`")
        st.caption(t().render(N_("The vote is {state:text}."), state=_(demo_words.POLL_STATES[current.state])))
        buttons = st.columns(2)
        if current.is_open and buttons[0].button(_("Close the vote"), key="presenter-close"):
            store.close(current.code)
            st.rerun()
        buttons[1].button(_("New vote"), key="presenter-new-vote", on_click=_new_poll)
    with right:
        histogram(current.code)


@st.fragment(run_every=2.0)
@class_store.guarded("presenter-retry")
def histogram(code: str) -> None:
    """The class's votes, re-read every two seconds while this step is on screen."""
    tally = store.tally(code)
    label = partial(ui.option_label, demo_name)
    chart.show(vote_figures.votes_figure(options, tally, t(), label=label), vote_figures.votes_summary(options, tally, t(), label=label),
               key="presenter-histogram", theme=None)


def _run(lab: tuple[LabServer, Deployer]) -> None:
    server, deployer = lab
    if poll is not None and poll.is_open:
        store.close(poll.code)  # peer instruction: the votes are in before the run is shown
    with st.spinner(_("Running both set-ups on the same traffic...")):
        try:
            if gdemo is not None:
                runs[run_key] = gen_demo.run_side_by_side(server, gdemo)
            elif kdemo is not None:
                runs[run_key] = kv_demo.run_side_by_side(server, kdemo)
            else:
                runs[run_key] = demos.run_side_by_side(server, deployer, demo)
        except EXPLAINED as err:
            wording = gen_words.PROBLEMS if gdemo is not None else kv_words.PROBLEMS if kdemo is not None else None
            st.error(str(explain(err, t(), wording=wording, next_steps=shared_server.NEXT_STEPS)))


def step_run() -> None:
    lab = shared_server.lab()
    if lab is None:
        return
    if st.button(_("Run both set-ups"), key="presenter-run", type="primary"):
        _run(lab)
    sides = runs.get(run_key)
    if sides is None:
        if kdemo is not None:
            st.markdown(_("One click sends the same requests (same arrivals, prompts and answer lengths) through both "
                          "engine settings, one after the other."))
        elif gdemo is None:
            st.markdown(_("One click sends the same sessions (same seed, same texts) through both set-ups, one after the other."))
        else:
            st.markdown(_("One click sends the same requests (same arrivals, lengths and prompts) through both modes, "
                          "one after the other."))
        return
    if gdemo is not None:
        show_generation_runs(gdemo, sides)
    elif kdemo is not None:
        show_paged_runs(sides)
    else:
        show_runs(sides)


def _figure(name: str, build: Callable[[], T]) -> T:
    """Build a figure once per run, language and choice: the replay takes about a second per 40 batches."""
    cache = st.session_state.setdefault(FIGURES, {})
    key = (name, language.current())
    if key not in cache:
        if len(cache) > 24:
            cache.clear()
        cache[key] = build()
    built: T = cache[key]  # what build() made for this key
    return built


def show_runs(sides: dict[str, demos.Side]) -> None:
    a, b = sides["before"].result, sides["after"].result
    sa, sb = sides["before"].settings, sides["after"].settings
    timelines = _figure(f"timelines:{a.run_id}:{b.run_id}", lambda: replay.side_by_side(
        a, b, _=t(), schedulers=(sa.scheduler, sb.scheduler), instances=sa.instances, slots=sa.slots, projector=True))
    # One above the other at full width: the same time axis lines up, and projector type fits.
    said = replay.side_by_side_summaries(a, b, _=t(), schedulers=(sa.scheduler, sb.scheduler), instances=sa.instances,
                                         slots=sa.slots)
    for side, fig, summary in zip(demos.SIDES, timelines, said, strict=True):
        st.markdown("### " + t().render(N_("{side:text}: {setup:text}"), side=demo_words.side(side, t()),
                                        setup=rec_demo_words.setup_title(demo.preset(side), t())))
        chart.show(fig, summary, key=f"presenter-timeline-{side}", theme=None)
    for col, side in zip(st.columns(2), demos.SIDES, strict=True):
        with col:
            transcripts.board(sides[side].result, key=f"presenter-board-{side}", audio=False)

    st.markdown("## " + _("Replay"))
    pick_side, pick_session = st.columns(2)
    picked = pick_side.radio(_("Set-up"), list(demos.SIDES), horizontal=True, key="presenter-replay-side",
                             format_func=partial(demo_words.side, _=t()))
    assert picked is not None  # a radio with a default index always has a choice
    chosen = sides[picked]
    sessions = list(range(len(chosen.result.sessions)))
    highlight = pick_session.selectbox(
        _("Follow one session"), [None, *sessions], key="presenter-replay-session",
        format_func=partial(_session_label, words=t()))
    fig = _figure(f"replay:{chosen.result.run_id}:{highlight}", lambda: replay.replay_figure(
        chosen.result, _=t(), highlight=highlight, x_range=replay.shared_range(a, b),
        instances=chosen.settings.instances, slots=chosen.settings.slots, projector=True))
    chart.show(fig, replay.replay_summary(chosen.result, _=t(), highlight=highlight, instances=chosen.settings.instances,
                                          slots=chosen.settings.slots), key="presenter-replay", theme=None)


def show_generation_runs(shown: gen_demo.GenDemo, done: dict[str, gen_runs.GenRun]) -> None:
    """Both modes' runs in the generation lab's figures: each mode's timeline on one time axis (seconds from its
    first request), then the latencies and the step fill, and the runs' numbers."""
    tables = gen_runs.joined(done[side] for side in gen_demo.SIDES)
    end = float(tables["tokens"]["t_s"].max()) if not tables["tokens"].empty else 0.0
    drawn = gen_figures.charts(tables["tokens"], tables["requests"], tables["steps"], shown.setup.max_batch_size, "time", t())
    for index, each in enumerate(drawn):
        if index < len(gen_demo.SIDES) and end > 0:
            each.figure.update_xaxes(range=[0, end * 1.03])  # the same time axis for both timelines
        each.figure.update_layout(font={"size": vote_figures.FONT - 4})
        st.markdown("### " + each.caption)
        chart.show(each.figure, each.summary, key=f"presenter-gen-chart-{index}", theme=None)
    st.dataframe(gen_figures.numbers_table((done[side] for side in gen_demo.SIDES), t()), width="stretch")


def show_paged_runs(done: dict[str, kv_runs.SideRun]) -> None:
    """Both settings' runs in the engine mode's figures: a block table per setting, the queue, the latencies, and
    the runs' numbers."""
    ordered = [done[side] for side in kv_demo.PRESENTER_SIDES]
    for index, each in enumerate(kv_figures.charts(ordered, t())):
        each.figure.update_layout(font={"size": vote_figures.FONT - 4})
        st.markdown("### " + each.caption)
        chart.show(each.figure, each.summary, key=f"presenter-kv-chart-{index}", theme=None)
    st.dataframe(kv_figures.numbers_table(ordered, t()), width="stretch")


def step_reveal() -> None:
    sides = runs.get(run_key)
    if sides is None:
        st.info(_("Run the demo first: the answer is what the server does."))
        st.button(_("Go to the run"), key="presenter-to-run", on_click=_go, args=(4,))
        return
    revealed = st.session_state.setdefault(REVEALED, set())
    if run_key not in revealed and not (poll and poll.state == votes.REVEALED):
        st.markdown(_("The votes are in and both runs are done."))
        if st.button(_("Reveal the answer"), key="presenter-reveal", type="primary"):
            revealed.add(run_key)
            st.rerun()
        return
    if gdemo is not None:
        reveal_generation(gdemo, sides)
        return
    if kdemo is not None:
        reveal_paged(kdemo, sides)
        return
    asked = sides[demo.asks].result
    tally = store.tally(poll.code) if poll else {}
    answer = demos.reveal(demo, asked.sessions, tally)
    if poll is not None and poll.state != votes.REVEALED:
        store.reveal(poll.code, answer.right)
    st.markdown("## " + demo_words.outcome(demo.asks, answer.outcome, t()))
    st.markdown(transcripts.verdict_summary(asked.sessions, t()))
    if answer.right:
        st.markdown("### " + _("The right answer") + "\n" + "\n".join(f"- **{ui.option_label(demo_name, o, t())}**" for o in answer.right))
    else:
        st.markdown("### " + _("No option named everything the server did."))
    a, b, c = st.columns(3)
    a.metric(_("Votes"), answer.votes)
    b.metric(_("Right"), share(answer.share_right))
    c.metric(_("Right outcome, any cause"), share(answer.share_outcome_right))
    chart.show(vote_figures.votes_figure(demo.options, tally, t(), right=answer.right),
               vote_figures.votes_summary(demo.options, tally, t(), right=answer.right), key="presenter-result", theme=None)
    st.markdown(_("Discuss: what in the change made the difference?"))


def share(v: float | None) -> str:
    return "—" if v is None else t().render(N_("{share:percent}"), share=v)  # — : nobody voted


def reveal_generation(shown: gen_demo.GenDemo, done: dict[str, gen_runs.GenRun]) -> None:
    """The answer is what both runs' numbers say (gen_demo.reveal: the median request's time to first token)."""
    tally = store.tally(poll.code) if poll else {}
    answer = gen_demo.reveal(shown, done, tally)
    if poll is not None and poll.state != votes.REVEALED:
        store.reveal(poll.code, answer.right)
    label = partial(ui.option_label, demo_name)
    st.markdown("## " + t().render(gen_words.DEMO_SEEN, seen=label(answer.seen, t())))
    st.dataframe(gen_figures.numbers_table((done[side] for side in gen_demo.SIDES), t()), width="stretch")
    st.markdown("### " + _("The right answer") + "\n" + "\n".join(f"- **{label(o, t())}**" for o in answer.right))
    a, b = st.columns(2)
    a.metric(_("Votes"), answer.votes)
    b.metric(_("Right"), share(answer.share_right))
    chart.show(vote_figures.votes_figure(options, tally, t(), right=answer.right, label=label),
               vote_figures.votes_summary(options, tally, t(), right=answer.right, label=label), key="presenter-result", theme=None)
    st.markdown(_(gen_words.DEMO_DISCUSS))


def reveal_paged(shown: kv_demo.KvDemo, done: dict[str, kv_runs.SideRun]) -> None:
    """The answer is what both runs' numbers say (kv_demo.reveal: the median request's time to first token)."""
    tally = store.tally(poll.code) if poll else {}
    answer = kv_demo.reveal(shown, done, tally)
    if poll is not None and poll.state != votes.REVEALED:
        store.reveal(poll.code, answer.right)
    label = partial(ui.option_label, demo_name)
    st.markdown("## " + t().render(kv_words.DEMO_SEEN, seen=label(answer.seen, t())))
    st.dataframe(kv_figures.numbers_table((done[side] for side in kv_demo.PRESENTER_SIDES), t()), width="stretch")
    st.markdown("### " + _("The right answer") + "\n" + "\n".join(f"- **{label(o, t())}**" for o in answer.right))
    a, b = st.columns(2)
    a.metric(_("Votes"), answer.votes)
    b.metric(_("Right"), share(answer.share_right))
    chart.show(vote_figures.votes_figure(options, tally, t(), right=answer.right, label=label),
               vote_figures.votes_summary(options, tally, t(), right=answer.right, label=label), key="presenter-result", theme=None)
    st.markdown(_(kv_words.DEMO_DISCUSS))


def quiz_item_answers() -> None:
    """Beside the demos: how the whole class answered one quiz item (each learner's latest attempt),
    for a discussion after the quiz. Nothing is drawn until an item is chosen."""
    with st.expander(_("The class's answers to a quiz item")):
        bank = sources.bank(sources.lessons())
        if bank is None:
            return
        choices = [i.id for i in bank if i.type in item_analysis.OPTION_TYPES]
        chosen = st.selectbox(_("Quiz item"), choices, index=None, placeholder=_("Choose an item"),
                              key="presenter-quiz-item", format_func=lambda item_id: bank[item_id].prompt)
        if chosen is None:
            return
        item = bank[chosen]
        analysis = item_analysis.analyse(sources.store().answer_table(), bank)
        answered = int(analysis.items.set_index("item").loc[item.id, "answered"])
        if answered == 0:
            st.info(_("Nobody has answered this item yet."))
            return
        counts = analysis.option_counts(item.id)
        labels = [vote_figures.wrap(f"{analysis_words.letter(k)}. {o.text}", 40) for k, o in enumerate(item.options)]
        chosen_by = [counts.get(o.key, 0) for o in item.options]
        right = [o.correct for o in item.options]
        chart.show(item_charts.option_counts(labels, chosen_by, right, answered, t(), font_size=vote_figures.FONT),
                   item_charts.option_counts_summary(labels, chosen_by, right, answered, t()),
                   key="presenter-quiz-item-chart", theme=None)
        st.markdown("\n".join(analysis_words.option_lines(item, counts)))
        st.caption(t().render(N_("Answered: {n:count}. Each learner counts once, with their latest attempt that "
                                 "has an answer; a multiple-choice answer counts every option it picked."), n=answered))


with root:
    {1: step_change, 2: step_question, 3: step_votes, 4: step_run, 5: step_reveal}[step]()
    back, _gap, forward = st.columns([1, 4, 1])
    if step > STEPS[0]:
        back.button(_("Back"), key="presenter-back", on_click=_go, args=(step - 1,))
    if step < STEPS[-1]:
        forward.button(_("Next step"), key="presenter-next", type="primary", on_click=_go, args=(step + 1,),
                       width="stretch")
    quiz_item_answers()
