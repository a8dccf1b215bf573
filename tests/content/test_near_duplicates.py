"""Each question tests one distinct fact: no near-duplicates across the bank and the lesson checks.

Two questions are compared by the content words of the prompt plus the keyed
answer (the correct options, or a numeric item's explanation), as token Jaccard:
|shared words| / |all words|. Prompts alone are a poor signal, since many are the
generic "Which statements ... are true?"; the keyed answer says which fact is tested.

Threshold 0.4, chosen from measurement: before the rewrite the closest pairs were a
bank item and a lesson check asking the same fact (ctl-implicit-backends and the
lesson 4 check on implicit state, 0.41; roll-state-leak-response and the lesson 7
check, 0.34), while distinct items that share a topic stay below 0.3. A check that
repeats a bank item word for word scores about 1.0.
`.venv/bin/python -m tests.content.test_near_duplicates` prints the closest pairs.
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from app.content import yaml_text
from app.content.lessons import Lesson, load_lessons

REPO = Path(__file__).resolve().parents[2]
THRESHOLD = 0.4
# Function words carry no fact; dropping them keeps short questions from matching on grammar.
STOPWORDS = frozenset(
    [
        "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "is", "are", "be", "by", "with", "it", "its", "this", "that", "what", "which", "how",
        "does", "do", "at", "as", "from", "when", "each", "one", "will", "can", "may", "if", "not", "no", "so", "than", "then", "there", "these", "those",
        "into", "their", "they", "them", "was", "were", "has", "have", "had", "but", "all", "any"
    ]
)


def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"[a-z0-9_]+", text.lower()) if w not in STOPWORDS)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def bank_questions(raw_items: Iterable[dict[str, Any]]) -> dict[str, str]:
    """id -> prompt plus what the key says."""
    out = {}
    for item in raw_items:
        if item["type"] == "numeric":
            key = f"{item['answer']} {item.get('unit', '')} {item['explain']}"
        else:
            key = " ".join(o["text"] for o in item["options"] if o["correct"])
        out[item["id"]] = f"{item['prompt']} {key}"
    return out


def check_questions(lessons: Iterable[Lesson]) -> dict[str, str]:
    return {
        f"{lesson.id}/check-{n}": f"{check.question} {check.options[check.answer]}"
        for lesson in lessons
        for n, check in enumerate(lesson.self_checks)
    }


def all_questions() -> dict[str, str]:
    raw = yaml_text.parse((REPO / "quiz" / "bank.yaml").read_text(encoding="utf-8"))["items"]
    return {**bank_questions(raw), **check_questions(load_lessons(REPO / "lessons"))}


def closest_pairs(questions: dict[str, str]) -> list[tuple[float, str, str]]:
    words = {qid: content_words(text) for qid, text in questions.items()}
    pairs = [(jaccard(words[a], words[b]), a, b) for a, b in itertools.combinations(words, 2)]
    return sorted(pairs, reverse=True)


def test_no_two_questions_test_the_same_fact():
    pairs = closest_pairs(all_questions())
    over = [f"{score:.2f}  {a}  ~  {b}" for score, a, b in pairs if score >= THRESHOLD]
    assert not over, "near-duplicate questions (reword one, or drop it):\n" + "\n".join(over)


def test_the_measure_catches_a_copied_check():
    # A lesson check that repeats a bank prompt and key word for word must be flagged.
    questions = all_questions()
    some_id = next(qid for qid in questions if "/" not in qid)
    copied = {some_id: questions[some_id], "lesson/check-x": questions[some_id]}
    (score, _, _), = closest_pairs(copied)
    assert score >= THRESHOLD


if __name__ == "__main__":
    for score, a, b in closest_pairs(all_questions())[:15]:
        print(f"{score:.2f}  {a}  ~  {b}")
