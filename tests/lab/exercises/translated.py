"""A check that an exercise's sentences are really translated, for the exercise tests.

gettext falls back to English, so "every finding renders" holds with an empty catalog. This
fails instead: in each translated language a sentence must differ from the English one, be
written in the language's script, and show each of its values as that language writes it.
"""
from __future__ import annotations

import string

from app.i18n import SOURCE_LANGUAGE, languages, words
from app.lab.exercises.common.base import Finding
from app.text import exercises as text
from tests.i18n.text_checks import has_cjk

TRANSLATED = [lang for lang in languages() if lang != SOURCE_LANGUAGE]


def assert_translated(name: str, found: list[Finding]) -> None:
    """Each Finding of exercise `name`, in every translated language (all of them Chinese so far)."""
    assert TRANSLATED, "no translated language is installed"
    for f in found:
        english = text.finding(name, f, words(SOURCE_LANGUAGE))
        fields = [(field, kind) for _, field, kind, _ in string.Formatter().parse(text.module(name).FINDINGS[f.code]) if field]
        for lang in TRANSLATED:
            _ = words(lang)
            said = text.finding(name, f, _)
            assert said != english and has_cjk(said), (lang, f.code, said)
            for field, kind in fields:
                value = _.render(f"{{value:{kind}}}", value=f.values[field])
                assert value in said, (lang, f.code, field, value, said)
