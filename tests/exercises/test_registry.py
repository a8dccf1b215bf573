"""The exercise registries the CLI and the page rely on (both families: app/registry/families.py, each an
app/exercise_kit Registry): every registered exercise is complete, and an incomplete one is refused by name."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path
from types import ModuleType
from typing import get_origin, get_type_hints

import plotly.graph_objects as go
import pytest

from app.exercise_kit import DONE, EngineModule, Exercise, ExerciseResult, FiguresModule, Member, Registry, WordsModule
from app.exercise_kit.parts import required
from app.exercise_kit.registry import PARTS
from app.generation.exercises import head_of_line
from app.generation.exercises.family import EXERCISES as GENERATION
from app.generation.exercises.head_of_line import engine as head_of_line_engine
from app.generation.exercises.head_of_line import figures as head_of_line_figures
from app.i18n import languages, words
from app.recogniser.exercises import forgot_ready
from app.recogniser.exercises.family import EXERCISES as RECOGNISER
from app.recogniser.exercises.forgot_ready import engine as forgot_ready_engine
from app.recogniser.exercises.forgot_ready import figures as forgot_ready_figures
from app.recogniser.exercises.forgot_ready import words as forgot_ready_words
from app.registry import exercise_figures as exercise_charts
from app.registry import exercise_words as text
from app.registry import families
from tests.i18n.text_checks import reads_in

NAMES = families.names()
REPO = Path(__file__).resolve().parents[2]


def test_registry_is_the_order_of_exercises_and_names_each_module_once():
    assert len(NAMES) == len(set(NAMES)) >= 1
    assert list(RECOGNISER) + list(GENERATION) == NAMES  # the recogniser's first
    assert [family.family for family in families.FAMILIES] == ["recogniser", "generation"]
    for family in families.FAMILIES:
        assert list(family.exercises) == list(family) and list(family)
        for name in family:
            assert family.exercises[name].name == name and families.family_of(name) is family
            for which in PARTS:
                assert getattr(families.member(name), which).__name__.endswith(f".{name}.{which}")


def test_both_families_are_one_registry_class():
    """The generator's family is no copy of the recogniser's registry: the same class runs both (and so
    attaches the server log to both: test_each_exercise_draws_its_figures_from_a_real_result)."""
    assert all(type(family) is Registry for family in families.FAMILIES)


@pytest.mark.parametrize("name", NAMES)
def test_each_exercise_asks_a_question_it_can_answer(name):
    ex = families.get(name)
    words_of = text.module(name)
    assert words_of.TITLE and words_of.SCENARIO and words_of.QUESTION.endswith("?")
    keys = list(ex.options)
    assert len(keys) == len(set(keys)) >= 3
    assert set(words_of.OPTIONS) == set(keys) and all(words_of.OPTIONS.values())
    assert ex.correct in keys


def _codes(name: str) -> tuple[set[str], set[str]]:
    """Finding codes and step codes written as literals in the exercise module's source."""
    tree = ast.parse(inspect.getsource(families.member(name).engine))
    found, steps = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            callee = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if callee == "Finding":
                found.add(node.args[0].value)
            elif callee == "steps":
                steps.add(node.args[0].value)
    return found, steps


@pytest.mark.parametrize("name", NAMES)
def test_every_code_an_exercise_can_emit_has_words_and_every_word_is_used(name):
    found, steps = _codes(name)
    words_of = text.module(name)
    assert found and steps, f"{name} reports no Finding or step codes as literals"
    assert found <= set(words_of.FINDINGS), f"no words for {sorted(found - set(words_of.FINDINGS))}"
    assert steps <= set(words_of.STEPS) | {DONE}, f"no words for steps {sorted(steps - set(words_of.STEPS))}"
    assert set(words_of.FINDINGS) <= found, f"words never used: {sorted(set(words_of.FINDINGS) - found)}"
    assert set(words_of.STEPS) <= steps, f"step words never used: {sorted(set(words_of.STEPS) - steps)}"


@pytest.mark.parametrize("name", NAMES)
def test_a_real_result_renders_in_every_language(name, exercise_result):
    """Every word a real result shows, in every language the app has: in English the module's
    own templates, in another language not the English (what gettext gives for a missing entry)."""
    result = exercise_result(name)
    words_of = text.module(name)
    assert set(result.numbers) <= set(words_of.NUMBERS), "a measurement without a label"
    en = words("en")
    assert text.title(name, en) == words_of.TITLE
    english = {
        "title": text.title(name, en),
        "explanation": text.explanation(result, en),
        **{f"finding {f.code}": text.finding(name, f, en) for f in result.findings},
        **{f"number {k}": en(words_of.NUMBERS[k]) for k in result.numbers},
    }
    for lang in languages():
        _ = words(lang)
        shown = {
            "title": text.title(name, _),
            "explanation": text.explanation(result, _),
            **{f"finding {f.code}": text.finding(name, f, _) for f in result.findings},
            **{f"number {k}": _(words_of.NUMBERS[k]) for k in result.numbers},
        }
        wrong = [what for what in english if not reads_in(lang, shown[what], english[what])]
        assert not wrong, f"{lang}: {wrong}"
        table = text.numbers_table(result, _)
        assert table.iloc[:, 0].tolist() == [shown[f"number {k}"] for k in result.numbers]
        assert text.summary(result, _).startswith(f"{shown['title']} ({name})\n")


def _points(trace) -> int:
    """How many values a trace draws (bars, markers, heat cells or table cells)."""
    if isinstance(trace, go.Table):
        return sum(len(column) for column in trace.cells.values or ())
    values = [getattr(trace, axis, None) for axis in ("x", "y", "z")]
    return max(len(v) if v is not None else 0 for v in values)


@pytest.mark.parametrize("name", NAMES)
def test_each_exercise_draws_its_figures_from_a_real_result(name, exercise_result):
    result = exercise_result(name)
    assert isinstance(result, ExerciseResult) and result.name == name
    assert result.outcome in result.exercise.options
    assert result.log is not None, f"{name}: its family's registry attached no server log"
    charts = exercise_charts.figures(result, words("zh"))
    assert charts, f"{name} draws no figure"
    for caption, fig in charts:
        assert caption and isinstance(fig, go.Figure)
        assert fig.data and max(_points(t) for t in fig.data) > 0, f"{name}: {caption!r} is empty"


def _rebuilt(family: Registry, package: ModuleType) -> Registry:
    """Family `family` built again with only the exercise `package`, as its family module builds it at import."""
    return Registry(family.family, family.guide, family.tests, (Member(package.engine, package.words, package.figures),))


def test_an_incomplete_module_is_refused_by_name(monkeypatch):
    monkeypatch.delattr(forgot_ready_engine, "judge")
    with pytest.raises(ImportError, match="forgot_ready.engine lacks judge: see app/recogniser/exercises/__init__.py"):
        _rebuilt(RECOGNISER, forgot_ready)


def test_a_generation_exercise_without_a_judge_is_refused_by_name(monkeypatch):
    monkeypatch.delattr(head_of_line_engine, "judge")
    with pytest.raises(ImportError, match="head_of_line.engine lacks judge: see app/generation/exercises/__init__.py"):
        _rebuilt(GENERATION, head_of_line)


def test_an_exercise_without_figures_is_refused_by_name(monkeypatch):
    monkeypatch.delattr(forgot_ready_figures, "figures")
    with pytest.raises(ImportError, match="forgot_ready.figures lacks figures"):
        _rebuilt(RECOGNISER, forgot_ready)


def test_a_generation_exercise_without_figures_is_refused_by_name(monkeypatch):
    monkeypatch.delattr(head_of_line_figures, "figures")
    with pytest.raises(ImportError, match="head_of_line.figures lacks figures"):
        _rebuilt(GENERATION, head_of_line)


def test_an_exercise_without_its_words_is_refused_by_name(monkeypatch):
    monkeypatch.delattr(forgot_ready_words, "QUESTION")
    with pytest.raises(ImportError, match="forgot_ready.words lacks QUESTION: see app/registry/exercise_words.py"):
        _rebuilt(RECOGNISER, forgot_ready)


@pytest.mark.parametrize("name", NAMES)
def test_each_exercise_module_defines_what_its_protocol_declares(name):
    """What mypy checks of the family's list, at run time too: the names and kinds of
    app/exercise_kit/parts.py's Protocols (their annotations, so this list cannot drift from them)."""
    member = families.member(name)
    assert required(WordsModule) == ("TITLE", "SCENARIO", "QUESTION", "OPTIONS", "NUMBERS", "FINDINGS", "STEPS")
    assert required(EngineModule) == ("EXERCISE", "measure", "judge") and required(FiguresModule) == ("figures",)
    for field, kind in get_type_hints(WordsModule).items():
        if not field.startswith("__"):
            assert isinstance(getattr(member.words, field), get_origin(kind) or kind), f"{member.words.__name__}.{field}"
            if kind is not str:
                assert all(isinstance(k, str) and isinstance(v, str) for k, v in getattr(member.words, field).items())
    assert isinstance(member.engine.EXERCISE, Exercise)
    assert all(callable(getattr(member.engine, f)) for f in ("measure", "judge")) and callable(member.figures.figures)


def test_unknown_name_lists_the_names():
    with pytest.raises(ValueError) as err:
        families.get("nope")
    for name in NAMES:
        assert name in str(err.value)
    with pytest.raises(ValueError):
        families.run("nope", None, None)


def _test_module(name: str) -> Path:
    """The exercise's own test module, where its family keeps them."""
    return REPO / families.family_of(name).tests.format(name=name)


def _judged_outcomes(name: str) -> set[str]:
    """Outcomes the exercise's test module asserts on `judged = ….judge(…)` (hand-made tables)."""
    tree = ast.parse(_test_module(name).read_text())
    judged_names = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                    and getattr(n.value.func, "attr", "") == "judge" for t in n.targets if isinstance(t, ast.Name)}
    out = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute) and node.left.attr == "outcome"
                and isinstance(node.left.value, ast.Name) and node.left.value.id in judged_names):
            out |= {c.value for c in node.comparators if isinstance(c, ast.Constant)}
    return out


@pytest.mark.parametrize("name", NAMES)
def test_every_outcome_of_an_exercise_has_a_judge_test_on_hand_made_tables(name):
    """The README's promise for a new exercise: its test module sits beside these and judges every
    outcome it offers without a server."""
    assert _test_module(name).is_file(), f"{families.family_of(name).tests.format(name=name)} is missing"
    assert _judged_outcomes(name) == set(families.get(name).options), name


def _why_certain(source: str) -> str | None:
    """The docstring of a test module's `result` fixture (its one real run), or None without one."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == "result" and any(
                "fixture" in ast.unparse(d) for d in node.decorator_list):
            return ast.get_docstring(node)
    return None


@pytest.mark.parametrize("name", NAMES)
def test_each_exercise_test_module_says_why_its_pinned_outcome_is_certain(name):
    """The convention of app/recogniser/exercises/__init__.py: one real run is pinned, so its fixture says why
    what the tests pin cannot come out otherwise, or that they assert only what holds either way."""
    why = _why_certain(_test_module(name).read_text())
    assert why and "certain" in why.lower(), f"test_{name}.py: the `result` fixture's docstring must say why its outcome is certain"


def test_a_module_without_the_reason_is_found():
    silent = "import pytest\n\n@pytest.fixture(scope='module')\ndef result(exercise_result):\n    return exercise_result('x')\n"
    assert _why_certain(silent) is None
    assert _why_certain("def result():\n    '''certain, but no fixture'''\n") is None
    said = "import pytest\n\n@pytest.fixture(scope='module')\ndef result(exercise_result):\n    '''Certain: a barrier.'''\n"
    assert _why_certain(said) == "Certain: a barrier."
