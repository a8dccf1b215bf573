"""Are an exercise's findings and figures really in each translated language?

gettext falls back to English for a msgid a catalog lacks, so "every finding rendered" holds for an
empty catalog. A translated rendering must differ from the English one, keep no phrase of it (in any
script), and still carry every value of the finding, written by the value's kind in that language.
"""
from __future__ import annotations

import string

from app.i18n import SOURCE_LANGUAGE, formats, languages, words
from app.registry import exercise_figures as charts
from app.registry import exercise_words as text
from tests.i18n.text_checks import kept_english

TRANSLATED = [lang for lang in languages() if lang != SOURCE_LANGUAGE]


def written_values(name: str, found, lang: str) -> list[str]:
    """Each field of the finding's template, its value written as `lang` writes that kind."""
    _ = words(lang)
    out = []
    for _literal, field, spec, _conversion in string.Formatter().parse(text.module(name).FINDINGS[found.code]):
        if field is None:
            continue
        kind = formats.KINDS.get(spec)
        value = found.values[field]
        out.append(kind(value, _) if kind else format(value, spec))
    return out


def untranslated(name: str, findings, lang: str) -> list[tuple[str, str, list[str]]]:
    """(code, rendering, values missing from it) of each finding not rendered in `lang`: the English
    sentence, a phrase of it left as it is, or a value of the finding left out."""
    bad = []
    for found in findings:
        english, rendered = text.finding(name, found, words(SOURCE_LANGUAGE)), text.finding(name, found, words(lang))
        missing = [v for v in written_values(name, found, lang) if v not in rendered]
        if rendered == english or kept_english(rendered, english) or missing:
            bad.append((found.code, rendered, missing))
    return bad


def untranslated_figures(result, lang: str) -> list[str]:
    """Captions and titles of the result's figures that are empty, English, or keep a phrase of the English."""
    english = charts.figures(result, words(SOURCE_LANGUAGE))
    theirs = charts.figures(result, words(lang))
    assert len(theirs) == len(english) > 0
    bad = []
    for (caption_en, fig_en), (caption, fig) in zip(english, theirs, strict=True):
        for en, shown in ((caption_en, caption), (fig_en.layout.title.text, fig.layout.title.text)):
            if not shown or shown == en or kept_english(shown, en):
                bad.append(shown)
    return bad


def assert_translated(name: str, findings) -> None:
    """Every finding of exercise `name` really rendered in every translated language."""
    assert TRANSLATED, "no translated language is installed"
    for lang in TRANSLATED:
        bad = untranslated(name, findings, lang)
        assert not bad, (lang, bad)
