"""Lesson 7's "Try it" and the verification exercise point at the "Check a deployment" page, in every
language: a link to the page's address in app/main.py's navigation, opened in the language the text
is in, on a model the lab ships."""
from __future__ import annotations

import ast
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from app.content.lessons import heading_parts, lessons_dir, load_lessons
from app.exercise_kit import Finding
from app.i18n import languages, words
from app.lab.deployment import SHIPPED
from app.registry import exercise_words as exercise_text
from app.views.lesson_parts.body import split_sections

MAIN = Path(__file__).resolve().parents[2] / "app" / "main.py"
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def page_path(view: str) -> str:
    """The url_path app/main.py gives st.Page(view, ...)."""
    for node in ast.walk(ast.parse(MAIN.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Page" and node.args \
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == view:
            return next(k.value.value for k in node.keywords if k.arg == "url_path")
    raise AssertionError(f"app/main.py registers no page {view}")


def links_to(text: str, path: str) -> list[dict[str, list[str]]]:
    """The query of every markdown link in `text` whose address is the page at `path` (relative, so a base URL path still works)."""
    return [parse_qs(urlsplit(target).query) for _label, target in LINK.findall(text) if urlsplit(target).path == path]


def try_it(lang: str) -> str:
    lesson = next(lesson for lesson in load_lessons(lessons_dir(lang)) if lesson.id == "choosing-and-rolling-out")
    return next(text for _level, heading, text in split_sections(lesson.body) if heading_parts(heading)[1] == "try-it"
                or heading_parts(heading)[0] == "Try it")


@pytest.mark.parametrize("lang", languages())
def test_lesson_7_try_it_links_to_the_check_page_in_its_own_language(lang):
    found = links_to(try_it(lang), page_path("views/check.py"))
    assert found == [{"model": [found[0]["model"][0]], "lang": [lang]}]
    assert found[0]["model"][0] in SHIPPED


@pytest.mark.parametrize("lang", languages())
def test_the_verification_exercise_says_the_same_checks_run_on_your_own_model_with_the_page_link(lang):
    sentence = exercise_text.finding("verification", Finding("why_your_own"), words(lang))
    assert links_to(sentence, page_path("views/check.py")) == [{"lang": [lang]}]
    assert "batching-lab check --model" in sentence
