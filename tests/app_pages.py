"""The pages of app/main.py's navigation, read from its source, so page walks cannot drift from it.

Each st.Page(...) in app/main.py names its file as a literal ("views/lab.py") or, for the lessons,
is made from a callable with url_path=course.lesson_url(number) in a comprehension over the lessons:
that one expands to one page per lesson, named by its url path ("lesson_01"). Any other form is
refused, so a new kind of page entry fails here loudly instead of leaving the walks a page short.
"""
from __future__ import annotations

import ast

from streamlit.testing.v1 import AppTest

from app.content.lessons import load_lessons
from app.lab.paths import REPO_ROOT
from app.ui import course

MAIN = REPO_ROOT / "app" / "main.py"


def _is_page_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "Page"


def _url_path(call: ast.Call) -> ast.expr | None:
    return next((keyword.value for keyword in call.keywords if keyword.arg == "url_path"), None)


def main_pages() -> list[str]:
    """The pages in the order app/main.py lists them: a file relative to app/ ('views/home.py') or,
    for a page made from a callable (a lesson), its url path ('lesson_01')."""
    calls = sorted((n for n in ast.walk(ast.parse(MAIN.read_text(encoding="utf-8"))) if _is_page_call(n)),
                   key=lambda n: (n.lineno, n.col_offset))
    pages: list[str] = []
    for call in calls:
        first = call.args[0] if call.args else None
        url_path = _url_path(call)
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            pages.append(first.value)
        elif isinstance(url_path, ast.Call) and ast.unparse(url_path.func) == "course.lesson_url":
            pages += [course.lesson_url(number) for number in range(1, len(load_lessons()) + 1)]
        else:
            raise ValueError(f"app/main.py line {call.lineno}: a page this reader does not know: {ast.unparse(call)}")
    return pages


def view_names() -> list[str]:
    """The same pages as the AppTest walks open them (open_page): the file name under app/views/
    ('lab.py'), or a lesson's url path ('lesson_01')."""
    return [page.removeprefix("views/") for page in main_pages()]


def switch_to(at: AppTest, page: str) -> AppTest:
    """at.switch_page for a page named as view_names() names it; run `at` once before, as for switch_page.

    A file ('lab.py') goes through AppTest.switch_page. A page made from a callable (a lesson) has
    no file, and AppTest.switch_page (Streamlit 1.67) finds pages by file only; so it is found by its
    url path among the pages the last run registered, as a browser at /lesson_01 finds it. A url
    path that no page has is an error here, never the default page opened instead."""
    if page.endswith(".py"):
        return at.switch_page(f"views/{page}")
    found = [page_hash for page_hash, info in at._registered_pages.items() if info.get("url_pathname") == page]
    if len(found) != 1:
        known = sorted(str(info.get("url_pathname")) for info in at._registered_pages.values())
        raise ValueError(f"no single page of the navigation at url path {page!r}; known: {known}")
    at._page_hash = found[0]
    return at
