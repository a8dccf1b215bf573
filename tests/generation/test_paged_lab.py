"""The generation lab's engine mode without a server: its set-up through the URL, its question's judge,
its figures' sentences on hand-made tables, the words of every problem code the paged engine raises,
and the Presenter's paged demo's change and reveal."""
from __future__ import annotations

import ast
from dataclasses import replace

import pandas as pd
import pytest

from app.generation.paged import demo as kv_demo
from app.generation.paged import figures, runs
from app.generation.paged import words as pw
from app.generation.paged.engine import PagedFigures, PagedSettings, PagedWorkload
from app.generation.paged.setup import LIMITS, PRESETS, QUERY_KEYS, SETTING_FIELDS, WORKLOAD_FIELDS, PagedSetup
from app.generation.setup import GenSetup
from app.i18n import languages, words
from app.lab.paths import REPO_ROOT
from app.lab.problems import LabError
from app.presenter import view as presenter_view
from app.text.errors import explain


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_round_trips_through_the_url_and_has_its_words(name):
    setup = PRESETS[name]
    assert PagedSetup.from_query(setup.to_query()) == setup == setup.clamped()
    assert set(setup.to_query()) == set(QUERY_KEYS)
    assert name in pw.PRESETS


def test_url_keys_are_derived_from_the_declaration_and_never_the_generators():
    assert len(QUERY_KEYS) == 1 + 2 * len(SETTING_FIELDS) + len(WORKLOAD_FIELDS)
    assert not set(QUERY_KEYS) & {f"g_{k}" for k in GenSetup().to_query()} and not any(k.startswith("g_") for k in QUERY_KEYS)
    # an old generator link names no engine key: the engine's set-up it would open is the default one
    old = GenSetup(mode="inflight", requests=3).to_query()
    assert PagedSetup.from_query(old) == PagedSetup()


def test_a_link_out_of_range_is_clamped_to_what_the_engine_accepts_and_unparsable_values_keep_defaults():
    got = PagedSetup.from_query({"ka_num_blocks": "100000", "kb_scheduler": "lifo", "k_min_user_tokens": "90",
                                 "k_max_user_tokens": "5", "k_requests": "many", "k_compare": "false",
                                 "kb_prefix_sharing": "false"})
    assert got.a.num_blocks == LIMITS["num_blocks"][1] and got.b.scheduler == PagedSettings.scheduler
    assert got.workload.min_user_tokens == got.workload.max_user_tokens == 5
    assert got.workload.requests == PagedSetup().workload.requests and got.compare is False
    assert got.b.prefix_sharing is False and got.sides() == ("a",)
    assert not got.a.problems() and not got.b.problems() and not got.workload.problems()


def _raised_codes() -> set[str]:
    paged = REPO_ROOT / "app" / "generation" / "paged"
    codes = set()
    for path in [*(paged / "engine").rglob("*.py"), paged / "setup.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Problem" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                codes.add(node.args[0].value)
    return codes


def test_every_problem_code_the_paged_engine_raises_has_words_in_both_languages():
    raised = _raised_codes()
    assert {"kv_scheduler_unknown", "kv_setting_range", "kv_workload_range", "kv_workload_order",
            "kv_request_past_cache", "kv_request_past_positions"} <= raised
    assert raised == set(pw.PROBLEMS)
    for lang in languages():
        with pytest.raises(LabError) as err:
            PagedSettings(num_blocks=1, scheduler="lifo").check()
        said = explain(err.value, words(lang), wording=pw.PROBLEMS)
        assert said.codes == ("kv_scheduler_unknown", "kv_setting_range") and "lifo" in said.message
        with pytest.raises(LabError) as err:
            PagedWorkload(min_answer_tokens=9, max_answer_tokens=3).check()
        assert explain(err.value, words(lang), wording=pw.PROBLEMS).message == words(lang)(pw.PROBLEMS["kv_workload_order"])


def _side(side: str, ttft_p50_ms: float, peak_waiting: int) -> runs.SideRun:
    numbers = PagedFigures(requests=2, complete=2, tokens=4, wall_s=1.0, tokens_per_s=4.0, ttft_p50_ms=ttft_p50_ms,
                           ttft_p95_ms=ttft_p50_ms, tbt_p50_ms=10.0, tbt_p99_ms=12.0, steps=3, peak_running=2,
                           peak_waiting=peak_waiting, least_free_blocks=1, prefix_blocks_reused=1, prefix_blocks_possible=2,
                           prefix_share=0.5)
    empty = pd.DataFrame()
    return runs.SideRun(side=side, settings=PagedSettings(), model="m", requests=empty, steps=empty, blocks=empty,
                        figures=numbers)


@pytest.mark.parametrize(("a", "b", "seen"), [(100.0, 700.0, "a"), (700.0, 100.0, "b"), (100.0, 110.0, "same")])
def test_the_compare_answer_is_the_side_whose_median_first_token_came_sooner(a, b, seen):
    assert runs.answer("compare", [_side("a", a, 0), _side("b", b, 3)]) == seen


def test_the_single_answer_is_whether_any_step_had_a_request_waiting():
    assert runs.answer("single", [_side("a", 1.0, 0)]) == "no"
    assert runs.answer("single", [_side("a", 1.0, 2)]) == "yes"
    assert set(pw.ANSWERS["compare"]) == set(kv_demo.OPTIONS)


def _tables():
    """Two requests on 4 blocks over steps 1-3: request 0 holds 0 and 1, request 1 joins in step 2 sharing block 0."""
    blocks = pd.DataFrame([
        (1, 0, 11, 0, False), (1, 0, 11, 1, False),
        (2, 0, 11, 0, True), (2, 0, 11, 1, False), (2, 1, 12, 0, True), (2, 1, 12, 2, False),
        (3, 1, 12, 0, False), (3, 1, 12, 2, False),
    ], columns=["step", "index", "tag", "block", "shared"]).assign(side="a")
    steps = pd.DataFrame({"step": [1, 2, 3], "requests": [1, 2, 1], "tokens": [9, 10, 1], "free_blocks": [2, 1, 2],
                          "cached_blocks": [0, 0, 0], "waiting": [1, 0, 0], "running": [1, 2, 1],
                          "t_recv": [0.0, 0.1, 0.2]}).assign(side="a")
    requests = pd.DataFrame({"index": [0, 1], "ttft_ms": [50.0, 150.0], "tbt_p50_ms": [20.0, 30.0]}).assign(side="a")
    return blocks, steps, requests


@pytest.mark.parametrize("lang", languages())
def test_the_figures_draw_held_shared_and_free_blocks_and_their_sentences_read_the_same_tables(lang):
    _ = words(lang)
    blocks, steps, requests = _tables()
    fig = figures.blocks_figure(blocks, steps, 4, _)
    names = [t.name for t in fig.data]
    assert names == [_(pw.MARKS["free"]), figures.request_name(0, _), figures.request_name(1, _), _(pw.MARKS["shared"])]
    free = fig.data[0]
    assert len(free.x) == 3 * 4 - 7  # 12 block places, 7 of them held (block 0, held twice in step 2, counts once)
    assert list(fig.data[3].x) == [2] and list(fig.data[3].y) == [0]
    said = figures.blocks_summary(blocks, steps, 4, "a", _)
    assert said == _.render(pw.CHART_SUMMARIES["blocks"], side=_(pw.SIDES["a"]), requests=2, steps=3, peak=3, total=4,
                            shared=1)
    assert figures.queue_summary(steps, _) == _.render(pw.CHART_SUMMARIES["queue"], items=_.render(
        pw.CHART_SUMMARIES["queue_item"], side=_(pw.SIDES["a"]), waiting=1, running=2, free=1))
    assert len(figures.queue_figure(steps, _).data) == 3 and len(figures.latencies_figure(requests, _).data) == 2
    assert figures.latencies_summary(requests, _) == _.render(pw.CHART_SUMMARIES["latencies"], items=_.render(
        pw.CHART_SUMMARIES["latencies_item"], side=_(pw.SIDES["a"]), ttft=100.0, tbt=25.0))


def test_free_blocks_are_left_undrawn_past_the_limit_and_an_empty_run_says_so():
    blocks, steps, _requests = _tables()
    many = figures.FREE_MARKS_LIMIT  # 3 steps x this many blocks is past the limit
    assert [t.name for t in figures.blocks_figure(blocks, steps, many).data][0] != pw.MARKS["free"]
    assert figures.blocks_summary(blocks.iloc[0:0], steps, 4, "a") == "No tokens came back in this run."


def test_the_presenter_demo_changes_only_the_block_count_and_is_its_own_family():
    demo = kv_demo.DEMOS["kv_blocks"]
    removed, added = kv_demo.changed(demo)
    assert [line.strip() for line in removed] == ['string_value: "64"'] and [line.strip() for line in added] == ['string_value: "8"']
    assert any('key: "num_blocks"' in d.text for d in kv_demo.config_diff(demo) if d.kind == "context")
    assert presenter_view.family("kv_blocks") == kv_demo.FAMILY and presenter_view.known("kv_blocks") == "kv_blocks"
    assert presenter_view.demo_options("kv_blocks") == kv_demo.OPTIONS
    assert len(set(presenter_view.DEMO_NAMES)) == len(presenter_view.DEMO_NAMES)
    done = {"before": _side("a", 100.0, 0), "after": _side("b", 900.0, 4)}
    answer = kv_demo.reveal(demo, done, {"a": 3, "b": 1, "elsewhere": 2})
    assert answer.seen == "a" and answer.right == ("a",) and answer.votes == 4 and answer.share_right == 0.75
    assert kv_demo.reveal(demo, done, {}).share_right is None
    flipped = {"before": replace(done["before"], side="a"), "after": replace(done["after"], side="b")}
    assert kv_demo.reveal(demo, flipped, {}).seen == "a"


def test_a_side_whose_cache_could_never_hold_the_longest_request_is_refused_before_the_run_and_says_why():
    workload = PagedWorkload(requests=3, system_tokens=32, min_user_tokens=4, max_user_tokens=4, min_answer_tokens=8,
                             max_answer_tokens=8)  # every request: 32 + 4 prompt tokens and 8 answer tokens
    fits = PagedSetup(compare=True, a=PagedSettings(num_blocks=11, block_size=4), b=PagedSettings(num_blocks=3, block_size=16),
                      workload=workload)
    assert fits.longest_request() == 44 and fits.problems() == []
    short = replace(fits, b=PagedSettings(num_blocks=2, block_size=16))  # 32 tokens in all
    assert [(p.code, p.values["side"], p.values["capacity"]) for p in short.problems()] == [("kv_request_past_cache", "B", 32)]
    assert replace(short, compare=False).problems() == [], "a side that does not run is not judged"
    long = replace(fits, workload=replace(workload, long_prompt_tokens=448, min_answer_tokens=65, max_answer_tokens=65))
    assert "kv_request_past_positions" in [p.code for p in long.problems()]  # 448 + 65 answer tokens: past 512
    with pytest.raises(LabError) as err:
        runs.run_setup(None, short)  # type: ignore[arg-type]  # refused before it needs a server
    for lang in languages():
        said = explain(err.value, words(lang), wording=pw.PROBLEMS).message
        assert said == words(lang).render(pw.PROBLEMS["kv_request_past_cache"], side="B", tokens=44, blocks=2, size=16,
                                          capacity=32)
    assert all(not p.problems() for p in PRESETS.values())


def test_the_wait_record_keeps_the_most_runs_ahead_and_bounds_the_wait_by_one_poll():
    from app.lab.traffic import Wait, run_queue

    waited = runs.Waited()
    assert waited.seconds == 0.0 and waited.most_ahead == 0
    for ahead in (2, 1):
        waited.hear(Wait(ahead, 1.0))
    assert waited.most_ahead == 2
    assert waited.first_s is not None and waited.last_s is not None
    assert waited.seconds == pytest.approx(waited.last_s - waited.first_s + run_queue.POLL_S)
