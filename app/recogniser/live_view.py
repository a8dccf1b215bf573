"""Live elements of lessons 3 to 6: the streaming recogniser under each scheduler."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from app.i18n import N_
from app.lab.deployment import LabSettings
from app.lab.records import Traffic
from app.lab.scenario.scenario import Scenario
from app.live.common.view import explained_failures, store, stored
from app.live.sentiment import words as sentiment_words
from app.recogniser import live as worked_example_run
from app.recogniser.engine import driver, presets
from app.recogniser.engine.judgement import analysis
from app.recogniser.engine.setup import parse_texts
from app.recogniser.live import TEXT
from app.recogniser.view import run_views, transcripts
from app.recogniser.words import presets as preset_words
from app.ui.language import _, t
from app.ui.progress import run_with_progress

if TYPE_CHECKING:
    from app.lab.deployment import Applied, Deployer
    from app.lab.records import RunResult
    from app.lab.server import LabServer


def _run_preset(server: LabServer, deployer: Deployer, name: str, traffic: Traffic, label: str) -> tuple[Applied, RunResult]:
    applied = deployer.apply(presets.get(name).settings)
    result = run_with_progress(lambda p: driver.run(server, traffic.scenario(applied.model), progress=p), label)
    return applied, result


def the_mistake(server: LabServer, deployer: Deployer) -> None:
    st.markdown(_(
        "Eight sessions stream 12 chunks each, one letter a chunk, through **`asr_dynamic`** (two instances, state kept per batch row). "
        "Watch the transcripts drift."
    ))
    if st.button(_("Run the mistake"), key="mistake-run", type="primary"):
        with explained_failures():
            store("the_mistake", _run_preset(server, deployer, "the_mistake", Traffic(sessions=8, chunks=12, seed=3), _("Streaming")))
    saved = stored("the_mistake")
    if saved:
        applied, result = saved
        transcripts.board(result, key="mistake-board")
        run_views.timeline(run_views.analysed(result, applied.settings), applied.settings.scheduler, key="mistake-timeline")


ONE_INSTANCE = LabSettings(scheduler="direct", instances=1, slots=4, state_key="slot")


def worked_example(server: LabServer) -> None:
    """The lesson's two models and four requests, sent for real; the refusal text is the server's own."""
    st.markdown("#### " + _("The worked example") + "\n" + _(
        "Requests 1 and 2 go to **`sentiment`** (Model A) with no sequence ID. Requests 3 and 4 are turns 3 and 4 "
        "of one sequence on **`asr_sequence_direct`** (Model B), both with the start flag false. The lesson's "
        "sequence 77 is sent under an ID of its own so learners sharing the server never collide."
    ))
    open_first = st.checkbox(_("Open the sequence first (turns 1 and 2, START on turn 1)"), value=True, key="wex-open")
    if st.button(_("Send the four requests"), key="wex-run", type="primary"):
        with explained_failures():
            store("worked_example", worked_example_run.run(server, open_first=open_first))
    sent = stored("worked_example")
    if sent is None:
        return
    st.dataframe(worked_example_table(sent), hide_index=True, width="stretch", key="wex-table")
    b = sent[sent["request"].isin(["3", "4"])]
    words = t()
    if (b["outcome"] == "refused").all():
        st.warning(words.render(N_("Triton refused turns 3 and 4: it knows no open sequence with that ID. "
                                   "The server said: `{message:text}`"), message=b["server_says"].iloc[0]))
    elif b["instance"].nunique() == 1 and b["slot"].nunique() == 1 and "".join(b["outcome"]) == TEXT[2:]:
        st.success(words.render(N_("Turns 3 and 4 ran on instance {instance:count}, slot {slot:count}, and decoded to "
                                   "{letters:text}: the state of turns 1 and 2 was there."),
                                instance=int(b["instance"].iloc[0]), slot=int(b["slot"].iloc[0]), letters=TEXT[2:]))
    else:
        st.error(_("Turns 3 and 4 did not behave as the lesson says; the table shows what the server did."))


WORKED_COLUMNS = {"request": N_("request"), "model": N_("model"), "sequence_id": N_("sequence ID"), "start": "START",
                  "end": "END", "outcome": N_("outcome"), "instance": N_("instance"), "slot": N_("slot"),
                  "server_says": N_("the server said")}
REQUEST_WORDS = {"turn 1": N_("turn 1"), "turn 2": N_("turn 2")}


def worked_example_table(sent: pd.DataFrame) -> pd.DataFrame:
    """The walk-through's rows as the learner reads them: outcomes and headers in words."""
    words = t()
    table = sent.copy()
    table["request"] = [words(REQUEST_WORDS[r]) if r in REQUEST_WORDS else r for r in table["request"]]
    table["outcome"] = [
        words.render(N_("{label:text} (“{review:text}”)"), label=sentiment_words.label(o == "positive", words), review=r)
        if o in ("positive", "negative") else words(N_("refused")) if o == "refused" else o
        for o, r in zip(table["outcome"], table["review"], strict=True)
    ]
    table = table.drop(columns=["review"])
    return table.rename(columns={k: words(v) for k, v in WORKED_COLUMNS.items()})


def sequence_controls(server: LabServer, deployer: Deployer) -> None:
    worked_example(server)
    st.markdown("#### " + _("Your own chunks"))
    st.markdown(_(
        "Stream one or two short utterances through **`asr_sequence_direct`** and see, for every request, the "
        "flags the client sent, the slot and batch the sequence batcher chose, and the READY=0 padding rows "
        "that filled the batch. The correlation IDs are chosen for you so no two learners' sequences collide."
    ))
    cols = st.columns([1, 2, 2])
    count = cols[0].radio(_("Sessions"), (1, 2), index=1, key="seqc-count", horizontal=True)
    first = cols[1].text_input(_("Session 1 says"), "HELLO", key="seqc-text-1", max_chars=20)
    second = cols[2].text_input(_("Session 2 says"), "TRITON", key="seqc-text-2", max_chars=20, disabled=count == 1)
    together = st.checkbox(_("Keep both sessions on one instance (a deployment of your own with 1 instance × 4 slots)"),
                           key="seqc-one-instance", disabled=count == 1,
                           help=_("asr_sequence_direct has 2 instances, so two sessions often land on different ones "
                                  "and never share a batch; on one instance they do, and padding rows appear."))
    if st.button(_("Send"), key="seqc-run", type="primary"):
        texts = list(parse_texts(first))[:1] + (list(parse_texts(second))[:1] if count == 2 else [])
        with explained_failures():
            model = "asr_sequence_direct"
            if together and count == 2:
                with st.spinner(_("Loading your one-instance deployment (a few seconds the first time)...")):
                    model = deployer.apply(ONE_INSTANCE).model
            # Different think times, so one session's slot is often waited on: padding appears.
            scenario = Scenario(model, texts, think_ms=15, jitter_ms=0,
                                think_ms_by_session=[15.0, 45.0][: len(texts)])
            scenario.validate()
            store("sequence_controls", run_with_progress(lambda p: driver.run(server, scenario, progress=p), _("Sending")))
    result = stored("sequence_controls")
    if result is None:
        return
    table = analysis.control_rows(result.requests, result.sessions)
    table = table.drop(columns=["error"] if not table["error"].any() else [])
    st.dataframe(table.rename(columns={k: _(v) for k, v in CONTROL_COLUMNS.items()}), hide_index=True, width="stretch",
                 key="seqc-table")
    st.caption(_(
        "START is true on each session's first request and END on its last. 'padding rows' counts the rows of that "
        "execution with READY=0: the slots below the highest slot that had a request ready, whether empty or "
        "held by a sequence with nothing waiting. Slots above it get no row."
    ))
    transcripts.board(result, key="seqc-board", audio=False)
    run_views.timeline(run_views.analysed(result), key="seqc-timeline")


CONTROL_COLUMNS = {
    "session": N_("session"), "chunk": N_("chunk"), "corrid": N_("correlation ID"), "start": "START", "end": "END",
    "instance": N_("instance"), "slot": N_("slot"), "batch": N_("batch"), "padding": N_("padding rows (READY=0)"),
    "state_read": N_("state read"), "expected": N_("expected"), "got": N_("got"), "error": N_("error"),
}


def direct_vs_oldest(server: LabServer, deployer: Deployer) -> None:
    st.markdown(_(
        "The same sessions run on **direct** (state per slot) and on **oldest** (state per correlation ID). "
        "Both deployments have 2 instances × 4 slots = 8 sessions at once; try more to see sessions wait."
    ))
    cols = st.columns(2)
    sessions = cols[0].slider(_("Sessions"), 2, 16, 8, key="dvo-sessions")
    chunks = cols[1].slider(_("Chunks per session"), 4, 40, 16, key="dvo-chunks")
    if st.button(_("Run on both"), key="dvo-run", type="primary"):
        traffic = Traffic(sessions=sessions, chunks=chunks, seed=5)
        with explained_failures():
            runs = [_run_preset(server, deployer, name, traffic, _(preset_words.LABELS[name])) for name in ("the_fix", "oldest_right")]
            store("direct_vs_oldest", runs)
    runs = stored("direct_vs_oldest")
    if not runs:
        return
    for column, (applied, result) in zip(st.columns(2), runs, strict=True):
        with column:
            st.markdown(t().render(N_("**{scheduler:text}** on `{model:text}`"), scheduler=applied.settings.scheduler,
                                   model=applied.model))
            waited = int(analysis.waited_for_slot(result.requests).sum())
            st.markdown(transcripts.verdict_summary(result.sessions))
            st.caption(t().render(N_("Sessions that waited for a free slot before their first chunk ran: {n:count}."),
                                  n=waited))
            run_views.timeline(run_views.analysed(result, applied.settings), applied.settings.scheduler,
                               key=f"dvo-timeline-{applied.settings.scheduler}", explain=False)
    run_views.explain_timeline("direct", "oldest")


def instances_vs_batching(server: LabServer, deployer: Deployer) -> None:
    st.markdown(_(
        "Change how many **instances** (copies of the recogniser) and how many **slots** each has, then stream "
        "sessions. Capacity is instances × slots; sessions beyond it wait for a slot."
    ))
    cols = st.columns(4)
    scheduler = cols[0].radio(_("Strategy"), ("direct", "oldest"), key="ivb-scheduler")
    instances = cols[1].number_input(_("Instances"), 1, 4, 2, key="ivb-instances")
    slots = cols[2].number_input(_("Slots per instance"), 1, 8, 4, key="ivb-slots")
    sessions = cols[3].number_input(_("Sessions"), 1, 24, 8, key="ivb-sessions")
    assert scheduler is not None  # a radio with a default index always has a choice
    settings = LabSettings(scheduler=scheduler, instances=int(instances), slots=int(slots),
                           state_key="slot" if scheduler == "direct" else "corrid")
    st.caption(t().render(N_("Capacity: {instances:count} × {slots:count} = {capacity:count} sessions at once."),
                          instances=int(instances), slots=int(slots), capacity=int(instances) * int(slots)))
    if st.button(_("Deploy and run"), key="ivb-run", type="primary"):
        with explained_failures():
            with st.spinner(_("Loading the deployment (a few seconds when it is new)...")):
                applied = deployer.apply(settings)
            traffic = Traffic(sessions=int(sessions), chunks=16, seed=9)
            result = run_with_progress(lambda p: driver.run(server, traffic.scenario(applied.model), progress=p), _("Streaming"))
            store("instances_vs_batching", (applied, result))
    saved = stored("instances_vs_batching")
    if not saved:
        return
    applied, result = saved
    waited = analysis.waited_for_slot(result.requests)
    shown = st.columns(3)
    shown[0].metric(_("Sessions"), len(result.sessions))
    shown[1].metric(_("Capacity"), applied.settings.instances * applied.settings.slots)
    shown[2].metric(_("Waited for a slot"), int(waited.sum()))
    st.markdown(transcripts.verdict_summary(result.sessions))
    analysed = run_views.analysed(result, applied.settings)
    run_views.instance_work(analysed, key="ivb-work")
    run_views.timeline(analysed, applied.settings.scheduler, key="ivb-timeline")
    with st.expander(t().render(N_("config.pbtxt of `{model:text}`"), model=applied.model)):
        st.code(applied.pbtxt, language="text")
