"""The quiz in every language: the same items and options, every word translated, grading
unchanged, and no option findable by its length in the translation either."""
from __future__ import annotations

import pytest

from app.content.lessons import lessons_dir, load_lessons
from app.i18n import SOURCE_LANGUAGE, languages
from app.quiz.bank import load_bank
from app.quiz.grading import grade
from app.quiz.translation import translate
from tests.content.test_guessing import MARGIN, items_from_lessons, play_group, table
from tests.i18n.text_checks import english_label, english_runs, kept_english

ENGLISH = load_bank()
TRANSLATED = [lang for lang in languages() if lang != SOURCE_LANGUAGE]
LENGTH_STRATEGIES = ("longest option", "shortest option", "anything but the shortest", "anything but the longest",
                     "options above median length", "options below median length")


@pytest.fixture(scope="module", params=TRANSLATED)
def bank(request):
    return translate(ENGLISH, request.param)  # BankError lists every item whose shape differs


def test_same_items_options_and_keys(bank):
    assert [i.id for i in bank] == [i.id for i in ENGLISH]
    for en, other in zip(ENGLISH, bank, strict=True):
        assert (other.type, other.answer, other.tolerance, other.lesson, other.source, other.scenario) == (
            en.type, en.answer, en.tolerance, en.lesson, en.source, en.scenario)
        assert [(o.key, o.correct, o.outcome) for o in other.options] == [(o.key, o.correct, o.outcome) for o in en.options]


def _texts(item) -> list[str]:
    return [t for t in (item.prompt, item.explain, item.unit, *[x for o in item.options for x in (o.text, o.explain)]) if t]


def test_every_word_is_translated(bank):
    """No English prose left, and no text that is still its English item's, whole or a phrase of it (in any script)."""
    texts = [(i.id, t) for i in bank for t in _texts(i)]
    english = [(item, t[:70], english_runs(t)) for item, t in texts if english_runs(t)]
    assert not english, english[:10]
    originals = {i.id: _texts(i) for i in ENGLISH}
    bare = [(item, t[:70]) for item, t in texts
            if (t in originals[item] and english_label(t)) or any(kept_english(t, o) for o in originals[item])]
    assert not bare, bare[:10]


def test_the_same_answers_score_the_same_in_every_language(bank):
    """Grading reads option keys only: each item's every answer scores alike in both languages."""
    for en, other in zip(ENGLISH, bank, strict=True):
        if en.type == "numeric":
            answers = [en.answer, en.answer + 2 * (en.tolerance or 1) + 1]
        else:
            keys = [o.key for o in en.options]
            answers = [[k] for k in keys] + [keys] if en.type == "multiple" else keys
        for answer in answers:
            mine, theirs = grade(other, answer), grade(en, answer)
            assert (mine.score, mine.correct) == (theirs.score, theirs.correct), (en.id, answer)


@pytest.mark.parametrize("lang", TRANSLATED)
def test_no_option_is_findable_by_its_length_in_translation(lang):
    from tests.content.test_guessing import items_from_raw_bank

    bank = translate(ENGLISH, lang)
    raw = [{"id": i.id, "type": i.type, "options": [{"text": o.text, "correct": o.correct} for o in i.options]}
           for i in bank if i.type != "numeric"]
    items = items_from_raw_bank(raw)
    checks = items_from_lessons(load_lessons(lessons_dir(lang)))
    rows = (play_group("bank single", [i for i in items if i.type == "single"])
            + play_group("bank multiple", [i for i in items if i.type == "multiple"])
            + play_group("lesson checks", checks))
    over = [r for r in rows if r.strategy in LENGTH_STRATEGIES and r.margin > MARGIN]
    assert not over, "\n" + table(over, f"{lang}: option length gives the answer away")
