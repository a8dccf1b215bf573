"""The gettext catalogs are complete and compiled, and values are written one way per kind."""
from __future__ import annotations

import re

import pytest
from babel.messages.catalog import Message

import app.text  # noqa: F401  (the verdict words register the verdict kinds)
from app.i18n import LOCALE_DIR, catalogs, formats, languages, native_name, parse_language, words


def test_every_marked_string_is_translated_and_compiled():
    problems = catalogs.problems()
    assert not problems, "\n".join(problems[:40]) + f"\n... {len(problems)} problems: run python -m app.i18n.catalogs all"


def test_languages_are_found_from_the_catalogs_on_disk():
    on_disk = {p.parent.parent.name for p in LOCALE_DIR.glob("*/LC_MESSAGES/messages.mo")}
    assert languages()[0] == "en" and set(languages()[1:]) == on_disk
    for lang in languages():
        assert parse_language(f"{lang}-XX") == lang and parse_language(f"{lang}_Hans_XX") == lang
        assert native_name(lang).strip()
    assert parse_language("xx") is None and parse_language("") is None and parse_language(None) is None


def test_an_unknown_language_is_refused_with_the_ones_there_are():
    with pytest.raises(ValueError, match=re.escape(f"choose one of {', '.join(languages())}")):
        words("xx")


def test_a_translation_that_is_its_english_is_no_translation():
    def entry(english, translated, comments=()):
        return Message(english, translated, user_comments=list(comments))

    english = "The server refused the request"
    assert catalogs.same_as_english(entry(english, english), english)
    assert catalogs.same_as_english(entry(english, f"服务器：{english}"), english), "the English sentence kept inside"
    assert not catalogs.same_as_english(entry(english, "[Ţĥé šéŕṽéŕ ŕéƒûšéð ţĥé ŕéǫûéšţ ~~]"), english), "in any script"
    assert not catalogs.same_as_english(entry("{n:count}·{m:count}", "{n:count}·{m:count}"), "{n:count}·{m:count}")
    assert not catalogs.same_as_english(entry("HTTP", "HTTP", ["kept: the protocol's name"]), "HTTP")
    assert not catalogs.same_as_english(entry("idle_evict_s {evict} s", "idle_evict_s {evict} 秒"), "idle_evict_s {evict} s")


@pytest.mark.parametrize(
    "kind, value, en, zh",
    [
        ("count", 1204, "1,204", "1,204"),
        ("number", 2.456, "2.5", "2.5"),
        ("seconds", 1.25, "1.2 s", "1.2 秒"),
        ("ms", 12.0, "12.0 ms", "12.0 毫秒"),
        ("percent", 0.25, "25%", "25%"),
        ("ratio", 2.0, "2.0×", "2.0 倍"),
        ("session", 2, "session 3", "会话 3"),
        ("verdict", "foreign", "foreign", "串话"),
        ("yes_no", True, "yes", "是"),
        ("text", "must specify the START flag", "must specify the START flag", "must specify the START flag"),
    ],
)
def test_one_formatter_per_kind_in_both_languages(kind, value, en, zh):
    assert formats.KINDS[kind](value, words("en")) == en
    assert formats.KINDS[kind](value, words("zh")) == zh


def test_a_missing_measurement_is_a_dash_not_nan():
    assert formats.ms(float("nan"), words("en")) == "–" and formats.count(None, words("zh")) == "–"


def test_templates_name_a_kind_and_a_typo_is_an_error():
    assert words("en").render("{n:count} of {total:count}", n=3, total=1000) == "3 of 1,000"
    with pytest.raises(ValueError, match="unknown value kind 'cont'"):
        words("en").render("{n:cont}", n=3)


def test_a_translation_must_keep_the_templates_fields():
    assert catalogs.fields("{a:count} of {b:seconds}") == {("a", "count"), ("b", "seconds")}
    assert catalogs.fields("{a:count} 个") != catalogs.fields("{a:count} of {b:seconds}")


def test_every_marked_literal_reaches_the_catalog():
    """Babel cannot see a _() call inside an f-string on Python < 3.12; such a string would
    stay English on every page. Every literal given to _ or N_ anywhere must be extracted."""
    import ast

    extracted = {m.id for m in catalogs.extract() if m.id}
    missed = []
    for path in sorted(catalogs.APP_DIR.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "N_")
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                    and node.args[0].value and node.args[0].value not in extracted):
                missed.append(f"{path.relative_to(catalogs.APP_DIR.parent)}:{node.lineno}: {node.args[0].value!r}")
    assert not missed, "\n".join(missed)
