"""One word per idea in every language: where an English lesson section, check, quiz item or
UI string uses a glossary term, its translation uses that term's translation (lessons/glossary.yaml)."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from app.content.lessons import heading_parts, lessons_dir, load_lessons
from app.i18n import SOURCE_LANGUAGE, catalogs, languages
from app.quiz.bank import load_bank
from app.quiz.translation import translate
from app.views.lesson_parts.body import split_sections

GLOSSARY = Path(__file__).resolve().parents[2] / "lessons" / "glossary.yaml"
TRANSLATED = [lang for lang in languages() if lang != SOURCE_LANGUAGE]
# Code, and template fields ({who:session}): the value, not the field name, is what a reader sees.
_CODE = re.compile(r"`[^`]*`|```.*?```|\{[^{}]*\}", re.S)


@lru_cache(maxsize=1)
def terms() -> list[dict]:
    found = yaml.safe_load(GLOSSARY.read_text(encoding="utf-8"))["terms"]
    # Longest first: 'sequence batcher' is checked, and taken out, before 'sequence'.
    return sorted(found, key=lambda t: len(t["en"]), reverse=True)


def _pattern(term: str) -> re.Pattern:
    return re.compile(r"\b" + r"\s+".join(map(re.escape, term.split())) + r"(?:s|es)?\b", re.I)


def misses(english: str, other: str, lang: str) -> list[str]:
    """Terms the English uses whose translation (or kept English name) is absent from other."""
    # 'for instance' is an idiom, not a model instance.
    english, other_plain = re.sub(r"\bfor instance\b", " ", _CODE.sub(" ", english), flags=re.I), other.lower()
    missing = []
    for term in terms():
        pattern = _pattern(term["en"])
        if not pattern.search(english):
            continue
        english = pattern.sub(" ", english)
        accepted = [term[lang], *term.get("also", {}).get(lang, []), *term.get("keep", [])]
        if not any(a.lower() in other_plain for a in accepted):
            missing.append(f"{term['en']} -> {term[lang]}")
    return missing


@lru_cache(maxsize=1)
def ruled_out() -> dict[str, list[dict]]:
    return yaml.safe_load(GLOSSARY.read_text(encoding="utf-8")).get("avoid", {})


def avoided(other: str, lang: str) -> list[str]:
    """Words the glossary's `avoid` list rules out for lang that other still uses, each with the term to use."""
    return [f"{entry['word']} (use {entry['use']})" for entry in ruled_out().get(lang, []) if entry["word"] in other]


def _lesson_pairs(lang: str):
    theirs = {lesson.id: lesson for lesson in load_lessons(lessons_dir(lang))}
    for en in load_lessons():
        other = theirs[en.id]
        yield f"{en.id}: title/summary", f"{en.title} {en.summary}", f"{other.title} {other.summary}"
        for n, (a, b) in enumerate(zip(en.self_checks, other.self_checks, strict=True)):
            yield f"{en.id}: check {n}", " ".join((a.question, *a.options, a.explain)), " ".join((b.question, *b.options, b.explain))
        sections = {heading_parts(h)[1]: f"{heading_parts(h)[0]}\n{t}" for _, h, t in split_sections(other.body)}
        for _, heading, text in split_sections(en.body):
            anchor = heading_parts(heading)[1]
            yield f"{en.id}#{anchor}", f"{heading}\n{text}", sections.get(anchor, "")


def _bank_pairs(lang: str):
    for en, other in zip(load_bank(), translate(load_bank(), lang), strict=True):
        def words(item):
            return " ".join(t for t in (item.prompt, item.explain or "", *[x for o in item.options for x in (o.text, o.explain)]) if t)
        yield f"bank {en.id}", words(en), words(other)


def _catalog_pairs(lang: str):
    for message in catalogs.read(catalogs.LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po", lang):
        if message.id and message.string:
            ids = message.id if isinstance(message.id, tuple) else (message.id,)
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            yield f"catalog {ids[0][:50]!r}", " ".join(ids), " ".join(strings)


def test_every_ruled_out_word_names_a_term_to_use():
    ids = {term["id"] for term in terms()}
    for lang, entries in ruled_out().items():
        assert lang in TRANSLATED, f"avoid: unknown language {lang!r}"
        for entry in entries:
            assert entry.get("word") and entry.get("use") in ids, f"avoid.{lang}: {entry}"


def test_every_term_has_every_language():
    for term in terms():
        assert term.get("id") and term.get("en"), term
        for lang in TRANSLATED:
            assert isinstance(term.get(lang), str) and term[lang].strip(), f"{term['id']} has no {lang}"


@pytest.mark.parametrize("lang", TRANSLATED)
@pytest.mark.parametrize("where", ["lessons", "bank", "catalog"])
def test_translations_use_the_glossary(lang, where):
    pairs = {"lessons": _lesson_pairs, "bank": _bank_pairs, "catalog": _catalog_pairs}[where](lang)
    found = [(label, miss) for label, en, other in pairs if (miss := misses(en, other, lang))]
    assert not found, f"{len(found)} places miss glossary terms:\n" + "\n".join(f"{label}: {m}" for label, m in found[:40])


@pytest.mark.parametrize("lang", TRANSLATED)
@pytest.mark.parametrize("where", ["lessons", "bank", "catalog"])
def test_translations_avoid_ruled_out_words(lang, where):
    pairs = {"lessons": _lesson_pairs, "bank": _bank_pairs, "catalog": _catalog_pairs}[where](lang)
    found = [(label, bad) for label, _, other in pairs if (bad := avoided(other, lang))]
    assert not found, f"{len(found)} places use words the glossary rules out:\n" + "\n".join(f"{label}: {b}" for label, b in found[:40])


def test_the_avoid_check_catches_a_ruled_out_word():
    assert avoided("在 `direct`（直接映射）策略下", "zh") == ["直接映射 (use direct-strategy)"]
    assert avoided("在 `direct`（固定槽位）策略下", "zh") == []


def test_the_check_catches_a_wrong_word():
    assert misses("Each session keeps its slot.", "每个会话保留它的位置。", "zh") == ["slot -> 槽位"]
    assert misses("The sequence batcher keeps order.", "Sequence Batcher 保持顺序。", "zh") == []
