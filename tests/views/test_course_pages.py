"""Home and the seven lesson pages render through app/main.py against the session's real server."""
from __future__ import annotations

import pytest

from app.content.lessons import load_lessons
from tests.views.conftest import RUN_TIMEOUT_S

LESSONS = load_lessons()


def shown(at) -> str:
    return "\n".join(e.value for kind in ("title", "markdown", "success", "warning", "error", "info", "caption")
                     for e in getattr(at, kind))


def test_home_tells_the_path_and_the_live_server(open_page):
    at = open_page("home.py")
    assert not at.exception and not at.error
    text = shown(at)
    assert "After this course you will be able to" in text and "The path" in text
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Server"] == "running" and metrics["Triton version"].startswith("2.")
    assert metrics["Model instances run on"] in ("CPU", "GPU")
    models = at.dataframe[0].value
    assert {"asr_dynamic", "asr_sequence_direct", "asr_sequence_oldest", "sentiment"} <= set(models["model"])
    assert set(models.loc[models["model"] == "asr_sequence_oldest", "scheduler"]) == {"sequence/oldest"}


@pytest.mark.parametrize("number", range(1, len(LESSONS) + 1))
def test_lesson_page_renders_text_live_element_check_and_links(open_page, number):
    lesson = LESSONS[number - 1]
    at = open_page(f"lesson_{number:02d}.py")
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert at.title[0].value == lesson.title
    text = shown(at)
    assert "Live on the server" in text
    assert "Check your understanding" in text
    assert len([r for r in at.radio if r.key and r.key.startswith(f"check:{lesson.id}:")]) == len(lesson.checks)


def test_a_check_is_graded_once_with_its_explanation(open_page):
    lesson = LESSONS[0]
    at = open_page("lesson_01.py")
    check = lesson.checks[0]
    wrong = next(i for i in range(len(check.options)) if i != check.answer)
    at.radio(key=f"check:{lesson.id}:0:choice").set_value(wrong).run(timeout=RUN_TIMEOUT_S)
    at.button(key=f"check:{lesson.id}:0:submit").click().run(timeout=RUN_TIMEOUT_S)
    assert any(check.explain in e.value and "Not quite" in e.value for e in at.error)
    radio = at.radio(key=f"check:{lesson.id}:0:choice")
    assert radio.disabled and radio.value == wrong
    assert not [b for b in at.button if b.key == f"check:{lesson.id}:0:submit"], "graded once: no second submit"

    second = lesson.checks[1]
    at.radio(key=f"check:{lesson.id}:1:choice").set_value(second.answer).run(timeout=RUN_TIMEOUT_S)
    at.button(key=f"check:{lesson.id}:1:submit").click().run(timeout=RUN_TIMEOUT_S)
    assert any(second.explain in s.value and s.value.startswith("Correct") for s in at.success)


def test_section_links_land_on_the_lesson_heading(open_page):
    lesson = LESSONS[4]
    anchor = lesson.anchors[2]
    at = open_page("lesson_05.py", section=anchor)
    assert not at.exception
    assert any(f"(#{anchor})" in i.value for i in at.info)
    anchors = [h.proto.anchor for h in at.header]
    assert list(lesson.anchors) == [a for a in anchors if a in lesson.anchors]
