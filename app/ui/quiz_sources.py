"""Where the quiz and instructor pages get the bank, the lessons and the progress store.

TRITON_LAB_QUIZ_BANK points the pages at another bank file (a course's own, or a
broken one in tests). Caches are keyed by path and modification time, so an edited
bank shows on the next rerun and tests that switch folders get their own store.
"""
from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from app.content.lessons import ContentError, Lesson, load_lessons
from app.lab.paths import LESSONS_DIR, QUIZ_DIR, data_dir
from app.quiz.bank import Bank, BankError, load_bank
from app.quiz.store import FILE_NAME, ProgressStore

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
def _store(path: str) -> ProgressStore:
    return ProgressStore(path)


def _lessons_stamp() -> tuple[int, ...]:
    return tuple(_mtime(p) for p in sorted(LESSONS_DIR.glob("*.md")))


def lessons() -> list[Lesson]:
    """The lessons, or [] after a warning (the quiz still works without its links checked)."""
    try:
        return _lessons(str(LESSONS_DIR), _lessons_stamp())
    except ContentError as err:
        st.warning(f"The lessons could not be loaded, so lesson links are not checked: {err}")
        return []


def bank(lesson_list: list[Lesson]) -> Bank | None:
    """The validated bank, or None after showing every problem with its file, item and field."""
    path = bank_path()
    try:
        return _bank(str(path), _mtime(path), _lessons_stamp() if lesson_list else None)
    except BankError as err:
        st.error(f"The quiz bank cannot be used. Fix these problems and reload:\n\n```\n{err}\n```")
        return None


def store() -> ProgressStore:
    return _store(str(data_dir() / FILE_NAME))
