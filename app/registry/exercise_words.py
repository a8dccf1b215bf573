"""The words of each exercise, beside its engine: a recogniser exercise's in app/recogniser/exercises/<name>/words.py,
a generator exercise's in app/generation/exercises/<name>/words.py (listed by its family; app/registry/families.py
finds which), each defining, as English templates marked with N_() (the first seven are app/exercise_kit/parts.py's
WordsModule, which mypy and the registry check):

  TITLE, SCENARIO, QUESTION   the situation and the question
  OPTIONS   {option key: text}            every key of EXERCISE.options
  NUMBERS   {number name: label}          every key the exercise puts in result.numbers
  FINDINGS  {code: template}              every Finding code of result.findings / explanation
  STEPS     {code: template}              every Steps code its run() reports
and optionally
  VALUES    {code: word}                  words for codes that appear as values in result.numbers
  CHART_SUMMARIES {code: template}        each chart's message in words (figures.py beside it),
                                          numbers read off the chart: no COVERAGE.md row needed

Templates fill {name:kind} fields from the Finding's values (kinds: app/i18n/formats.py).
"""
from __future__ import annotations

import pandas as pd

from app.exercise_kit import DONE, ExerciseResult, Finding, WordsModule
from app.i18n import N_, Words, formats
from app.lab.progress import Stage
from app.registry import families
from app.text import verdicts as verdict_words

COMMON_STEPS = {DONE: N_("Done")}


def module(name: str) -> WordsModule:
    return families.member(name).words  # ValueError for a name no family has


def title(name: str, _: Words) -> str:
    return _(module(name).TITLE)


def scenario(name: str, _: Words) -> str:
    return _(module(name).SCENARIO)


def question(name: str, _: Words) -> str:
    return _(module(name).QUESTION)


def option(name: str, key: str, _: Words) -> str:
    return _(module(name).OPTIONS[key])


def finding(name: str, found: Finding, _: Words) -> str:
    """One finding (or explanation sentence) of exercise `name` in _'s language."""
    template = module(name).FINDINGS.get(found.code)
    if template is None:
        raise KeyError(f"{module(name).__name__} has no FINDINGS[{found.code!r}]")
    return _.render(template, **found.values)


def step(name: str, stage: Stage, _: Words) -> str:
    template = {**COMMON_STEPS, **module(name).STEPS}.get(stage.code)
    if template is None:
        raise KeyError(f"{module(name).__name__} has no STEPS[{stage.code!r}]")
    return _.render(template, **stage.values)


def explanation(result: ExerciseResult, _: Words) -> str:
    return " ".join(finding(result.name, f, _) for f in result.explanation)


def value(raw: object, _: Words) -> str:
    """A headline measurement written by its type's one formatter."""
    raw = raw.item() if hasattr(raw, "item") else raw
    if isinstance(raw, bool):
        return formats.yes_no(raw, _)
    if isinstance(raw, int):
        return formats.count(raw, _)
    if isinstance(raw, float):
        return formats.number(raw, _)
    if isinstance(raw, dict):
        return verdict_words.verdicts(raw, _)
    if raw is None:
        return "–"
    return formats.text(raw, _)


def numbers_table(result: ExerciseResult, _: Words) -> pd.DataFrame:
    words_of = module(result.name)
    codes = getattr(words_of, "VALUES", {})

    def shown(raw: object) -> str:
        return _(codes[raw]) if isinstance(raw, str) and raw in codes else value(raw, _)

    return pd.DataFrame({
        _(N_("measure")): [_(words_of.NUMBERS[k]) for k in result.numbers],
        _(N_("value")): [shown(v) for v in result.numbers.values()],
    })


def summary(result: ExerciseResult, _: Words) -> str:
    """The result as plain text for a terminal."""
    ex = result.exercise
    lines = [f"{title(ex.name, _)} ({ex.name})", _.render(N_("Q: {question:text}"), question=question(ex.name, _))]
    for key in ex.options:
        marks = [_(N_("correct"))] if key == ex.correct else []
        marks += [_(N_("observed"))] if key == result.outcome else []
        lines.append(f"  [{key}] {option(ex.name, key, _)}" + (f"  <- {', '.join(marks)}" if marks else ""))
    lines.append(_(N_("measured:")))
    table = numbers_table(result, _)
    width = max((len(k) for k in table.iloc[:, 0]), default=0)
    lines += [f"  {k:{width}}  {v}" for k, v in zip(table.iloc[:, 0], table.iloc[:, 1], strict=True)]
    if result.findings:
        lines.append(_(N_("findings:")))
        lines += [f"  - {finding(ex.name, f, _)}" for f in result.findings]
    lines.append(_.render(N_("why: {why:text}"), why=explanation(result, _)))
    return "\n".join(lines)
