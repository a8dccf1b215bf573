"""The question card: prompt, the answer widget for the item's type, submit, feedback.

Submitting goes through a form callback, so the grade is stored before the rerun
that draws the card: the widgets and the button are already disabled when the
learner sees the feedback, and a second click only gets the first grade back.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from app.content.lessons import Lesson
from app.quiz.bank import Item, Option
from app.quiz.links import lesson_ref
from app.quiz.session import QuizSession, chosen_keys
from app.ui import quiz_feedback, quiz_verify
from app.ui.lesson_link import show_lesson_link

FLASH = "quiz-flash"  # (item id, message) from the last submit callback


def widget_key(quiz: QuizSession, item: Item, suffix: str = "") -> str:
    # The attempt id is part of the key, so a new attempt starts with empty widgets.
    return f"quiz-{quiz.id}-{item.id}{suffix}"


def _read_answer(quiz: QuizSession, item: Item, options: list[Option]) -> tuple[Any, str | None]:
    """The answer in the widgets, or (None, why it cannot be submitted yet)."""
    state = st.session_state
    if item.type in ("single", "predict"):
        value = state.get(widget_key(quiz, item))
        return (value, None) if value is not None else (None, "Choose an option first.")
    if item.type == "multiple":
        picked = [o.key for o in options if state.get(widget_key(quiz, item, f"-{o.key}"))]
        return (picked, None) if picked else (None, "Tick at least one box first.")
    value = state.get(widget_key(quiz, item))
    return (value, None) if value is not None else (None, "Enter a number first.")


def _submit(quiz: QuizSession, item: Item, options: list[Option]) -> None:
    answer, problem = _read_answer(quiz, item, options)
    if problem:
        st.session_state[FLASH] = (item.id, problem)
        return
    result = quiz.submit(item, answer)
    if result.closed:
        st.session_state[FLASH] = (item.id, f"Not recorded: {result.closed}.")


def _answer_widgets(quiz: QuizSession, item: Item, options: list[Option], previous: Any, locked: bool) -> None:
    key = widget_key(quiz, item)
    if item.type in ("single", "predict"):
        keys = [o.key for o in options]
        label = "Your prediction" if item.type == "predict" else "Your answer"
        st.radio(label, keys, index=keys.index(previous) if previous in keys else None,
                 format_func=lambda k: item.option(k).text, key=key, disabled=locked)
    elif item.type == "multiple":
        st.markdown("Tick every option that applies.")
        picked = chosen_keys(previous)
        for opt in options:
            st.checkbox(opt.text, value=opt.key in picked, key=widget_key(quiz, item, f"-{opt.key}"), disabled=locked)
    else:
        unit = f" ({item.unit})" if item.unit else ""
        st.number_input(f"Your answer{unit}", value=float(previous) if previous is not None else None,
                        step=1.0, format="%g", key=key, disabled=locked, placeholder="a number")


def show_item(quiz: QuizSession, item: Item, lessons: list[Lesson]) -> None:
    options = quiz.options(item.id)
    record = quiz.answer(item.id)
    locked = record is not None or not quiz.accepting()
    st.subheader(f"Question {quiz.number(item.id)} of {len(quiz.order)}")
    st.caption(f"Topic: {item.topic} · {quiz_feedback.TYPE_LABELS[item.type]}")
    st.markdown(item.prompt)
    with st.form(widget_key(quiz, item, "-form"), border=False):
        _answer_widgets(quiz, item, options, record.answer if record else None, locked)
        st.form_submit_button(
            "Answered" if record else "Submit answer", type="primary", disabled=locked,
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
        st.info("This attempt is closed, so this question can no longer be answered.")
    show_lesson_link(lesson_ref(item.lesson, lessons))
