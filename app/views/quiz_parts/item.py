"""The question card: prompt, the answer widget for the item's type, submit, feedback.

Submitting goes through a form callback, so the grade is stored before the rerun
that draws the card: the widgets and the button are already disabled when the
learner sees the feedback, and a second click only gets the first grade back.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from app.content.lessons import Lesson
from app.i18n import N_
from app.quiz.attempt import QuizAttempt, chosen_keys
from app.quiz.bank import Item, Option
from app.quiz.links import lesson_ref
from app.ui import language, quiz_feedback
from app.ui.language import _, t
from app.ui.lesson_link import show_lesson_link
from app.views.quiz_parts import verify as quiz_verify

FLASH = "quiz-flash"  # (item id, message) from the last submit callback


def widget_key(quiz: QuizAttempt, item: Item, suffix: str = "") -> str:
    # The attempt id is part of the key, so a new attempt starts with empty widgets.
    return f"quiz-{quiz.id}-{item.id}{suffix}"


# An answer is what its item type's widgets hold in st.session_state (untyped), as the store keeps it (AnswerRecord).
def _read_answer(quiz: QuizAttempt, item: Item, options: list[Option]) -> tuple[Any, str | None]:
    """The answer in the widgets, or (None, why it cannot be submitted yet)."""
    state = st.session_state
    if item.type in ("single", "predict"):
        value = state.get(widget_key(quiz, item))
        return (value, None) if value is not None else (None, _("Choose an option first."))
    if item.type == "multiple":
        picked = [o.key for o in options if state.get(widget_key(quiz, item, f"-{o.key}"))]
        return (picked, None) if picked else (None, _("Tick at least one box first."))
    value = state.get(widget_key(quiz, item))
    return (value, None) if value is not None else (None, _("Enter a number first."))


def _submit(quiz: QuizAttempt, item: Item, options: list[Option]) -> None:
    answer, problem = _read_answer(quiz, item, options)
    if problem:
        st.session_state[FLASH] = (item.id, problem)
        return
    result = quiz.submit(item, answer)
    if result.closed:
        st.session_state[FLASH] = (item.id, _("Not recorded: this attempt is closed (finished, or its time limit ran out)."))


def _answer_widgets(quiz: QuizAttempt, item: Item, options: list[Option], previous: Any, locked: bool) -> None:
    key = widget_key(quiz, item)
    if item.type in ("single", "predict"):
        keys = [o.key for o in options]
        label = _("Your prediction") if item.type == "predict" else _("Your answer")
        language.choice(st.radio, label, keys, index=keys.index(previous) if previous in keys else None,
                        format_func=lambda k: item.option(k).text, key=key, disabled=locked)
    elif item.type == "multiple":
        st.markdown(_("Tick every option that applies."))
        picked = chosen_keys(previous)
        for opt in options:
            st.checkbox(opt.text, value=opt.key in picked, key=widget_key(quiz, item, f"-{opt.key}"), disabled=locked)
    else:
        label = t().render(N_("Your answer ({unit:text})"), unit=item.unit) if item.unit else _("Your answer")
        st.number_input(label, value=float(previous) if previous is not None else None,
                        step=1.0, format="%g", key=key, disabled=locked, placeholder=_("a number"))


def show_item(quiz: QuizAttempt, item: Item, lessons: list[Lesson]) -> None:
    options = quiz.options(item.id)
    record = quiz.answer(item.id)
    locked = record is not None or not quiz.accepting()
    st.subheader(t().render(N_("Question {number:count} of {total:count}"), number=quiz.number(item.id),
                            total=len(quiz.order)))
    st.caption(t().render(N_("Topic: {topic:text} · {kind:text}"), topic=quiz_feedback.topic_label(item.topic),
                          kind=quiz_feedback.type_label(item)))
    st.markdown(item.prompt)
    with st.form(widget_key(quiz, item, "-form"), border=False):
        _answer_widgets(quiz, item, options, record.answer if record else None, locked)
        st.form_submit_button(
            _("Answered") if record else _("Submit answer"), type="primary", disabled=locked,
            on_click=_submit, args=(quiz, item, options), key=widget_key(quiz, item, "-submit"),
        )
    flash = st.session_state.pop(FLASH, None)
    if flash and flash[0] == item.id:
        st.warning(flash[1])
    if record is not None:
        quiz_feedback.show_explanations(item, options, record)
        if item.type == "predict":
            quiz_verify.show_verify(quiz, item, record)
    elif not quiz.accepting():
        st.info(_("This attempt is closed, so this question can no longer be answered."))
    show_lesson_link(lesson_ref(item.lesson, lessons))
