"""docs/ stays true to the tree: architecture.md's layout table is the app's folders, and every recipe in
contributing.md names the test that holds it."""
from __future__ import annotations

import re

from app.lab.paths import REPO_ROOT

DOCS = REPO_ROOT / "docs"
RECIPES = ["A lesson", "A live element", "An exercise", "A checker check", "A review rule", "A quiz item", "A language",
           "A deployment", "A preset", "A page", "A chart"]


def _layout_rows(text: str) -> list[str]:
    table = text.split("<!-- layout:", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^\| `([^`]+)` \|", table, flags=re.M)


def _pattern(row: str) -> str:
    return re.sub(r"<[^>]+>", "*", row)


def _stands_for(row: str, folder: str) -> bool:
    """Whether a <name> row stands for folder: each placeholder is one folder name, never a deeper path."""
    return "<" in row and re.fullmatch(re.sub(r"<[^>]+>", "[^/]+", re.escape(row).replace(r"\<", "<").replace(r"\>", ">")), folder) is not None


def _app_folders() -> list[str]:
    return sorted({
        f"{path.parent.relative_to(REPO_ROOT)}/" for path in (REPO_ROOT / "app").rglob("*.py")
        if "__pycache__" not in path.parts and "locale" not in path.parts
    })


def test_the_layout_table_lists_every_folder_of_the_app_once_and_only_folders_that_exist():
    rows = _layout_rows((DOCS / "architecture.md").read_text(encoding="utf-8"))
    assert len(rows) == len(set(rows)) and "app/" in rows
    missing = [row for row in rows if not [p for p in REPO_ROOT.glob(_pattern(row).rstrip("/")) if p.is_dir()]]
    assert not missing, f"docs/architecture.md's layout names folders that do not exist: {missing}"
    exact = set(rows)
    # a folder is listed by its own row, or by a <name> row when no row names it exactly
    unlisted = [folder for folder in _app_folders()
                if folder not in exact and not any(_stands_for(row, folder) for row in rows)]
    assert not unlisted, f"folders of the app missing from docs/architecture.md's layout table: {unlisted}"


def test_a_placeholder_row_stands_for_each_folder_of_its_kind_and_no_deeper():
    assert _stands_for("app/recogniser/exercises/<name>/", "app/recogniser/exercises/slot_exhaustion/")
    assert not _stands_for("app/live/<name>/", "app/recogniser/exercises/slot_exhaustion/")
    assert not _stands_for("app/recogniser/exercises/<name>/", "app/recogniser/exercises/slot_exhaustion/parts/")
    assert not _stands_for("app/exercise_kit/", "app/exercise_kit/")  # an exact row is matched as itself


def _recipes() -> dict[str, str]:
    text = (DOCS / "contributing.md").read_text(encoding="utf-8")
    parts = re.split(r"^### \d+\. (.+)$", text.split("## Recipes", 1)[1], flags=re.M)[1:]
    return {title: body.split("\n## ", 1)[0] for title, body in zip(parts[::2], parts[1::2], strict=True)}


def test_each_kind_of_change_has_a_numbered_recipe_that_names_the_test_that_holds_it():
    recipes = _recipes()
    assert list(recipes) == RECIPES
    for title, recipe in recipes.items():
        held = recipe.split("\nHeld by ", 1)
        assert len(held) == 2, f"{title}: no 'Held by' sentence"
        tests = re.findall(r"`(tests/[^`]+\.py(?:::\w+)?)`", held[1])
        assert tests, f"{title}: names no test file"
        for named in tests:
            path, _, function = named.partition("::")
            found = list(REPO_ROOT.glob(_pattern(path)))
            assert found, f"{title}: {path} does not exist"
            if function:  # a test named by its function: it is defined there
                assert any(f"def {function}(" in f.read_text(encoding="utf-8") for f in found), named
        files = [REPO_ROOT / t.partition("::")[0] for t in re.findall(r"`(tests/[^`]+\.py(?:::\w+)?)`", recipe)]
        for function in re.findall(r"`(test_\w+)`", recipe):  # a test named alone lives in a file the recipe names
            assert any(f.is_file() and f"def {function}(" in f.read_text(encoding="utf-8") for f in files), f"{title}: {function}"


NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]


def wrong_lesson_counts(pages: list, count: int) -> list[str]:
    """Where a page counts the lessons ("the eight lessons", "Lessons 1 to 8") with another number than `count`."""
    wrong = []
    for page in pages:
        text = page.read_text(encoding="utf-8").replace("\n", " ")
        for said in re.findall(rf"\b({'|'.join(NUMBER_WORDS)}|\d+) lessons\b", text, flags=re.I):
            number = NUMBER_WORDS.index(said.lower()) if said.lower() in NUMBER_WORDS else int(said)
            if number != count:
                wrong.append(f"{page.name}: '{said} lessons'")
        for last in re.findall(r"\blessons 1 to (\d+)\b", text, flags=re.I):
            if int(last) != count:
                wrong.append(f"{page.name}: 'lessons 1 to {last}'")
    return wrong


def test_no_page_counts_the_lessons_by_hand_wrongly():
    """The lessons are the files in lessons/; a page that says how many must say the number the files
    make, so adding a lesson file fails here until the words follow (better: say no number)."""
    from app.content.lessons import load_lessons

    count = len(load_lessons())
    wrong = wrong_lesson_counts([REPO_ROOT / "README.md", *sorted(DOCS.glob("*.md"))], count)
    assert not wrong, f"{count} lesson files, but: {wrong}"


def test_a_page_that_counts_one_lesson_too_few_fails(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("Each of the eight\nlessons ends in a check. Lessons 1 to 8 are below; so are 9 lessons.\n")
    assert wrong_lesson_counts([page], 9) == ["page.md: 'eight lessons'", "page.md: 'lessons 1 to 8'"]
    assert wrong_lesson_counts([page], 8) == ["page.md: '9 lessons'"]
