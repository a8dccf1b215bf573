"""Load and validate quiz/bank.yaml into Item/Option objects.

Validation collects every problem before raising, so one run of the loader
gives the bank author the full list; each line names file, item and field.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import yaml

from app.content import yaml_text
from app.content.lessons import Lesson, LessonLinkError, display_path, resolve_link
from app.lab.errors import BatchingLabError
from app.lab.paths import QUIZ_DIR

# Order matters: summaries and reports list topics in this teaching order.
TOPICS: tuple[str, ...] = (
    "choosing", "symptoms", "guarantees", "mechanics", "control-tensors",
    "direct-oldest", "capacity", "failure-modes", "instances", "rollout", "generation", "memory",
)
TYPES: tuple[str, ...] = ("single", "multiple", "numeric", "predict")
SCENARIOS: tuple[str, ...] = ("the_mistake", "the_fix", "oldest_right", "oldest_wrong", "forgot_ready")
OUTCOMES: tuple[str, ...] = ("intact", "corrupted")
ID_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# Repositories of triton-inference-server that a source may name.
SOURCE_REPOS: tuple[str, ...] = (
    "server", "core", "common", "python_backend", "client", "backend", "vllm_backend", "tensorrtllm_backend",
)
# A source is one or more '; '-separated references that a reader can look up:
#   'server docs/user_guide/model_configuration.md'  a file in a Triton repository
#   'server#3406'                        an issue or pull request there
#   'seed: <which seed>'                 one of the course's source documents
#   'lab: <path>'                        this project's own model or measurement
_REPOS = "|".join(SOURCE_REPOS)
SOURCE_PART = re.compile(rf"^(?:(?:{_REPOS}) \S+|(?:{_REPOS})#\d+|(?:seed|lab): \S.*)$")

_COMMON = {"id", "topic", "type", "prompt", "lesson", "source"}
# Keys each type must have, and the optional ones it may have; anything else is a typo.
_REQUIRED = {
    "single": _COMMON | {"options"},
    "multiple": _COMMON | {"options"},
    "numeric": _COMMON | {"answer", "tolerance", "explain"},
    "predict": _COMMON | {"options", "scenario"},
}
_OPTIONAL = {
    "single": {"explain"},
    "multiple": {"explain"},
    "numeric": {"unit"},
    "predict": {"explain"},
}


@dataclass(frozen=True)
class Option:
    key: int  # index in the file: stable across shuffles, what answers refer to
    text: str
    correct: bool
    explain: str
    outcome: str | None = None  # predict items only: intact | corrupted


@dataclass(frozen=True)
class Item:
    id: str
    topic: str
    type: str
    prompt: str
    lesson: str
    options: tuple[Option, ...] = ()
    explain: str | None = None
    answer: float | None = None
    tolerance: float | None = None
    unit: str | None = None
    scenario: str | None = None
    source: str = ""  # where the keyed answer and explanations come from

    @property
    def correct_keys(self) -> frozenset[int]:
        return frozenset(o.key for o in self.options if o.correct)

    def option(self, key: int) -> Option:
        for opt in self.options:
            if opt.key == key:
                return opt
        raise KeyError(f"item {self.id!r} has no option with key {key}")


@dataclass(frozen=True)
class Bank:
    """The validated bank: items in file order plus lookup by id."""

    items: tuple[Item, ...]
    path: Path

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, item_id: str) -> Item:
        for item in self.items:
            if item.id == item_id:
                return item
        raise KeyError(f"no item {item_id!r} in {display_path(self.path)}")

    def get(self, item_id: str) -> Item | None:
        return next((i for i in self.items if i.id == item_id), None)

    @property
    def topics(self) -> tuple[str, ...]:
        """Topics that have at least one item, in TOPICS order."""
        present = {i.topic for i in self.items}
        return tuple(t for t in TOPICS if t in present)


@dataclass(frozen=True)
class InvalidField:
    """One field of the bank file that is wrong, and why (app/lab/problems.Problem is a learner's problem)."""

    item: str  # "'some-id'" or "#3" when the id itself is unusable
    field: str
    message: str


class BankError(BatchingLabError, ValueError):
    """The bank is malformed; str() lists one 'file: item .. field ..: why' per line."""

    def __init__(self, path: Path, problems: Sequence[InvalidField]) -> None:
        self.path = path
        self.problems = list(problems)
        where = display_path(path)
        lines = [
            f"{where}: item {p.item} field '{p.field}': {p.message}" if p.item else f"{where}: field '{p.field}': {p.message}"
            for p in self.problems
        ]
        super().__init__("\n".join(lines))


def _is_number(value: object) -> TypeGuard[float]:
    # YAML 'true' is a bool, which Python counts as an int; it is never a quiz number.
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _nonempty(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value.strip())


class _ItemChecker:
    """Validates one raw item mapping, recording problems instead of stopping."""

    # raw is parsed YAML: each field is checked (fail() otherwise) before build() reads it, so its values stay untyped.
    def __init__(self, raw: dict[str, Any], label: str, lessons: list[Lesson] | None) -> None:
        self.raw = raw
        self.label = label
        self.lessons = lessons
        self.problems: list[InvalidField] = []

    def fail(self, field: str, message: str) -> None:
        self.problems.append(InvalidField(self.label, field, message))

    def check(self) -> Item | None:
        raw = self.raw
        kind = raw.get("type")
        if kind not in TYPES:
            self.fail("type", f"{kind!r} is not one of {', '.join(TYPES)}")
            return None
        # A missing id is already reported by validate_items, with the index.
        for key in sorted(_REQUIRED[kind] - set(raw) - {"id"}):
            self.fail(key, f"required for {kind} items")
        for key in sorted(set(raw) - _REQUIRED[kind] - _OPTIONAL[kind]):
            self.fail(key, f"not allowed on {kind} items")
        topic = raw.get("topic")
        if "topic" in raw and topic not in TOPICS:
            self.fail("topic", f"{topic!r} is not one of {', '.join(TOPICS)}")
        for key in ("prompt", "explain", "unit"):
            if key in raw and not _nonempty(raw[key]):
                self.fail(key, "must be a non-empty string")
        if "source" in raw:
            self._check_source(raw["source"])
        if "lesson" in raw:
            self._check_lesson(raw["lesson"])
        options: tuple[Option, ...] = ()
        if kind == "numeric":
            self._check_numeric()
        elif "options" in raw:
            options = self._check_options(kind)
        if kind == "predict" and "scenario" in raw and raw["scenario"] not in SCENARIOS:
            self.fail("scenario", f"{raw['scenario']!r} is not one of {', '.join(SCENARIOS)}")
        if self.problems:
            return None
        return Item(
            id=str(raw.get("id")),
            topic=str(topic),  # required, and one of TOPICS: checked above
            type=kind,
            prompt=raw["prompt"].strip(),
            lesson=raw["lesson"].strip(),
            options=options,
            explain=raw["explain"].strip() if "explain" in raw else None,
            answer=float(raw["answer"]) if kind == "numeric" else None,
            tolerance=float(raw["tolerance"]) if kind == "numeric" else None,
            unit=raw["unit"].strip() if "unit" in raw else None,
            scenario=raw.get("scenario"),
            source=raw["source"].strip(),
        )

    def _check_source(self, source: object) -> None:
        if not _nonempty(source):
            self.fail("source", "must be a non-empty string naming where the answer comes from")
            return
        for part in (p.strip() for p in source.split(";")):
            if not SOURCE_PART.match(part):
                self.fail("source", f"{part!r} must look like '<repo> <path>', '<repo>#<number>' "
                                    f"(repo one of {', '.join(SOURCE_REPOS)}), 'seed: ...' or 'lab: ...'")

    def _check_lesson(self, link: object) -> None:
        if not isinstance(link, str) or "#" not in link or not all(link.split("#", 1)):
            self.fail("lesson", f"{link!r} must look like 'lesson-id#heading-anchor'")
            return
        if self.lessons is not None:
            try:
                resolve_link(link, self.lessons)
            except LessonLinkError as exc:
                self.fail("lesson", str(exc))

    def _check_numeric(self) -> None:
        if "answer" in self.raw and not _is_number(self.raw["answer"]):
            self.fail("answer", "must be a number")
        tol = self.raw.get("tolerance")
        if "tolerance" in self.raw and not (_is_number(tol) and tol >= 0):
            self.fail("tolerance", "must be a number >= 0")

    def _check_options(self, kind: str) -> tuple[Option, ...]:
        raw_options = self.raw["options"]
        if not isinstance(raw_options, list) or len(raw_options) < 2:
            self.fail("options", "must be a list of at least 2 options")
            return ()
        allowed = {"text", "correct", "explain"} | ({"outcome"} if kind == "predict" else set())
        options: list[Option] = []
        texts: dict[str, int] = {}
        for i, opt in enumerate(raw_options):
            where = f"options[{i}]"
            if not isinstance(opt, dict):
                self.fail(where, "must be a mapping with text, correct, explain")
                continue
            for key in sorted(allowed - set(opt)):
                self.fail(f"{where}.{key}", "required")
            for key in sorted(set(opt) - allowed):
                self.fail(f"{where}.{key}", f"not allowed on {kind} options")
            text, correct, explain = opt.get("text"), opt.get("correct"), opt.get("explain")
            if "text" in opt and not _nonempty(text):
                self.fail(f"{where}.text", "must be a non-empty string")
            elif _nonempty(text):
                norm = text.strip().lower()
                if norm in texts:
                    self.fail(f"{where}.text", f"same text as options[{texts[norm]}]")
                texts.setdefault(norm, i)
            if "correct" in opt and not isinstance(correct, bool):
                self.fail(f"{where}.correct", "must be true or false")
            if "explain" in opt and not _nonempty(explain):
                self.fail(f"{where}.explain", "must be a non-empty string: every option says why")
            outcome = opt.get("outcome")
            if kind == "predict" and "outcome" in opt and outcome not in OUTCOMES:
                self.fail(f"{where}.outcome", f"{outcome!r} is not one of {', '.join(OUTCOMES)}")
            if _nonempty(text) and isinstance(correct, bool) and _nonempty(explain):
                options.append(Option(i, text.strip(), correct, explain.strip(), outcome if kind == "predict" else None))
        n_correct = sum(1 for o in raw_options if isinstance(o, dict) and o.get("correct") is True)
        if kind in ("single", "predict") and n_correct != 1:
            self.fail("options", f"{kind} items need exactly one correct option, found {n_correct}")
        # Any count from one to all is allowed, so the number of right boxes gives nothing away.
        if kind == "multiple" and n_correct < 1:
            self.fail("options", f"multiple items need at least 1 correct option, found {n_correct}")
        return tuple(options)


def _item_label(raw: object, index: int) -> str:
    item_id = raw.get("id") if isinstance(raw, dict) else None
    return f"'{item_id}'" if isinstance(item_id, str) and item_id else f"#{index}"


def validate_items(raw_items: object, lessons: Iterable[Lesson] | None = None) -> tuple[list[Item], list[InvalidField]]:
    """Check the parsed 'items' list; returns the good items and all problems."""
    lesson_list = list(lessons) if lessons is not None else None
    if not isinstance(raw_items, list) or not raw_items:
        return [], [InvalidField("", "items", "must be a non-empty list of items")]
    items: list[Item] = []
    problems: list[InvalidField] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(raw_items):
        label = _item_label(raw, index)
        if not isinstance(raw, dict):
            problems.append(InvalidField(label, "item", "must be a mapping"))
            continue
        item_id = raw.get("id")
        id_ok = False
        if not isinstance(item_id, str) or not ID_PATTERN.match(item_id):
            problems.append(InvalidField(label, "id", f"{item_id!r} must be lowercase letters, digits and single '-'"))
        elif item_id in seen:
            problems.append(InvalidField(label, "id", f"duplicate id (first used by item #{seen[item_id]})"))
        else:
            seen[item_id] = index
            id_ok = True
        checker = _ItemChecker(raw, label, lesson_list)
        item = checker.check()
        problems.extend(checker.problems)
        if item is not None and id_ok:
            items.append(item)
    return items, problems


def load_bank(path: Path | str = QUIZ_DIR / "bank.yaml", lessons: Iterable[Lesson] | None = None) -> Bank:
    """Read and validate the bank; lesson links are resolved only when lessons are given."""
    path = Path(path)
    try:
        data = yaml_text.parse(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BankError(path, [InvalidField("", "file", "not found")]) from None
    except yaml.YAMLError as exc:
        raise BankError(path, [InvalidField("", "file", f"not valid YAML: {exc}")]) from exc
    if not isinstance(data, dict) or "items" not in data:
        raise BankError(path, [InvalidField("", "items", "the file must be a mapping with an 'items' list")])
    problems = [InvalidField("", key, "unknown top-level key (only 'items')") for key in sorted(set(data) - {"items"}, key=str)]
    items, item_problems = validate_items(data["items"], lessons)
    problems.extend(item_problems)
    if problems:
        raise BankError(path, problems)
    return Bank(tuple(items), path)
