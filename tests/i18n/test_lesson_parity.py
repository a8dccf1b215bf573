"""Every lesson exists in every language with the same shape: ids, anchors, live element,
checks (count, options, keyed answer, source) and code blocks, and its prose is translated."""
from __future__ import annotations

import re

import pytest

from app.content.lessons import lessons_dir, load_lessons
from app.i18n import SOURCE_LANGUAGE, languages
from tests.i18n.text_checks import english_runs, kept_english

ENGLISH = load_lessons()
TRANSLATED = [lang for lang in languages() if lang != SOURCE_LANGUAGE]
_FENCED = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def _pairs():
    return [pytest.param(lang, i, id=f"{lang}-{lesson.id}") for lang in TRANSLATED for i, lesson in enumerate(ENGLISH)]


@pytest.fixture(scope="module", params=TRANSLATED)
def translated(request):
    return {lesson.id: lesson for lesson in load_lessons(lessons_dir(request.param))}


@pytest.mark.parametrize("lang", TRANSLATED)
def test_the_same_lessons_in_the_same_files(lang):
    theirs = load_lessons(lessons_dir(lang))
    assert [(lesson.id, lesson.path.name) for lesson in theirs] == [(lesson.id, lesson.path.name) for lesson in ENGLISH]


@pytest.mark.parametrize("lang, index", _pairs())
def test_same_structure(lang, index):
    en = ENGLISH[index]
    other = {lesson.id: lesson for lesson in load_lessons(lessons_dir(lang))}[en.id]
    assert (other.live, other.next) == (en.live, en.next)
    assert other.anchors == en.anchors, "headings in the same order, each ending in the English anchor {#...}"
    assert [(len(c.options), c.answer, c.source) for c in other.self_checks] == [(len(c.options), c.answer, c.source) for c in en.self_checks]
    assert _FENCED.findall(other.body) == _FENCED.findall(en.body) and [
        m.group(0) for m in _FENCED.finditer(other.body)] == [m.group(0) for m in _FENCED.finditer(en.body)], \
        "code blocks are not translated: byte-identical, same order"


def _texts(lesson) -> list[str]:
    texts = [lesson.title, lesson.summary] + [t for c in lesson.self_checks for t in (c.question, *c.options, c.explain)]
    return texts + [p for p in _FENCED.sub("", lesson.body).split("\n\n") if p.strip()]


@pytest.mark.parametrize("lang, index", _pairs())
def test_prose_is_translated(lang, index):
    """No English prose left, and no text (a title, an option, a paragraph) that is still its English,
    whole or a phrase of it, in whatever script the language writes."""
    en = ENGLISH[index]
    other = {lesson.id: lesson for lesson in load_lessons(lessons_dir(lang))}[en.id]
    texts, originals = _texts(other), _texts(en)
    english = [(t[:80], english_runs(t)) for t in texts if english_runs(t)]
    assert not english, english[:10]
    untranslated = [t[:80] for t in texts if t in originals or any(kept_english(t, o) for o in originals)]
    assert not untranslated, untranslated[:10]

