"""The pages of app/main.py's navigation, read from its source, so page walks cannot drift from it.

Each st.Page(...) in app/main.py names its file as a literal ("views/lab.py") or, for the lessons,
through course.lesson_page(number) in a comprehension over the lessons: that one expands to one
page per lesson. Any other form is refused, so a new kind of page entry fails here loudly
instead of leaving the walks a page short.
"""
from __future__ import annotations

import ast

from app.content.lessons import load_lessons
from app.lab.paths import REPO_ROOT
from app.ui import course

MAIN = REPO_ROOT / "app" / "main.py"


def _is_page_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "Page"


def main_pages() -> list[str]:
    """Page files relative to app/ ('views/home.py', ...), in the order app/main.py lists them."""
    calls = sorted((n for n in ast.walk(ast.parse(MAIN.read_text(encoding="utf-8"))) if _is_page_call(n)),
                   key=lambda n: (n.lineno, n.col_offset))
    pages: list[str] = []
    for call in calls:
        first = call.args[0] if call.args else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            pages.append(first.value)
        elif isinstance(first, ast.Call) and ast.unparse(first.func) == "course.lesson_page":
            pages += [course.lesson_page(number) for number in range(1, len(load_lessons()) + 1)]
        else:
            raise ValueError(f"app/main.py line {call.lineno}: a page this reader does not know: {ast.unparse(call)}")
    return pages


def view_names() -> list[str]:
    """The same pages as the AppTest walks open them: the file name under app/views/ ('lab.py')."""
    return [page.removeprefix("views/") for page in main_pages()]
