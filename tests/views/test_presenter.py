"""Presenter mode and class votes on the real pages (AppTest through app/main.py, a real Triton).

The presenter walks one demo step by step; learners vote through the learner page; the reveal
judges the votes against what the server did in the run the presenter started.
"""
from __future__ import annotations

import json

import pytest

from app.i18n import N_, languages, words
from app.quiz import access_rules, votes
from app.recogniser import demo as demos
from tests.i18n.test_pages_in_chinese import untranslated
from tests.i18n.text_checks import has_cjk
from tests.views.conftest import RUN_TIMEOUT_S

DEMO = "state_key"  # oldest with state per batch row: the class predicts the broken side


def texts(at) -> str:
    return "\n".join(str(e.value) for kind in ("title", "markdown", "caption", "success", "warning", "error", "info",
                                               "metric") for e in getattr(at, kind))


def query(at, name: str):
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def presenter(open_page, step: int = 1, **params):
    at = open_page("presenter.py", demo=params.pop("demo", DEMO), step=str(step), **params)
    assert not at.exception, [e.value for e in at.exception]
    return at


def go(at, button: str):
    at.button(key=button).click().run(timeout=RUN_TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    return at


def histogram_counts(at, key: str = "presenter-histogram") -> dict[str, int]:
    """The bar chart's counts per option label, read from the figure the page sent."""
    chart = next(e for e in at.get("plotly_chart") if e.proto.id.endswith(key) or key in e.proto.id)
    spec = json.loads(chart.proto.spec)
    bar = spec["data"][0]
    return dict(zip(bar["y"], bar["x"], strict=True))


def learner_votes(open_page, code: str, learner: str, option: str):
    """learner: a whole learner id (name.token), as a learner's own link carries it."""
    at = open_page("demo.py", code=code, learner=learner)
    assert not at.exception, [e.value for e in at.exception]
    at.radio(key="demo-choice").set_value(option).run(timeout=RUN_TIMEOUT_S)
    at.button(key="demo-vote").click().run(timeout=RUN_TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("step", [1, 2, 3, 4, 5])
def test_each_step_renders(open_page, step):
    at = presenter(open_page, step)
    assert at.caption[0].value.startswith(f"Step {step} of 5")
    if step == 1:
        html = "\n".join(m.value for m in at.markdown)
        assert '<div class="removed">' in html and '<div class="added">' in html
        assert "string_value: &quot;slot&quot;" in html and "string_value: &quot;corrid&quot;" in html
        assert "1 lines out, 1 lines in" in texts(at)
    if step == 3:
        code = query(at, "code")
        assert code and votes.store().poll(code).demo == DEMO
        assert code in texts(at) and f"demo?code={code}" in texts(at)
        assert histogram_counts(at) and sum(histogram_counts(at).values()) == 0
    if step == 4:
        assert at.button(key="presenter-run")
    if step == 5:
        assert "Run the demo first" in texts(at)


def test_next_and_back_move_through_the_url(open_page):
    at = presenter(open_page, 1)
    go(at, "presenter-next")
    assert query(at, "step") == "2" and "What happens to their transcripts?" in texts(at)
    go(at, "presenter-back")
    assert query(at, "step") == "1"
    at.selectbox(key="presenter-demo").set_value("ready").run(timeout=RUN_TIMEOUT_S)
    assert query(at, "demo") == "ready" and "string_value: &quot;false&quot;" in texts(at)


def test_the_page_stops_without_the_instructor_key(open_page, monkeypatch):
    monkeypatch.setenv("TRITON_LAB_INSTRUCTOR_KEY", "staff-room-7")
    at = presenter(open_page, 3)
    assert not [b for b in at.button if b.key == "presenter-next"]
    assert not at.get("plotly_chart")
    assert query(at, "code") is None, "no vote opened behind the lock"
    at.text_input(key="instructor-access-input").input("staff-room-7")
    at.button(key="instructor-access-submit").click().run(timeout=RUN_TIMEOUT_S)
    assert not at.exception
    assert [b for b in at.button if b.key == "presenter-next"] and query(at, "code")


def test_votes_reach_the_tally_and_the_reveal_judges_them_by_the_run(open_page):
    at = presenter(open_page, 3)
    code = query(at, "code")
    ada, bob, cy_id = (access_rules.make_learner_id(name) for name in ("ada", "bob", "cy"))
    learner_votes(open_page, code, ada, "foreign")
    bob_page = learner_votes(open_page, code, bob, "intact")
    learner_votes(open_page, code, cy_id, "intact")
    cy = learner_votes(open_page, code, cy_id, "garbage")  # cy changes her mind: one vote each
    assert "ada" not in texts(bob_page), "a learner never sees another's name"
    at.run(timeout=RUN_TIMEOUT_S)
    counts = histogram_counts(at)
    assert sum(counts.values()) == 3
    assert sorted(counts.values()) == [0, 1, 1, 1]

    go(at, "presenter-next")
    go(at, "presenter-run")
    assert votes.store().poll(code).state == votes.CLOSED, "the run closes the vote"
    with pytest.raises(votes.PollClosed):
        votes.store().vote(code, "late", "intact")
    sides = at.session_state["presenter.runs"][f"{DEMO}:{code}"]
    assert set(sides) == {"before", "after"}
    before, after = sides["before"].result, sides["after"].result
    assert before.scenario.texts == after.scenario.texts and before.scenario.seed == after.scenario.seed
    assert sides["before"].model != sides["after"].model
    assert len(at.get("plotly_chart")) == 3, "two timelines and the replay"

    go(at, "presenter-next")
    assert "presenter-reveal" in [b.key for b in at.button], "nothing is revealed before the click"
    go(at, "presenter-reveal")
    # The right answers are the engine's judgement of the asked side's run (the before side),
    # the shares those of the votes cast; the page must show exactly that, in its words.
    demo = demos.get(DEMO)
    assert demo.asks == "before"
    cast = {ada: "foreign", bob: "intact", cy_id: "garbage"}
    tally = {option: sum(v == option for v in cast.values()) for option in demo.options}
    answer = demos.reveal(demo, before.sessions, tally)
    en = words("en")
    metrics = {m.label: m.value for m in at.metric}
    assert str(metrics[en("Votes")]) == "3"
    assert metrics[en("Right")] == en.render(N_("{share:percent}"), share=answer.share_right)
    assert metrics[en("Right outcome, any cause")] == en.render(N_("{share:percent}"), share=answer.share_outcome_right)
    assert votes.store().poll(code).state == votes.REVEALED
    assert set(votes.store().poll(code).right) == set(answer.right)

    cy.run(timeout=RUN_TIMEOUT_S)  # the learner's page follows the reveal
    verdict = en("Your prediction held.") if "garbage" in answer.right else en("Your prediction did not hold.")
    assert verdict in texts(cy)


def test_a_learner_page_with_a_bad_code_says_so(open_page):
    at = open_page("demo.py", code="QQQQ", learner="ada")
    assert not at.exception
    assert "No class vote has the code" in texts(at)


@pytest.mark.parametrize("step", [1, 2, 3, 4, 5])
def test_every_step_reads_in_chinese(open_page, step):
    at = presenter(open_page, step, lang="zh")
    found = untranslated(at)
    assert not found, "\n".join(f"{w}: {t!r} -> {r}" for w, t, r in found[:30])
    assert has_cjk(at.title[0].value)


def test_a_run_and_reveal_read_in_chinese(open_page):
    at = presenter(open_page, 3, lang="zh")
    code = query(at, "code")
    zh_ada = access_rules.make_learner_id("zh-ada")
    learner_votes(open_page, code, zh_ada, "foreign")
    go(at, "presenter-next")
    go(at, "presenter-run")
    assert not untranslated(at), untranslated(at)[:20]
    go(at, "presenter-next")
    go(at, "presenter-reveal")
    found = untranslated(at)
    assert not found, "\n".join(f"{w}: {t!r} -> {r}" for w, t, r in found[:30])
    voter = open_page("demo.py", code=code, learner=zh_ada, lang="zh")
    assert not untranslated(voter) and has_cjk(voter.title[0].value)


def test_the_presenter_shows_the_class_answers_to_a_quiz_item(open_page):
    from app.quiz.bank import load_bank
    from app.quiz.store import ProgressStore

    bank = load_bank()
    item = next(i for i in bank if i.type == "single" and len(i.options) >= 3)
    right = next(iter(item.correct_keys))
    wrong = next(o.key for o in item.options if not o.correct)
    store = ProgressStore()
    for name, key in (("pr-ada", right), ("pr-bob", wrong), ("pr-cy", wrong)):
        store.record_answer(store.start_attempt(access_rules.make_learner_id(name), seed=1), item, key)

    at = presenter(open_page, 1)
    assert not at.get("plotly_chart"), "nothing drawn before an item is chosen"
    at.selectbox(key="presenter-quiz-item").set_value(item.id).run(timeout=RUN_TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    counts = histogram_counts(at, "presenter-quiz-item-chart")
    letters = "ABCDEFGH"
    expected = {o.key: 0 for o in item.options} | {right: 1, wrong: 2}
    assert list(counts.values()) == [expected[o.key] for o in item.options]
    assert all(label.startswith(f"{letters[k]}. ") for k, label in enumerate(counts))
    said = texts(at)
    assert f"**{letters[[o.key for o in item.options].index(wrong)]}.** {item.option(wrong).text}: 2" in said
    assert "Answered: 3." in said

    zh = presenter(open_page, 1, lang="zh")
    zh.selectbox(key="presenter-quiz-item").set_value(item.id).run(timeout=RUN_TIMEOUT_S)
    assert not zh.exception, [e.value for e in zh.exception]
    assert sum(histogram_counts(zh, "presenter-quiz-item-chart").values()) == 3
    found = untranslated(zh)
    assert not found, "\n".join(f"{w}: {t!r} -> {r}" for w, t, r in found[:30])


GEN = "static_inflight"  # the generation family's demo: static against in-flight batching


@pytest.mark.parametrize("lang", languages())
def test_the_generation_demo_runs_both_modes_and_reveals_by_their_numbers(open_page, lang):
    from app.generation import demo as gen_demo
    from app.generation import words as gw
    from app.generation.setup import PRESETS

    said = words(lang)

    def reads_in_its_language(page):
        found = untranslated(page) if lang == "zh" else []
        assert not found, "\n".join(f"{w}: {t!r} -> {r}" for w, t, r in found[:30])

    at = presenter(open_page, 1, demo=GEN, lang=lang)
    reads_in_its_language(at)
    html = "\n".join(m.value for m in at.markdown)
    assert '<div class="removed">- <code>dynamic_batching {</code>' in html.replace("−", "-")
    assert "<code>sequence_batching {</code>" in html and "iterative_sequence: true" in html
    assert said(gw.DEMO_TITLES[GEN]) in texts(at)

    go(at, "presenter-next")
    reads_in_its_language(at)
    assert said(gw.QUESTIONS["compare"]) in texts(at)
    assert all(said(a) in texts(at) for a in gw.ANSWERS["compare"].values())

    go(at, "presenter-next")
    code = query(at, "code")
    assert code and votes.store().poll(code).demo == GEN
    assert sum(histogram_counts(at).values()) == 0
    assert list(histogram_counts(at)) == [said(gw.ANSWERS["compare"][o]) for o in gen_demo.OPTIONS]
    ada, bob = (access_rules.make_learner_id(f"gen-{lang}-{name}") for name in ("ada", "bob"))
    ada_page = learner_votes(open_page_in(open_page, lang), code, ada, "inflight")
    learner_votes(open_page_in(open_page, lang), code, bob, "static")
    assert said(gw.QUESTIONS["compare"]) in texts(ada_page)
    assert ada_page.radio(key="demo-choice").options == [said(gw.ANSWERS["compare"][o]) for o in gen_demo.OPTIONS]
    at.run(timeout=RUN_TIMEOUT_S)
    assert histogram_counts(at)[said(gw.ANSWERS["compare"]["inflight"])] == 1

    go(at, "presenter-next")
    go(at, "presenter-run")
    assert votes.store().poll(code).state == votes.CLOSED, "the run closes the vote"
    done = at.session_state["presenter.runs"][f"{GEN}:{code}"]
    assert [done[s].mode for s in gen_demo.SIDES] == ["static", "inflight"]
    wanted = PRESETS["long_and_short"]
    before, after = done["before"].requests, done["after"].requests
    assert list(before["tag"]) == list(after["tag"]) == list(range(1, wanted.requests + 1))
    assert list(before["tokens"]) == list(after["tokens"]), "the same planned lengths on both sides"
    assert len(at.get("plotly_chart")) == 4, "a timeline per mode, the latencies, the step fill"
    reads_in_its_language(at)

    go(at, "presenter-next")
    assert "presenter-reveal" in [b.key for b in at.button], "nothing is revealed before the click"
    go(at, "presenter-reveal")
    answer = gen_demo.reveal(gen_demo.DEMOS[GEN], done, {"inflight": 1, "static": 1})
    assert answer.right == (answer.seen,) and votes.store().poll(code).right == answer.right
    assert said.render(gw.DEMO_SEEN, seen=said(gw.ANSWERS["compare"][answer.seen])) in texts(at)
    metrics = {m.label: m.value for m in at.metric}
    assert str(metrics[said("Votes")]) == "2"
    assert metrics[said("Right")] == said.render(N_("{share:percent}"), share=0.5 if answer.seen != "same" else 0.0)

    ada_page.run(timeout=RUN_TIMEOUT_S)  # the learner's page follows the reveal, in the learner's language
    held = "inflight" in answer.right
    assert (said("Your prediction held.") if held else said("Your prediction did not hold.")) in texts(ada_page)
    for page in (at, ada_page):
        reads_in_its_language(page)
        assert has_cjk(page.title[0].value) == (lang == "zh")


def open_page_in(open_page, lang: str):
    """open_page with the learner's language on every page it opens."""
    return lambda page, **query: open_page(page, lang=lang, **query)
