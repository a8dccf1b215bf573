"""The course's shape for pages: lessons in order and the page file that shows each."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from app.content.lessons import ContentError, Lesson, load_lessons

PAGES = Path(__file__).resolve().parents[1] / "views"
LAB_PAGE = "views/lab.py"
HOME_PAGE = "views/home.py"


def lesson_page(number: int) -> str:
    """Page file (relative to app/main.py) for the lesson in position `number` (1-based)."""
    return f"views/lesson_{number:02d}.py"


@st.cache_data(show_spinner=False, ttl=10)  # short: edits to lessons/ show up without a restart
def lessons() -> list[Lesson]:
    return load_lessons()


def lessons_or_error() -> list[Lesson]:
    """The lessons, or [] after telling the learner which content file is broken."""
    try:
        return lessons()
    except ContentError as err:
        st.error(f"The lessons could not be loaded: {err}")
        return []


def page_of(lesson_id: str) -> str | None:
    for number, lesson in enumerate(lessons_or_error(), start=1):
        if lesson.id == lesson_id and (PAGES / f"lesson_{number:02d}.py").exists():
            return lesson_page(number)
    return None
