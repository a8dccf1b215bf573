"""Registries the project keeps in step by hand, compared: a name added to one and not the other
fails here, not in front of a learner."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from app.i18n import languages, words
from app.lab.paths import REPO_ROOT
from app.recogniser.engine.presets import PRESETS
from app.recogniser.words import presets as preset_words
from tests.app_pages import main_pages, view_names
from tests.i18n.text_checks import reads_in

TESTS = REPO_ROOT / "tests"


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_has_its_label_title_and_why_in_every_language(name):
    # The lab's preset button reads all three (app/views/lab.py: a missing WHY is a KeyError on click).
    for table in (preset_words.LABELS, preset_words.TITLES, preset_words.WHY):
        english = table[name]
        for lang in languages():
            assert reads_in(lang, words(lang)(english), english), (name, lang, english)


def test_the_preset_words_name_no_preset_that_is_gone():
    assert set(preset_words.LABELS) == set(preset_words.TITLES) == set(preset_words.WHY) == set(PRESETS)


def test_every_page_file_is_in_the_navigation():
    files = sorted(f"views/{p.name}" for p in (REPO_ROOT / "app" / "views").glob("*.py") if p.name != "__init__.py")
    assert sorted(page for page in main_pages() if page.endswith(".py")) == files  # the lessons' pages have no file
    assert len(main_pages()) == len(set(main_pages())), "a page listed twice"


def test_the_page_walks_take_their_pages_from_the_navigation():
    from tests.i18n import test_pages_in_chinese

    assert view_names() == test_pages_in_chinese.PAGES
    # The browser walks click the live navigation's links; each checks it saw them all.
    walks = {"e2e/test_chinese_browser.py": "len(titles) == len(main_pages())",
             "e2e/test_accessibility_browser.py": "expect(links).to_have_count(len(main_pages())",
             "e2e/test_pseudo_locale_browser.py": "assert links.count() == len(main_pages())"}
    for walk, check in walks.items():
        assert check in (TESTS / walk).read_text(encoding="utf-8"), walk


def _spelled_languages(path: Path) -> list[int]:
    """Lines of `path` with a tuple, list or set literal of two or more language codes."""
    known = set(languages())
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(node.elts) >= 2 and all(
                isinstance(e, ast.Constant) and e.value in known for e in node.elts):
            lines.append(node.lineno)
    return lines


def test_language_tests_iterate_the_languages_the_app_has():
    """A test over 'every language' loops over app.i18n.languages(): a language added to the app
    is then tested everywhere, which a spelled-out pair of codes would skip."""
    found = [f"tests/{path.relative_to(TESTS)}:{line}"
             for path in sorted(TESTS.rglob("*.py"))
             for line in _spelled_languages(path)]
    assert not found, "use app.i18n.languages() instead of spelling the codes:\n" + "\n".join(found)


def test_the_language_check_sees_a_spelled_pair(tmp_path):
    spelled = tmp_path / "test_x.py"
    spelled.write_text("for lang in (" + ", ".join(repr(code) for code in languages()) + "):\n    pass\n")
    assert _spelled_languages(spelled) == [1]


def _calls(package: Path):
    """(module name, callee name, call node) of every call in the modules under `package` (files in
    folders that are not packages, such as Alembic's migration scripts, are data, not modules)."""
    for path in sorted(package.rglob("*.py")):
        if not (path.parent / "__init__.py").exists():
            continue
        module = ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                yield module, name, node


def _literal(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


@pytest.mark.parametrize(("engine", "at_least"), [(("app", "lab"), 40), (("app", "checker", "engine"), 40)])
def test_every_problem_code_the_engine_raises_has_its_words(engine, at_least):
    """LabError, ServerError and DatabaseError codes alike. A code raised without words is a KeyError in front of a
    learner (app/text/problems.problem). The lab's codes are worded in app/text/problems.py; the checker's engine
    may raise those and its own, worded in app/checker/words (PROBLEMS), which its callers hand to explain."""
    import importlib

    from app.checker import words as check_words
    from app.lab.database import DatabaseError
    from app.lab.problems import LabError, Problem
    from app.lab.server import ServerError
    from app.text.problems import PROBLEMS

    worded = set(PROBLEMS) | (set(check_words.PROBLEMS) if engine[1] == "checker" else set())
    raised = set()
    for module, name, node in _calls(REPO_ROOT.joinpath(*engine)):
        callee = getattr(importlib.import_module(module), name, None)
        is_code = callee is Problem or (isinstance(callee, type) and issubclass(callee, (LabError, ServerError, DatabaseError)))
        if is_code and node.args and _literal(node.args[0]):
            raised.add(node.args[0].value)
    assert len(raised) > at_least  # the scan finds the engine's codes
    assert raised - worded == set()


def test_the_checkers_codes_and_its_words_are_the_same_lists():
    from app.checker import words as words_of
    from app.checker.engine import checks, verdicts
    from app.checker.engine.sequences import diagnosis, refusals, replay, slow_client
    from app.checker.engine.streaming import stream_judge, streams

    # the declaration (app/checker/engine/checks.py) read as data: every check, variant and diagnosis has its words
    assert set(words_of.CHECKS) == {c.code for c in checks.CHECKS}
    assert set(words_of.VARIANTS) == {v for c in checks.CHECKS for v in c.variants}
    # a broken check's reason: its diagnosis, what else a broken reference may say, what a refused
    # request says, or, where the diagnosis replayed its sessions, the advice their classes give
    assert set(words_of.DIAGNOSES) == ({c.diagnosis for c in checks.CHECKS} | set(checks.BROKEN_REFERENCE_REASONS)
                                       | set(checks.REFUSAL_REASONS) | set(diagnosis.ADVICE_CODES)
                                       | set(stream_judge.STREAM_DIAGNOSES) | set(slow_client.LEAK_DIAGNOSES))
    assert set(refusals.REFUSAL_DIAGNOSES.values()) == set(checks.REFUSAL_REASONS)
    assert set(diagnosis.CHECKS) <= {c.code for c in checks.for_path(sequence=True)}
    assert {c.judged_by for c in checks.CHECKS} == {checks.REFERENCE, checks.GOLDEN, checks.FINITE}
    assert [c.code for c in checks.CHECKS if c.always] == ["reference", "repeat_alone", "stream_reference"]  # one reference per path
    assert set(words_of.NOTES) == set(verdicts.NOTE_CODES)
    assert set(words_of.DIAGNOSED) == {*diagnosis.CLASSES, "foreign_mix", "foreign_left"}
    emitted: dict[str, set[str]] = {"skip": set(), "phase": set(), "cause": set(), "role": set()}
    for _module, name, node in _calls(REPO_ROOT / "app" / "checker" / "engine"):
        args = [_literal(a) for a in node.args]
        if name == "skip" and len(args) >= 3 and args[2]:
            emitted["skip"].add(args[2])
        elif name == "CopySkipped" and args and args[0]:
            emitted["skip"].add(args[0])
        elif name == "CheckVerdict" and "skipped" in args:
            after = node.args[args.index("skipped") + 1]
            emitted["skip"] |= {_literal(n) for n in ast.walk(after) if _literal(n)}
        elif name == "run_phase" and args and args[0]:
            emitted["phase"].add(args[0])
        elif name == "sequence" and args and args[0]:
            emitted["role"].add(args[0])
    source = (REPO_ROOT / "app" / "checker" / "engine" / "sequences" / "refusals.py").read_text()
    cause = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == "refusal_cause")
    emitted["cause"] = {_literal(n.value) for n in ast.walk(cause) if isinstance(n, ast.Return) and _literal(n.value)}
    assert emitted["skip"] - set(words_of.SKIP_REASONS) == set() and len(emitted["skip"]) >= 8
    # the stream path's phases are its module's constants (streams.py ticks them by name)
    assert emitted["phase"] | {replay.PHASE, streams.ALONE_PHASE, streams.STAGGERED_PHASE, slow_client.PHASE} == set(words_of.PHASES)
    assert emitted["cause"] == set(words_of.REFUSAL_CAUSES)
    assert emitted["role"] <= set(words_of.ROLES) and emitted["role"]
