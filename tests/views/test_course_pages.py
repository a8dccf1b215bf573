"""Home and every lesson page (one per lesson file) render through app/main.py against the session's real server."""
from __future__ import annotations

import pytest

from app.content.glossary import load_glossary
from app.content.lessons import load_lessons, load_translated
from app.registry.live import LIVE
from app.ui import course
from tests.i18n.text_checks import has_cjk
from tests.views.conftest import RUN_TIMEOUT_S

LESSONS = load_lessons()


def shown(at) -> str:
    return "\n".join(e.value for kind in ("title", "markdown", "success", "warning", "error", "info", "caption")
                     for e in getattr(at, kind))


def test_home_tells_the_path_and_the_live_server(open_page):
    at = open_page("home.py")
    assert not at.exception and not at.error
    path = [link.proto.page for link in at.get("page_link") if link.proto.label[:1].isdigit()]
    assert path == [f"lesson_{number:02d}" for number in range(1, len(LESSONS) + 1)], "each lesson's link, in order"
    text = shown(at)
    assert "After this course you will be able to" in text and "The path" in text
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Server"] == "running" and metrics["Triton version"].startswith("2.")
    assert metrics["Model instances run on"] in ("CPU", "GPU")
    models = next(d.value for d in at.dataframe if "model" in d.value.columns)
    assert {"asr_dynamic", "asr_sequence_direct", "asr_sequence_oldest", "sentiment"} <= set(models["model"])
    assert set(models.loc[models["model"] == "asr_sequence_oldest", "scheduler"]) == {"sequence/oldest"}


@pytest.mark.parametrize("number", range(1, len(LESSONS) + 1))
def test_lesson_page_renders_text_live_element_check_and_links(open_page, number):
    lesson = LESSONS[number - 1]
    at = open_page(course.lesson_url(number))
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert at.title[0].value == lesson.title
    text = shown(at)
    assert lesson.live in LIVE, f"{lesson.id} names a live element the app does not have: {lesson.live}"
    assert "Live on the server" in text
    assert "Check your understanding" in text
    assert len([r for r in at.radio if r.key and r.key.startswith(f"check:{lesson.id}:")]) == len(lesson.self_checks)
    # Onward: each next lesson's link goes to that lesson's page, at the address lesson pages always had.
    numbers = {other.id: place for place, other in enumerate(LESSONS, start=1)}
    onward = [link.proto.page for link in at.get("page_link") if link.proto.label.startswith("Next: ")]
    assert onward == [f"lesson_{numbers[target]:02d}" for target in lesson.next]


def test_a_check_is_graded_once_with_its_explanation(open_page):
    lesson = LESSONS[0]
    at = open_page("lesson_01")
    check = lesson.self_checks[0]
    wrong = next(i for i in range(len(check.options)) if i != check.answer)
    at.radio(key=f"check:{lesson.id}:0:choice").set_value(wrong).run(timeout=RUN_TIMEOUT_S)
    at.button(key=f"check:{lesson.id}:0:submit").click().run(timeout=RUN_TIMEOUT_S)
    assert any(check.explain in e.value and "Not quite" in e.value for e in at.error)
    radio = at.radio(key=f"check:{lesson.id}:0:choice")
    assert radio.disabled and radio.value == wrong
    assert not [b for b in at.button if b.key == f"check:{lesson.id}:0:submit"], "graded once: no second submit"

    second = lesson.self_checks[1]
    at.radio(key=f"check:{lesson.id}:1:choice").set_value(second.answer).run(timeout=RUN_TIMEOUT_S)
    at.button(key=f"check:{lesson.id}:1:submit").click().run(timeout=RUN_TIMEOUT_S)
    assert any(second.explain in s.value and s.value.startswith("Correct") for s in at.success)


def test_section_links_land_on_the_lesson_heading(open_page):
    lesson = LESSONS[4]
    anchor = lesson.anchors[2]
    at = open_page("lesson_05", section=anchor)
    assert not at.exception
    assert any(f"(#{anchor})" in i.value for i in at.info)
    anchors = [h.proto.anchor for h in at.header]
    assert list(lesson.anchors) == [a for a in anchors if a in lesson.anchors]


def test_home_in_chinese_has_the_translated_title_path_and_glossary(open_page):
    at = open_page("home.py", lang="zh")
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Triton Batching Lab"  # the product's name stays
    text = shown(at)
    assert "学完本课程后，你将能够" in text and "学习路径" in text
    assert at.query_params["lang"] == "zh" and at.sidebar.selectbox(key="language").value == "zh"
    zh = load_translated("zh")
    links = [link.proto.label for link in at.get("page_link")]
    assert f"1. {zh.lessons[0].title}" in links  # the path names the lessons of the learner's language
    glossary = next(d.value for d in at.dataframe if "术语" in d.value.columns)
    terms = load_glossary()
    assert list(glossary["术语"]) == [term.words["zh"] for term in terms]
    assert list(glossary["英文"]) == [term.en for term in terms]


def test_a_lesson_page_in_chinese_keeps_the_english_anchors(open_page):
    zh = load_translated("zh")
    assert "sequence-batcher" not in zh.fallback, "the Chinese lesson 4 ships and loads"
    lesson = zh.lessons[3]
    english = LESSONS[3]
    at = open_page("lesson_04", lang="zh", section=english.anchors[1])
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == lesson.title and has_cjk(lesson.title)
    assert any(c.value == f"课程 4 / {len(LESSONS)}" for c in at.caption)
    assert any(f"(#{english.anchors[1]})" in i.value for i in at.info)  # ?section= lands in every language
    anchors = [h.proto.anchor for h in at.header]
    assert list(english.anchors) == [a for a in anchors if a in english.anchors]
    assert "检验你的理解" in shown(at)


def test_switching_language_keeps_the_page_and_a_graded_check(open_page):
    lesson = LESSONS[0]
    at = open_page("lesson_01", section=lesson.anchors[0])
    check = lesson.self_checks[0]
    at.radio(key=f"check:{lesson.id}:0:choice").set_value(check.answer).run(timeout=RUN_TIMEOUT_S)
    at.button(key=f"check:{lesson.id}:0:submit").click().run(timeout=RUN_TIMEOUT_S)
    at.sidebar.selectbox(key="language").set_value("zh").run(timeout=RUN_TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params["lang"] == "zh" and at.query_params["section"] == lesson.anchors[0]
    zh = load_translated("zh").lessons[0]
    assert at.title[0].value == zh.title  # still lesson 1, now in Chinese
    radio = at.radio(key=f"check:{lesson.id}:0:choice")
    assert radio.disabled and radio.value == check.answer
    assert any(s.value.startswith("正确。") and zh.self_checks[0].explain in s.value for s in at.success)


def test_a_language_switch_that_reports_no_choice_keeps_the_language(open_page):
    """A browser whose switch lost its value (a widget drawn afresh) reports none; Streamlit then
    hands the page the widget's default. The default is the language in use, so the page stays in
    it: with English as the default, one such rerun turned a learner's pages back to English."""
    at = open_page("home.py", lang="zh")
    at.query_params.pop("lang")  # a page switch drops the URL's ?lang=; the session remembers it
    at.sidebar.selectbox(key="language").set_value(None).run(timeout=RUN_TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    assert at.sidebar.selectbox(key="language").value == "zh"
    assert "lang" not in at.query_params, "the switch reported no change, so its callback wrote nothing"
    assert "学习路径" in shown(at)
