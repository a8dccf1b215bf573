"""The course's shape for pages: lessons in order (in the learner's language) and the page that shows each.

A lesson's page is made from a callable by app/main.py (no file per lesson); its address is lesson_url(number),
and app/main.py hands this session's lesson pages to keep_lesson_pages on every run, so links can name them.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import streamlit as st

from app.content.lessons import ContentError, Lesson, Translated, load_translated
from app.i18n import N_
from app.ui import language
from app.ui.language import t

PAGES = Path(__file__).resolve().parents[1] / "views"
LAB_PAGE = "views/lab.py"
HOME_PAGE = "views/home.py"
LESSON_PAGES = "course-lesson-pages"  # session state: {lesson id: its st.Page in this run's navigation}


def lesson_url(number: int) -> str:
    """The address (url_path) of the lesson in position `number` (1-based): 'lesson_01' for the first."""
    return f"lesson_{number:02d}"


def keep_lesson_pages(pages: Mapping[str, st.Page]) -> None:
    """Remember this run's lesson pages ({lesson id: page}), as app/main.py gives them to st.navigation."""
    st.session_state[LESSON_PAGES] = dict(pages)


@st.cache_data(show_spinner=False, ttl=10)  # short: edits to lessons/ show up without a restart
def translated(lang: str) -> Translated:
    """lang's lessons in the English order; cached per language."""
    return load_translated(lang)


def lessons(lang: str | None = None) -> list[Lesson]:
    return translated(lang or language.current()).lessons


def lessons_or_error(notice: bool = False) -> list[Lesson]:
    """The lessons in this session's language, or [] after telling the learner which content file
    is broken. notice=True also says which lessons are shown in English for want of a translation."""
    _ = t()
    try:
        found = translated(language.current())
    except ContentError as err:
        st.error(_.render(N_("The lessons could not be loaded: `{error:text}`"), error=err))
        return []
    if notice and found.fallback:
        if len(found.fallback) == len(found.lessons):
            st.info(_(N_("The lessons are not translated into this language yet, so they are shown in English.")))
        else:
            st.info(_.render(N_("{n:count} of {total:count} lessons are not translated into this language yet "
                                "and are shown in English."), n=len(found.fallback), total=len(found.lessons)))
    if notice and found.problems:
        st.warning(_.render(N_("A translated lesson could not be used, so its English text is shown: {problems:text}"),
                            problems="; ".join(found.problems)))
    return found.lessons


def in_english(lesson_id: str) -> bool:
    """Whether this lesson is shown in English because its translation is missing or broken."""
    try:
        return lesson_id in translated(language.current()).fallback
    except ContentError:
        return False


def page_of(lesson_id: str) -> st.Page | None:
    """The page that shows this lesson, or None where no navigation lists it (a page run on its own)."""
    pages: dict[str, st.Page] = st.session_state.get(LESSON_PAGES, {})
    return pages.get(lesson_id)
