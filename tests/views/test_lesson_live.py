"""Every lesson's live element runs on the real server from its page and shows its evidence."""
from __future__ import annotations

import json
import re

from app.checker import words as check_words
from app.i18n import words
from app.live.rollout import words as rollout_words
from app.recogniser.engine.judgement import evidence
from tests.views.conftest import RUN_TIMEOUT_S


def click(at, key: str):
    at.button(key=key).click().run(timeout=RUN_TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    return at


def chart_ids(at) -> list[str]:
    return [c.proto.id for c in at.get("plotly_chart")]


def has_chart(at, key: str) -> bool:
    return any(i.endswith(f"-{key}") for i in chart_ids(at))


def test_batch_vs_single(open_page):
    at = open_page("lesson_01")
    at.slider(key="bvs-count").set_value(32)
    click(at, "bvs-run")
    assert [m.label for m in at.metric] == ["one at a time", "16 at once"]
    assert has_chart(at, "bvs-throughput") and has_chart(at, "bvs-batches")
    assert any("same label both ways" in s.value for s in at.success)


def test_dynamic_batching_demo(open_page):
    at = open_page("lesson_02")
    at.slider(key="dbd-count").set_value(32)
    click(at, "dbd-run")
    assert has_chart(at, "dbd-batches")
    assert any("Identical results in both arrival orders" in s.value for s in at.success)
    assert len(at.dataframe[0].value) > 0


def test_the_mistake_small(open_page):
    at = open_page("lesson_03")
    click(at, "mistake-run")
    assert any(m.value == "#### Transcript board" for m in at.markdown)
    lines = [m.value for m in at.markdown if "<b>Session " in m.value]
    assert len(lines) == 8
    assert has_chart(at, "mistake-timeline")
    # The outcome itself: sessions corrupted, and chunks read the state of ANOTHER SESSION OF
    # THIS RUN (the model's raw STATE_OWNER), not only state left by an earlier run.
    _, result = at.session_state["live-result:the_mistake"]
    summary = [e.value for e in at.error if "sessions corrupted" in e.value]
    assert summary and re.match(r"[1-8] of 8 sessions corrupted: ", summary[0]), [e.value for e in at.error]
    assert not any("All 8 sessions intact" in s.value for s in at.success)
    mixed = evidence.mixing_broke_chunks(result)
    assert not mixed.empty, result.sessions[["session", "verdict", "detail_code", "detail_values"]].to_dict("records")
    # ...and the timeline's hover shows it: that chunk's bar says whose state it read.
    shown = hover_rows(at, "mistake-timeline")
    for r in mixed.itertuples():
        row = next(c for c in shown[f"session {r.session + 1}"] if int(c[0]) == r.chunk + 1)
        assert row[6] == f"session {r.owner_session + 1}", row


def hover_rows(at, key: str) -> dict[str, list]:
    """Per session trace of a timeline chart on the page: its bars' hover data."""
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith(f"-{key}"))
    spec = json.loads(chart.proto.spec)
    return {t["name"]: t["customdata"] for t in spec["data"] if t.get("name", "").startswith("session ")}


def test_sequence_controls_show_flags_slots_and_padding(open_page):
    at = open_page("lesson_04")
    at.checkbox(key="seqc-one-instance").check()
    click(at, "seqc-run")
    table = at.dataframe[0].value
    assert table["START"].sum() == 2 and table["END"].sum() == 2  # one of each per session
    assert set(table["session"]) == {1, 2}
    assert len(set(table["instance"])) == 1, "the one-instance deployment keeps both sessions together"
    assert "padding rows (READY=0)" in table.columns
    assert any("sessions intact" in s.value for s in at.success)
    assert has_chart(at, "seqc-timeline")


def test_direct_vs_oldest_side_by_side(open_page):
    at = open_page("lesson_05")
    at.slider(key="dvo-sessions").set_value(4)
    at.slider(key="dvo-chunks").set_value(8)
    click(at, "dvo-run")
    assert has_chart(at, "dvo-timeline-direct") and has_chart(at, "dvo-timeline-oldest")
    assert sum("All 4 sessions intact" in m.value for m in at.markdown) == 2


def test_instances_vs_batching_shows_per_instance_work_and_waiting(open_page):
    at = open_page("lesson_06")
    at.number_input(key="ivb-sessions").set_value(10)  # more than 2 x 4 slots: two must wait
    click(at, "ivb-run")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Capacity"] == "8" and metrics["Sessions"] == "10"
    assert int(metrics["Waited for a slot"]) >= 1
    assert has_chart(at, "ivb-work") and has_chart(at, "ivb-timeline")


def test_rollout_checks_show_the_checkers_report_on_the_lab_deployments(open_page):
    """Lesson 7 runs the deployment checker on the lab's deployments and shows its report with the
    lesson's reading above it. Certain from the model code (tests/recogniser/exercises/test_verification.py
    says why): the recogniser holds under the sequence batcher, breaks `repeat_alone` with
    keeps_state behind the dynamic batcher, and the stateless sentiment model holds."""
    en = words("en")
    at = open_page("lesson_07")
    assert at.selectbox(key="rollout-target").value == "asr_sequence_direct"
    click(at, "rollout-run")
    run = at.session_state["live-result:rollout_checks"]
    assert run.result.facts.name == "asr_sequence_direct" and run.result.exit_code == 0, run.result.verdicts
    assert f"`asr_sequence_direct`: {en(rollout_words.READINGS['sequence_held'])}" in [s.value for s in at.success]
    tables = [d.value for d in at.dataframe]
    table = next((t for t in tables if {"verdict", "check", "run on"} <= set(t.columns)), None)  # the report's checks
    assert table is not None, [list(t.columns) for t in tables]
    assert len(table) == len(run.result.verdicts) and set(table["verdict"]) <= {"HELD", "SKIPPED"}
    assert has_chart(at, "rollout-timeline")

    at.selectbox(key="rollout-target").set_value("asr_dynamic")
    click(at, "rollout-run")
    result = at.session_state["live-result:rollout_checks"].result
    assert result.judgement.verdict("repeat_alone").reason == "keeps_state" and result.exit_code == 1
    warnings = [w.value for w in at.warning]
    assert f"`asr_dynamic`: {en(rollout_words.READINGS['recogniser_keeps_state'])}" in warnings, warnings
    assert en(check_words.DIAGNOSES["keeps_state"]) in warnings

    at.selectbox(key="rollout-target").set_value("sentiment")
    click(at, "rollout-run")
    result = at.session_state["live-result:rollout_checks"].result
    assert result.facts.name == "sentiment" and result.exit_code == 0
    assert f"`sentiment`: {en(rollout_words.READINGS['stateless_held'])}" in [s.value for s in at.success]


def test_generation_in_flight_runs_one_workload_both_ways_after_a_prediction(open_page, unload_at_end):
    """Lesson 8: the button waits for both predictions; then the same planned requests go to gen_static and
    gen_inflight, and the page shows each verdict, the numbers per deployment, the latency chart and every stream
    under both, equal token for token (the tokens depend on the prompt alone)."""
    from app.generation import live as gen_live  # Streamlit-free; imported here as the page imports it

    unload_at_end("gen_static")
    unload_at_end("gen_inflight")
    at = open_page("lesson_08")
    assert at.button(key="gif-run").disabled
    at.radio(key="gif-predict-ttft").set_value("inflight")
    at.radio(key="gif-predict-throughput").set_value("static").run(timeout=RUN_TIMEOUT_S)
    click(at, "gif-run")
    said, done = at.session_state["live-result:generation_in_flight"]
    assert said == {"ttft": "inflight", "throughput": "static"}
    assert [r.model for r in done] == ["gen_static", "gen_inflight"]
    seen = gen_live.seen(done)
    verdicts = [m.value for m in [*at.success, *at.warning] if m.value.startswith("You predicted")]
    assert len(verdicts) == 2 and len(at.success) == sum(said[q] == seen[q] for q in said), verdicts
    labels = [m.label for m in at.metric]
    assert labels.count("first token, median") == 2 and labels.count("tokens/s") == 2, labels
    assert has_chart(at, "gif-latencies")
    streams = next(d.value for d in at.dataframe if "same tokens" in d.value.columns)
    assert len(streams) == gen_live.WORKLOAD.requests and set(streams["same tokens"]) == {"yes"}
    assert all(len(s.split()) >= gen_live.WORKLOAD.min_tokens for s in streams["tokens in flight"])


def test_generation_in_flight_speaks_chinese(open_page, unload_at_end):
    unload_at_end("gen_static")
    unload_at_end("gen_inflight")
    at = open_page("lesson_08", lang="zh")
    at.radio(key="gif-predict-ttft").set_value("same")
    at.radio(key="gif-predict-throughput").set_value("same").run(timeout=RUN_TIMEOUT_S)
    click(at, "gif-run")
    verdicts = [m.value for m in [*at.success, *at.warning] if m.value.startswith("你预测的是")]
    assert len(verdicts) == 2, [m.value for m in [*at.success, *at.warning]]
    assert [m.label for m in at.metric].count("首个词元（中位数）") == 2
    streams = next(d.value for d in at.dataframe if "词元相同" in d.value.columns)
    assert set(streams["词元相同"]) == {"是"}, streams


def test_kv_memory_runs_the_workload_on_the_paged_engine_after_a_prediction(open_page, unload_at_end):
    """Lesson 9: the button waits for a prediction; then the seeded workload runs on the engine with the blocks
    and sharing picked. With 8 blocks of 16 tokens and sharing off, the engine cannot run the eight requests at
    once: each prompt alone (a 32-token system prompt and 4 to 24 more) needs 3 or 4 blocks, so at most two fit,
    and the others, arriving about 20 ms apart while each generation takes at least 8 steps of 10 ms, wait. So
    'all eight' is certain to be answered with a warning, and every request still finishes."""
    from app.generation.paged.engine import setup_name
    from app.generation.paged.lesson import engine

    unload_at_end(setup_name(engine.settings(8, False)))
    at = open_page("lesson_09")
    assert at.button(key="kvm-run").disabled
    at.select_slider(key="kvm-blocks").set_value(8)
    at.toggle(key="kvm-sharing").set_value(False)
    at.radio(key="kvm-predict").set_value("all").run(timeout=RUN_TIMEOUT_S)
    click(at, "kvm-run")
    said, done = at.session_state["live-result:kv_memory"]
    assert said == "all" and (done.blocks, done.sharing) == (8, False)
    numbers = done.figures
    assert numbers.complete == numbers.requests == engine.WORKLOAD.requests
    assert numbers.peak_running < engine.WORKLOAD.requests and numbers.peak_waiting > 0, numbers
    assert done.seen != "all" and numbers.prefix_blocks_reused == 0
    assert (done.steps["used_blocks"] <= done.blocks).all() and done.steps["used_blocks"].max() > 0
    verdicts = [m.value for m in at.warning if m.value.startswith("You predicted All eight")]
    assert len(verdicts) == 1 and not at.success, [m.value for m in [*at.success, *at.warning]]
    labels = [m.label for m in at.metric]
    assert {"running at once, peak", "waiting, peak", "first token, median"} <= set(labels), labels
    assert has_chart(at, "kvm-steps")
    table = next(d.value for d in at.dataframe if "first engine step" in d.value.columns)
    assert len(table) == engine.WORKLOAD.requests and (table["first engine step"] >= 0).all()


def test_kv_memory_speaks_chinese(open_page, unload_at_end):
    """The same element in Chinese: its prediction, its verdict and its numbers, on the shipped kv_engine
    (64 blocks, sharing on), whatever the engine shows."""
    from app.generation.paged.engine import MODEL

    unload_at_end(MODEL)
    at = open_page("lesson_09", lang="zh")
    at.radio(key="kvm-predict").set_value("some").run(timeout=RUN_TIMEOUT_S)
    click(at, "kvm-run")
    verdicts = [m.value for m in [*at.success, *at.warning] if m.value.startswith("你预测的是")]
    assert len(verdicts) == 1, [m.value for m in [*at.success, *at.warning]]
    assert "同时运行（峰值）" in [m.label for m in at.metric]
    assert any("首个引擎步" in d.value.columns for d in at.dataframe)
