"""The generation lab in AppTest against the session's real server, in English and Chinese: presets, the set-up
in the URL, the prediction before Run, both modes on the same workload, the figures with their sentences."""
from __future__ import annotations

from app.generation import figures, runs
from app.generation import words as gw
from app.generation.setup import PRESETS, GenSetup
from app.i18n import words
from app.quiz.store import ProgressStore
from tests.views.conftest import RUN_TIMEOUT_S
from tests.views.learners import link_id


def run(node):
    at = node.run(timeout=RUN_TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_preset_compared_on_the_server_shows_both_modes_figures_numbers_and_requests(open_page):
    at = open_page("generation.py", learner=link_id("gen-ada"))
    assert at.title[0].value == "Generation lab"
    run(at.button(key="gen.preset-long_and_short").click())
    wanted = PRESETS["long_and_short"]
    assert at.number_input(key="gen.max_tokens").value == wanted.max_tokens and at.radio(key="gen.mode").value == "compare"
    assert at.query_params["g_max_tokens"] == str(wanted.max_tokens)  # the URL holds the set-up
    assert at.button(key="gen.run").disabled, "no run before a prediction"
    run(at.radio(key="gen.prediction-compare").set_value("inflight"))
    run(at.button(key="gen.run").click())

    setup, kind, choice, done = at.session_state["gen.result"]
    assert setup == wanted and kind == "compare" and choice == "inflight"
    assert [r.mode for r in done] == ["static", "inflight"]
    assert set(done[0].requests["tag"]) == set(done[1].requests["tag"]) == set(range(1, wanted.requests + 1))
    seen = runs.answer("compare", done)
    said = [s.value for s in at.success] if seen == "inflight" else [w.value for w in at.warning]
    assert any(gw.ANSWERS["compare"][seen] in s for s in said)
    charts = [c.proto.id for c in at.get("plotly_chart")]
    assert len(charts) == 4, charts  # a timeline per mode, the latencies, the fill
    tables = runs.joined(done)
    captions = [c.value for c in at.caption]
    assert figures.latencies_summary(tables["requests"]) in captions
    assert figures.fill_summary(tables["steps"]) in captions
    numbers, requests = at.dataframe[0].value, at.dataframe[1].value
    assert list(numbers.columns) == ["static batching", "in-flight batching"] and "tokens/s" in numbers.index
    assert len(requests) == 2 * wanted.requests
    records = ProgressStore().predictions(link_id("gen-ada"))  # the instructor's page sees the prediction
    assert [(r.exercise, r.prediction, r.outcome, r.held) for r in records] == [("generation:compare", "inflight", seen,
                                                                                 seen == "inflight")]


def test_a_link_in_chinese_rebuilds_the_set_up_and_a_single_mode_run_asks_about_empty_rows(open_page):
    at = open_page("generation.py", lang="zh", g_mode="inflight", g_requests="3", g_max_tokens="4", g_min_tokens="2",
                   g_mean_gap_ms="20", g_seed="11")
    zh = words("zh")
    assert at.title[0].value == zh(gw.PAGE_TITLE) != gw.PAGE_TITLE
    assert at.radio(key="gen.mode").value == "inflight" and at.number_input(key="gen.requests").value == 3
    assert at.number_input(key="gen.max_candidates").disabled is False
    run(at.radio(key="gen.prediction-single").set_value("yes"))
    run(at.button(key="gen.run").click())
    setup, kind, _choice, done = at.session_state["gen.result"]
    assert setup == GenSetup(mode="inflight", requests=3, max_tokens=4, min_tokens=2, mean_gap_ms=20, seed=11)
    assert kind == "single" and [r.mode for r in done] == ["inflight"]
    tables = runs.joined(done)
    captions = [c.value for c in at.caption]
    assert figures.timeline_summary(tables["tokens"], setup.max_batch_size, _=zh) in captions
    assert at.dataframe[0].value.columns.tolist() == [zh("in-flight batching")]
    assert not tables["tokens"]["wrong"].any()


def test_a_link_naming_direct_runs_in_flight_under_direct_with_every_stream_in_one_row(open_page):
    """The strategy travels in the link (g_strategy); under direct the candidate count, oldest's, is greyed out, and
    the run's deployment keeps each request in its slot's row."""
    at = open_page("generation.py", g_mode="inflight", g_strategy="direct", g_requests="3", g_max_tokens="4",
                   g_min_tokens="2", g_mean_gap_ms="20", g_seed="11")
    assert at.radio(key="gen.strategy").value == "direct"
    assert at.number_input(key="gen.max_candidates").disabled is True
    run(at.radio(key="gen.prediction-single").set_value("yes"))
    run(at.button(key="gen.run").click())
    setup, _kind, _choice, done = at.session_state["gen.result"]
    assert setup.strategy == "direct" and [r.mode for r in done] == ["inflight"]
    tokens = runs.joined(done)["tokens"]
    assert not tokens["wrong"].any() and (tokens.groupby("tag")["row"].nunique() == 1).all()
