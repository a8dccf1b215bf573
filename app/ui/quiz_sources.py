"""Where the quiz and instructor pages get the bank, the lessons and the progress store.

TRITON_LAB_QUIZ_BANK points the pages at another bank file (a course's own, or a
broken one in tests). Caches are keyed by path and modification time, so an edited
bank shows on the next rerun and tests that switch folders get their own store.

The bank is validated in English (quiz/bank.yaml, its links against the English lessons),
then its words are put in the learner's language (quiz/bank.<lang>.yaml): ids, option keys
and answers are the English bank's, so grading, order and stored progress do not depend on
the language. A missing or broken translation is reported and the English words are shown.
"""
from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from app.content.lessons import ContentError, Lesson, load_lessons
from app.i18n import N_
from app.lab.database import class_database_url
from app.lab.paths import LESSONS_DIR, QUIZ_DIR
from app.quiz.bank import Bank, BankError, load_bank
from app.quiz.store import ProgressStore
from app.quiz.translation import translate, translation_path
from app.ui import course, language
from app.ui.language import t

BANK_ENV = "TRITON_LAB_QUIZ_BANK"


def bank_path() -> Path:
    return Path(os.environ.get(BANK_ENV) or QUIZ_DIR / "bank.yaml")


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0  # load_bank reports the missing file itself


@st.cache_resource(show_spinner=False)
def _lessons(folder: str, stamp: tuple[int, ...]) -> list[Lesson]:
    return load_lessons(folder)


@st.cache_resource(show_spinner=False)
def _bank(path: str, stamp: int, lessons_stamp: tuple[int, ...] | None) -> Bank:
    # Lesson links are checked only when the lessons loaded (lessons_stamp not None).
    return load_bank(path, _lessons(str(LESSONS_DIR), lessons_stamp) if lessons_stamp is not None else None)


@st.cache_resource(show_spinner=False)
def _translated(path: str, stamp: int, lessons_stamp: tuple[int, ...] | None, lang: str,
                words_path: str, words_stamp: int) -> Bank:
    return translate(_bank(path, stamp, lessons_stamp), lang, Path(words_path))


@st.cache_resource(show_spinner=False)
def _store(path: str) -> ProgressStore:
    return ProgressStore(path)


def _lessons_stamp() -> tuple[int, ...]:
    return tuple(_mtime(p) for p in sorted(LESSONS_DIR.glob("*.md")))


def lessons() -> list[Lesson]:
    """The lessons in the learner's language (for links), or [] after a warning (the quiz still
    works without its links checked)."""
    try:
        _lessons(str(LESSONS_DIR), _lessons_stamp())  # the English ones check the bank's links
        return course.lessons()
    except ContentError as err:
        st.warning(t().render(N_("The lessons could not be loaded, so lesson links are not checked: `{error:text}`"),
                              error=err))
        return []


def english_bank(lesson_list: list[Lesson]) -> Bank | None:
    """The validated bank in English, or None after showing every problem with its file, item and field."""
    path = bank_path()
    try:
        return _bank(str(path), _mtime(path), _lessons_stamp() if lesson_list else None)
    except BankError as err:
        st.error(t().render(N_("The quiz bank cannot be used. Fix these problems and reload:\n\n```\n{problems:text}\n```"),
                            problems=err))
        return None


def translated(english: Bank, lang: str, lesson_list: list[Lesson]) -> Bank:
    """english with its words in lang; English after a warning when lang's words cannot be used."""
    if lang == "en":
        return english
    path = bank_path()
    # A course's own bank (TRITON_LAB_QUIZ_BANK) is translated beside it: my-bank.zh.yaml.
    words_path = translation_path(lang) if path == QUIZ_DIR / "bank.yaml" else path.with_suffix(f".{lang}.yaml")
    try:
        return _translated(str(path), _mtime(path), _lessons_stamp() if lesson_list else None, lang,
                           str(words_path), _mtime(words_path))
    except BankError as err:
        st.warning(t().render(N_("The quiz is not available in this language yet, so it is shown in English. "
                                 "Fix these problems in the translation to use it:\n\n```\n{problems:text}\n```"),
                              problems=err))
        return english


def bank(lesson_list: list[Lesson]) -> Bank | None:
    """The validated bank in the learner's language, or None after showing why the bank cannot be used."""
    english = english_bank(lesson_list)
    if english is None:
        return None
    return translated(english, language.current(), lesson_list)


def store() -> ProgressStore:
    """The class database's store (TRITON_LAB_DATABASE_URL, the secrets' connection, else the SQLite
    file in the data folder), so replicas that share a database share the quiz's progress too."""
    return _store(class_database_url())
