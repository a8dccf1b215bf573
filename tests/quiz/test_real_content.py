"""The shipped lessons and quiz bank pass the same validation as the fixtures.

Content is written by hand; this is the gate that catches a broken link or a
single-choice item with two right answers before a learner does.
"""
from __future__ import annotations

import pytest

from app.content.lessons import load_lessons
from app.lab.paths import LESSONS_DIR, QUIZ_DIR
from app.quiz.bank import load_bank

BANK = QUIZ_DIR / "bank.yaml"


@pytest.mark.skipif(not any(LESSONS_DIR.glob("*.md")), reason="no lessons written yet")
def test_real_lessons_load():
    assert load_lessons()


@pytest.mark.skipif(not BANK.exists(), reason="quiz/bank.yaml not written yet")
def test_real_bank_loads_and_links_resolve():
    bank = load_bank(lessons=load_lessons())  # BankError lists every problem
    assert len(bank) > 0
