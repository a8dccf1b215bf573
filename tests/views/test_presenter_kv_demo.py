"""The Presenter's paged-engine demo on the real pages (AppTest through app/main.py, the session's Triton), in
every language: the config change (the KV cache's block count), the question, the class's votes, both settings
run on the same requests and drawn in the engine mode's figures, and the reveal judged by the runs' numbers."""
from __future__ import annotations

import pytest

from app.generation.paged import demo as kv_demo
from app.generation.paged import words as pw
from app.i18n import N_, languages, words
from app.quiz import access_rules, votes
from tests.i18n.test_pages_in_chinese import untranslated
from tests.i18n.text_checks import has_cjk
from tests.views.conftest import RUN_TIMEOUT_S
from tests.views.test_presenter import go, histogram_counts, learner_votes, open_page_in, presenter, query, texts

KV = "kv_blocks"


@pytest.mark.parametrize("lang", languages())
def test_the_paged_demo_runs_both_settings_and_reveals_by_their_numbers(open_page, lang):
    said = words(lang)

    def reads_in_its_language(page):
        found = untranslated(page) if lang == "zh" else []
        assert not found, "\n".join(f"{w}: {t!r} -> {r}" for w, t, r in found[:30])

    at = presenter(open_page, 1, demo=KV, lang=lang)
    reads_in_its_language(at)
    html = "\n".join(m.value for m in at.markdown).replace("−", "-")
    assert '<div class="removed">- <code>    string_value: &quot;64&quot;</code>' in html
    assert '<div class="added">+ <code>    string_value: &quot;8&quot;</code>' in html and "num_blocks" in html
    assert said(pw.DEMO_TITLES[KV]) in texts(at)

    go(at, "presenter-next")
    reads_in_its_language(at)
    assert said(pw.QUESTIONS["compare"]) in texts(at)
    assert all(said(a) in texts(at) for a in pw.ANSWERS["compare"].values())

    go(at, "presenter-next")
    code = query(at, "code")
    assert code and votes.store().poll(code).demo == KV
    assert list(histogram_counts(at)) == [said(pw.ANSWERS["compare"][o]) for o in kv_demo.OPTIONS]
    ada, bob = (access_rules.make_learner_id(f"kv-{lang}-{name}") for name in ("ada", "bob"))
    ada_page = learner_votes(open_page_in(open_page, lang), code, ada, "a")
    learner_votes(open_page_in(open_page, lang), code, bob, "b")
    assert said(pw.QUESTIONS["compare"]) in texts(ada_page)
    assert ada_page.radio(key="demo-choice").options == [said(pw.ANSWERS["compare"][o]) for o in kv_demo.OPTIONS]

    go(at, "presenter-next")
    go(at, "presenter-run")
    assert votes.store().poll(code).state == votes.CLOSED, "the run closes the vote"
    done = at.session_state["presenter.runs"][f"{KV}:{code}"]
    assert [done[s].side for s in kv_demo.PRESENTER_SIDES] == ["a", "b"]
    assert [done[s].settings.num_blocks for s in kv_demo.PRESENTER_SIDES] == [64, 8]
    before, after = done["before"].requests, done["after"].requests
    assert list(before["prompt_tokens"]) == list(after["prompt_tokens"]), "the same planned requests on both sides"
    assert len(at.get("plotly_chart")) == 4, "a block table per setting, the queue, the latencies"
    reads_in_its_language(at)

    go(at, "presenter-next")
    assert "presenter-reveal" in [b.key for b in at.button], "nothing is revealed before the click"
    go(at, "presenter-reveal")
    answer = kv_demo.reveal(kv_demo.DEMOS[KV], done, {"a": 1, "b": 1})
    assert answer.right == (answer.seen,) and votes.store().poll(code).right == answer.right
    assert said.render(pw.DEMO_SEEN, seen=said(pw.ANSWERS["compare"][answer.seen])) in texts(at)
    metrics = {m.label: m.value for m in at.metric}
    assert str(metrics[said("Votes")]) == "2"
    assert metrics[said("Right")] == said.render(N_("{share:percent}"), share=0.5 if answer.seen != "same" else 0.0)

    ada_page.run(timeout=RUN_TIMEOUT_S)  # the learner's page follows the reveal, in the learner's language
    held = "a" in answer.right
    assert (said("Your prediction held.") if held else said("Your prediction did not hold.")) in texts(ada_page)
    for page in (at, ada_page):
        reads_in_its_language(page)
        assert has_cjk(page.title[0].value) == (lang == "zh")
