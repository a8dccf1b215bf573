"""The Generation lab's engine mode in AppTest against the session's real server, in English and Chinese:
the lab chosen into the URL, a preset's two settings side by side on one workload with every figure and
its sentence, and a link that rebuilds a set-up (and the URL it writes back), run in Chinese."""
from __future__ import annotations

from app.generation.paged import figures, runs
from app.generation.paged import words as pw
from app.generation.paged.engine import PagedSettings, PagedWorkload
from app.generation.paged.setup import LAB_KEY, PRESETS, PagedSetup
from app.generation.setup import GenSetup
from app.i18n import words
from app.quiz.store import ProgressStore
from tests.i18n.test_pages_in_chinese import untranslated
from tests.views.conftest import RUN_TIMEOUT_S
from tests.views.learners import link_id


def run(node):
    at = node.run(timeout=RUN_TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_too_few_blocks_side_by_side_shows_requests_waiting_for_memory_in_every_figure(open_page):
    """Why what this pins is certain: setting B's cache is 8 blocks of 16 tokens, 128 tokens in all, and each of
    the eight requests needs 44 to 88 tokens (a 32-token system prompt, 4 to 24 of its own, 8 to 32 answer
    tokens) while they arrive about 20 ms apart and each runs for 8 or more 10 ms steps: they cannot all hold
    blocks at once, so some step of B has a request waiting; A's 64 blocks (1,024 tokens) hold all eight."""
    at = open_page("generation.py", learner=link_id("kv-ada"))
    assert at.radio(key="gen.lab").value == "generator", "a link without g_lab opens the generator, as before"
    run(at.radio(key="gen.lab").set_value("engine"))
    assert at.query_params[LAB_KEY] == "engine"
    run(at.button(key="kv.preset-too_few_blocks").click())
    wanted = PRESETS["too_few_blocks"]
    assert at.number_input(key="kv.a.num_blocks").value == 64 and at.number_input(key="kv.b.num_blocks").value == 8
    assert {k: at.query_params[k] for k in wanted.to_query()} == wanted.to_query()  # the URL holds the set-up
    assert at.button(key="kv.run").disabled, "no run before a prediction"
    run(at.radio(key="kv.prediction-compare").set_value("a"))
    run(at.button(key="kv.run").click())

    setup, kind, choice, done = at.session_state["kv.result"]
    assert setup == wanted and kind == "compare" and choice == "a"
    assert [r.side for r in done] == ["a", "b"] and [r.settings for r in done] == [wanted.a, wanted.b]
    a, b = (r.requests for r in done)
    assert list(a["prompt_tokens"]) == list(b["prompt_tokens"]) and list(a["max_tokens"]) == list(b["max_tokens"])
    assert (a["status"] == "complete").all() and (b["status"] == "complete").all()
    assert done[0].figures.peak_waiting == 0 < done[1].figures.peak_waiting
    assert done[1].figures.least_free_blocks == 0 and int(done[1].blocks.drop_duplicates(["step", "block"])
                                                          .groupby("step").size().max()) <= 8
    seen = runs.answer("compare", done)
    said = [s.value for s in at.success] if seen == "a" else [w.value for w in at.warning]
    assert any(pw.ANSWERS["compare"][seen] in s for s in said)
    assert len(at.get("plotly_chart")) == 4, "a block table per setting, the queue, the latencies"
    captions = [c.value for c in at.caption]
    for drawn in figures.charts(done, words("en")):
        assert drawn.summary in captions
    numbers, requests = at.dataframe[0].value, at.dataframe[1].value
    assert list(numbers.columns) == ["setting A", "setting B"] and "tokens/s" in numbers.index
    assert len(requests) == 2 * wanted.workload.requests
    records = ProgressStore().predictions(link_id("kv-ada"))  # the instructor's page sees the prediction
    assert [(r.exercise, r.prediction, r.outcome, r.held) for r in records] == [("generation:kv_compare", "a", seen,
                                                                                 seen == "a")]

    # To the generator's lab and back: each lab's widgets keep the set-up they showed (Streamlit drops the values of
    # widgets a run did not draw; the held set-ups put them back).
    run(at.radio(key="gen.lab").set_value("generator"))
    assert at.query_params[LAB_KEY] == "generator" and at.number_input(key="gen.max_tokens").value == GenSetup().max_tokens
    run(at.radio(key="gen.lab").set_value("engine"))
    assert at.number_input(key="kv.b.num_blocks").value == 8 and at.toggle(key="kv.compare").value is True
    assert at.session_state["kv.result"][0] == wanted and len(at.get("plotly_chart")) == 4


def test_a_link_in_chinese_rebuilds_an_engine_set_up_runs_it_and_keeps_it_in_the_url(open_page):
    wanted = PagedSetup(compare=False, a=PagedSettings(num_blocks=32, block_size=8, scheduler="prefill_first"),
                        workload=PagedWorkload(requests=3, mean_gap_ms=10.0, system_tokens=16, max_answer_tokens=12,
                                               seed=5))
    at = open_page("generation.py", lang="zh", **{LAB_KEY: "engine"}, **wanted.to_query())
    zh = words("zh")
    assert at.radio(key="gen.lab").value == "engine"
    assert at.markdown[0].value != pw.ENGINE_INTRO and zh(pw.ENGINE_INTRO) in [m.value for m in at.markdown]
    assert at.toggle(key="kv.compare").value is False and at.number_input(key="kv.b.num_blocks").disabled
    assert at.radio(key="kv.a.scheduler").value == "prefill_first" and at.number_input(key="kv.requests").value == 3
    run(at.radio(key="kv.prediction-single").set_value("no"))
    run(at.button(key="kv.run").click())
    setup, kind, _choice, done = at.session_state["kv.result"]
    assert setup == wanted and kind == "single" and [r.side for r in done] == ["a"]
    assert {k: at.query_params[k] for k in wanted.to_query()} == wanted.to_query()
    assert at.dataframe[0].value.columns.tolist() == [zh("setting A")]
    captions = [c.value for c in at.caption]
    assert figures.blocks_summary(done[0].blocks, done[0].steps, 32, "a", zh) in captions
    assert (done[0].requests["status"] == "complete").all() and len(done[0].requests) == 3
    found = untranslated(at)  # no English prose or widget label left on the engine mode in Chinese, results included
    assert not found, "\n".join(f"{w}: {t!r} -> {r}" for w, t, r in found[:30])


def test_a_cache_too_small_for_the_longest_request_is_said_before_the_run_and_run_stays_off(open_page):
    small = PagedSetup(compare=False, a=PagedSettings(num_blocks=4, block_size=4))  # 16 tokens: no request fits
    at = open_page("generation.py", **{LAB_KEY: "engine"}, **small.to_query())
    run(at.radio(key="kv.prediction-single").set_value("yes"))
    expected = words("en").render(pw.PROBLEMS["kv_request_past_cache"], side="A", tokens=small.longest_request(), blocks=4,
                                  size=4, capacity=16)
    assert any(expected in w.value for w in at.warning), [w.value for w in at.warning]
    assert at.button(key="kv.run").disabled and "kv.result" not in at.session_state


def test_a_run_that_waits_for_another_learners_run_says_why_and_for_how_long(open_page, lab_server):
    """Another run holds kv_engine (a lease on the session server's run queue, taken in this process, as a second
    learner's page would take it) until the page's run is seen waiting behind it; then it lets go."""
    import threading

    from app.generation.paged.engine import MODEL
    from app.lab.traffic import run_queue
    from tests.waiting import wait_for

    setup = PagedSetup(compare=False, workload=PagedWorkload(requests=2, mean_gap_ms=0.0))  # kv_engine's own settings
    at = open_page("generation.py", **{LAB_KEY: "engine"}, **setup.to_query())
    run(at.radio(key="kv.prediction-single").set_value("no"))
    queue = run_queue.for_server(lab_server.url)
    held, done = threading.Event(), threading.Event()

    def other_learner() -> None:
        with queue.lease(MODEL):
            held.set()
            wait_for(lambda: queue.waiting() >= 1, "the page's run waiting behind the other run", timeout_s=120)
        done.set()

    threading.Thread(target=other_learner, daemon=True).start()
    assert held.wait(30)
    run(at.button(key="kv.run").click())
    assert done.is_set()
    waited = at.session_state["kv.waited"]
    assert waited.most_ahead == 1 and waited.seconds > 0
    expected = words("en").render(pw.WAITED, seconds=waited.seconds, ahead=1)
    assert expected in [i.value for i in at.info]
    assert at.session_state["kv.result"][3][0].model == MODEL
