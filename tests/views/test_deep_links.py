"""Bad values in a deep link: each page says which parameter it could not use, what it used
instead, and goes on with the rest of the link (issue 10)."""
from __future__ import annotations

import pytest

from app.i18n import words
from app.lab.deployment import SCHEDULERS, LabSettings
from app.lab.records import Traffic
from app.quiz.shuffle import SEED_LIMIT
from app.recogniser.engine.setup import LIMITS
from app.recogniser.view import controls as lab_controls
from app.views.lesson_parts import body as lesson_body
from app.views.quiz_parts import controls as quiz_controls
from tests.views.learners import link_id

en, zh = words("en"), words("zh")


def warnings(at) -> list[str]:
    assert not at.exception, [e.value for e in at.exception]
    return [w.value for w in at.warning]


def no_setup_error(at) -> None:
    assert not [e.value for e in at.error], "the fallback leaves nothing to fix"
    assert not at.button(key="lab.apply").disabled


def test_instances_99_falls_back_to_the_default_and_keeps_the_rest(open_page):
    at = open_page("lab.py", learner=link_id("link-i"), scheduler="oldest", instances="99", slots="3")
    used = LabSettings().instances
    expected = en.render(lab_controls.FALLBACK_WORDS["range"], name="instances", asked="99", low="1", high="4",
                         used=str(used))
    assert warnings(at) == [expected]
    assert "`instances=99`" in expected and f"`{used}`" in expected
    assert at.number_input(key="lab.instances").value == used
    assert at.query_params["instances"] == str(used)
    assert at.radio(key="lab.scheduler").value == "oldest" and at.number_input(key="lab.slots").value == 3
    no_setup_error(at)


def test_sessions_1000_falls_back_to_the_default(open_page):
    at = open_page("lab.py", learner=link_id("link-s"), sessions="1000", seed="42")
    used = Traffic().sessions
    low, high = LIMITS["sessions"]
    assert warnings(at) == [en.render(lab_controls.FALLBACK_WORDS["range"], name="sessions", asked="1000",
                                      low=str(low), high=str(high), used=str(used))]
    assert at.slider(key="lab.sessions").value == used != high, "the default, not the nearest limit"
    assert at.number_input(key="lab.seed").value == 42
    no_setup_error(at)


def test_scheduler_fifo_falls_back_to_the_default(open_page):
    at = open_page("lab.py", learner=link_id("link-f"), scheduler="fifo", instances="2")
    used = LabSettings().scheduler
    expected = en.render(lab_controls.FALLBACK_WORDS["unknown"], name="scheduler", asked="fifo",
                         choices=", ".join(f"`{s}`" for s in SCHEDULERS), used=used)
    assert warnings(at) == [expected] and "`direct`, `oldest`" in expected
    assert at.radio(key="lab.scheduler").value == used
    assert at.number_input(key="lab.instances").value == 2
    no_setup_error(at)


def test_a_good_link_says_nothing(open_page):
    at = open_page("lab.py", learner=link_id("link-ok"), scheduler="dynamic", instances="2", sessions="5")
    assert warnings(at) == []
    assert at.number_input(key="lab.instances").value == 2 and at.slider(key="lab.sessions").value == 5


def test_quiz_seed_abc_uses_another_seed_and_says_which(open_page):
    at = open_page("quiz.py", learner=link_id("link-q"), seed="abc")
    used = at.query_params["seed"]
    assert 0 <= int(used) < SEED_LIMIT
    assert warnings(at) == [en.render(quiz_controls.SEED_FALLBACK, asked="abc", last=str(SEED_LIMIT - 1),
                                      used=used)]
    assert at.text_input(key=quiz_controls.SEED).value == used
    assert at.query_params["learner"] == link_id("link-q")


def test_quiz_item_nope_opens_the_normal_quiz(open_page):
    at = open_page("quiz.py", learner=link_id("link-n"), seed="42", item="nope")
    shown = at.selectbox(key=quiz_controls.ITEM).value
    assert shown != "nope" and at.query_params["item"] == shown
    assert at.query_params["seed"] == "42", "the rest of the link still applies"
    number = at.selectbox(key=quiz_controls.ITEM).index + 1  # the question's place in this attempt
    assert warnings(at) == [en.render(quiz_controls.ITEM_FALLBACK, asked="nope", number=str(number), used=shown)]


def test_lesson_section_bogus_shows_the_lesson_from_the_top(open_page):
    at = open_page("lesson_03", section="bogus")
    assert warnings(at) == [en.render(lesson_body.SECTION_FALLBACK, asked="bogus")]
    assert not any("You were sent to the section" in i.value for i in at.info)
    assert at.header, "the whole lesson is shown"


@pytest.mark.parametrize("code, values", [
    ("unknown", {"name": "scheduler", "asked": "fifo", "choices": ", ".join(SCHEDULERS), "used": LabSettings().scheduler}),
])
def test_in_chinese_the_fallback_is_worded_in_chinese(open_page, code, values):
    at = open_page("lab.py", learner=link_id("link-zh"), lang="zh", scheduler="fifo")
    message = lab_controls.fallback_message(code, values, zh)
    assert message != lab_controls.fallback_message(code, values, en), "the template is translated"
    assert warnings(at) == [message] and "`scheduler=fifo`" in message
    assert at.radio(key="lab.scheduler").value == LabSettings().scheduler


def test_in_chinese_the_quiz_and_lesson_fallbacks_are_worded_in_chinese(open_page):
    at = open_page("quiz.py", learner=link_id("link-zq"), seed="abc", lang="zh")
    used = at.query_params["seed"]
    assert warnings(at) == [zh.render(quiz_controls.SEED_FALLBACK, asked="abc", last=str(SEED_LIMIT - 1), used=used)]
    at = open_page("lesson_03", section="bogus", lang="zh")
    message = zh.render(lesson_body.SECTION_FALLBACK, asked="bogus")
    assert message != en.render(lesson_body.SECTION_FALLBACK, asked="bogus")
    assert warnings(at) == [message]
