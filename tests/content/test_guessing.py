"""Can a test-wise learner who knows no Triton beat blind chance on the quiz?

Plays surface strategies (longest option, shortest, most hedged, fewest absolute
words, ruling out the shortest or the longest, the most common raw key position,
and for multi-select: options above or below the median length, the most hedged
half, every box, the positions most often correct) on the whole bank and on every
lesson check, scoring each with the app's own grader. A strategy that beats blind
chance by more than MARGIN points means the wording gives the key away.

Blind chance, stated exactly:
- single and predict items, lesson checks: one option picked uniformly, so 1/n
  per question, averaged over questions;
- multi-select: a uniformly random NON-EMPTY subset of the options (the quiz page
  refuses an empty answer), scored with app.quiz.grading (partial credit), so the
  baseline uses the same scoring as the strategies.
Ties inside a strategy (two options of equal length) are broken uniformly at
random, so the strategy's score is the expected score over that tie-break.

`pytest -s tests/content/test_guessing.py` prints the table;
`.venv/bin/python -m tests.content.test_guessing [REV ...]` prints it for the
working tree, or for git revisions (e.g. a commit before the bank was rewritten).
"""
from __future__ import annotations

import itertools
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.content import yaml_text
from app.content.lessons import Lesson, load_lessons
from app.quiz.bank import Item, Option
from app.quiz.grading import grade

REPO = Path(__file__).resolve().parents[2]
MARGIN = 10.0  # percentage points above blind chance that a strategy may reach

# Words that soften or qualify a claim; "pick the most qualified option" is the
# classic test-wise move, because authors qualify the key to make it exactly true.
HEDGES = frozenset({
    "may", "might", "can", "could", "usually", "often", "sometimes", "some", "typically",
    "generally", "likely", "probably", "possibly", "mostly", "unless", "until", "but",
    "although", "though", "while", "if", "when", "whether", "depends", "only", "still",
})
# Absolute words; "avoid the option that says always or never" is the mirror move.
ABSOLUTES = frozenset({
    "always", "never", "every", "all", "none", "nothing", "must", "cannot", "any",
    "no", "whatever", "everything", "impossible", "guaranteed",
})
# Openers that used to mark wrong options ("Nothing: ...", "Agreed, ...", "They are right").
DISMISSIVE_OPENERS = ("nothing", "agreed", "disagreed", "yes", "no", "none", "they are right", "correct", "wrong")
_WORD = re.compile(r"[a-z0-9_']+")

Group = str  # "bank single" | "bank multiple" | "lesson checks"


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def hedge_count(text: str) -> int:
    return sum(w in HEDGES for w in _words(text))


def absolute_count(text: str) -> int:
    return sum(w in ABSOLUTES for w in _words(text))


def dismissive(text: str) -> bool:
    """Does the option open with a verdict word ("Nothing:", "Yes,", "They are right ...")?"""
    head = re.split(r"[:,;.]", text.lower(), maxsplit=1)[0].strip()
    return head in DISMISSIVE_OPENERS or any(head.startswith(o + " ") for o in DISMISSIVE_OPENERS if " " in o)


# ------------------------------------------------------------------ questions


def items_from_raw_bank(raw_items: Iterable[dict[str, Any]]) -> list[Item]:
    """Choice items of a bank file as parsed YAML (numeric items have no options to guess).

    Read from the raw YAML rather than load_bank, so an older revision whose schema
    the loader no longer accepts can still be measured.
    """
    items = []
    for raw in raw_items:
        if raw.get("type") == "numeric":
            continue
        options = tuple(
            Option(i, str(o["text"]).strip(), bool(o["correct"]), str(o.get("explain", "")))
            for i, o in enumerate(raw["options"])
        )
        kind = "multiple" if raw["type"] == "multiple" else "single"  # predict grades like single
        items.append(Item(raw["id"], raw.get("topic", ""), kind, raw.get("prompt", ""), raw.get("lesson", ""), options))
    return items


def items_from_lessons(lessons: Iterable[Lesson]) -> list[Item]:
    """Every lesson's end-of-lesson checks, as single-answer items."""
    items = []
    for lesson in lessons:
        for n, check in enumerate(lesson.self_checks):
            options = tuple(Option(i, text, i == check.answer, check.explain) for i, text in enumerate(check.options))
            items.append(Item(f"{lesson.id}/check-{n}", "", "single", check.question, lesson.id, options))
    return items


# ----------------------------------------------------------------- strategies

# A strategy maps an item to a probability distribution over answers.
Answer = Any  # an option key (single) or a tuple of keys (multiple)
Strategy = Callable[[Item], list[tuple[float, Answer]]]


def _pick_best(score: Callable[[Option], float]) -> Strategy:
    """Pick the option that maximises score; ties split uniformly."""
    def play(item: Item) -> list[tuple[float, Answer]]:
        best = max(score(o) for o in item.options)
        tied = [o.key for o in item.options if score(o) == best]
        return [(1 / len(tied), key) for key in tied]
    return play


def _pick_above_median(score: Callable[[Option], float]) -> Strategy:
    """Tick every option scoring above the median; if none does, tick the top-scoring ones."""
    def play(item: Item) -> list[tuple[float, Answer]]:
        values = [score(o) for o in item.options]
        median = statistics.median(values)
        picked = [o.key for o in item.options if score(o) > median]
        if not picked:
            picked = [o.key for o in item.options if score(o) == max(values)]
        return [(1.0, tuple(picked))]
    return play


def _rule_out(score: Callable[[Option], float]) -> Strategy:
    """Eliminate the option that maximises score, then pick uniformly among the rest."""
    def play(item: Item) -> list[tuple[float, Answer]]:
        worst = max(score(o) for o in item.options)
        rest = [o.key for o in item.options if score(o) != worst] or [o.key for o in item.options]
        return [(1 / len(rest), key) for key in rest]
    return play


def _tick_all(item: Item) -> list[tuple[float, Answer]]:
    return [(1.0, tuple(o.key for o in item.options))]


def _fixed_positions(positions: frozenset[int], multiple: bool) -> Strategy:
    """Choose by raw position in the bank file: one position (single) or a set (multiple)."""
    def play(item: Item) -> list[tuple[float, Answer]]:
        keys = [o.key for o in item.options]
        if multiple:
            picked = tuple(k for k in keys if k in positions) or (keys[-1],)
            return [(1.0, picked)]
        (position,) = positions
        return [(1.0, keys[min(position, len(keys) - 1)])]
    return play


def _length(o: Option) -> float:
    return len(o.text)


SINGLE_STRATEGIES: dict[str, Strategy] = {
    "longest option": _pick_best(_length),
    "shortest option": _pick_best(lambda o: -len(o.text)),
    "most hedged option": _pick_best(lambda o: hedge_count(o.text)),
    "fewest absolute words": _pick_best(lambda o: -absolute_count(o.text)),
    "anything but the shortest": _rule_out(lambda o: -len(o.text)),
    "anything but the longest": _rule_out(_length),
    "rule out verdict openers": _rule_out(lambda o: float(dismissive(o.text))),
}
MULTIPLE_STRATEGIES: dict[str, Strategy] = {
    "options above median length": _pick_above_median(_length),
    "options below median length": _pick_above_median(lambda o: -len(o.text)),
    "most hedged options": _pick_above_median(lambda o: hedge_count(o.text)),
    "fewest absolute words": _pick_above_median(lambda o: -absolute_count(o.text)),
    "tick every box": _tick_all,
}


def expected_score(item: Item, strategy: Strategy) -> float:
    return sum(p * grade(item, list(a) if isinstance(a, tuple) else a).score for p, a in strategy(item))


def chance_score(item: Item) -> float:
    """Blind chance as the module docstring defines it."""
    if item.type == "single":
        return 1 / len(item.options)
    keys = [o.key for o in item.options]
    subsets = [c for r in range(1, len(keys) + 1) for c in itertools.combinations(keys, r)]
    return sum(grade(item, list(s)).score for s in subsets) / len(subsets)


def best_position(items: Sequence[Item]) -> tuple[str, Strategy]:
    """Where keys sit in the file, exploited: the raw order must not leak the answer.

    single: always the position that is most often the key; multiple: tick every
    position that is correct in more than half of the items that have it.
    """
    longest = max(len(i.options) for i in items)
    if items[0].type == "single":
        scored = [(sum(expected_score(i, _fixed_positions(frozenset({p}), False)) for i in items), p)
                  for p in range(longest)]
        _, position = max(scored)
        return f"always raw position {position}", _fixed_positions(frozenset({position}), False)
    share = {
        p: statistics.mean(i.options[p].correct for i in items if len(i.options) > p) for p in range(longest)
    }
    positions = frozenset(p for p, s in share.items() if s > 0.5)
    label = "raw positions " + ",".join(map(str, sorted(positions))) if positions else "last raw position"
    return label, _fixed_positions(positions, True)


# --------------------------------------------------------------------- report


@dataclass(frozen=True)
class Row:
    group: Group
    strategy: str
    n: int
    chance: float  # percent
    score: float  # percent

    @property
    def margin(self) -> float:
        return self.score - self.chance


def play_group(group: Group, items: Sequence[Item]) -> list[Row]:
    if not items:
        return []
    strategies = dict(SINGLE_STRATEGIES if items[0].type == "single" else MULTIPLE_STRATEGIES)
    name, strategy = best_position(items)
    strategies[name] = strategy
    chance = 100 * statistics.mean(chance_score(i) for i in items)
    return [
        Row(group, label, len(items), chance, 100 * statistics.mean(expected_score(i, s) for i in items))
        for label, s in strategies.items()
    ]


def play_all(bank_items: Sequence[Item], check_items: Sequence[Item]) -> list[Row]:
    return (
        play_group("bank single", [i for i in bank_items if i.type == "single"])
        + play_group("bank multiple", [i for i in bank_items if i.type == "multiple"])
        + play_group("lesson checks", list(check_items))
    )


def table(rows: Sequence[Row], title: str) -> str:
    lines = [title, f"{'group':<14} {'strategy':<30} {'n':>3} {'chance %':>9} {'strategy %':>11} {'margin':>7}"]
    for r in rows:
        flag = "  <-- over" if r.margin > MARGIN else ""
        lines.append(f"{r.group:<14} {r.strategy:<30} {r.n:>3} {r.chance:>9.1f} {r.score:>11.1f} {r.margin:>+7.1f}{flag}")
    return "\n".join(lines)


# ---------------------------------------------------------------- what to play


def working_tree() -> tuple[list[Item], list[Item]]:
    raw = yaml_text.parse((REPO / "quiz" / "bank.yaml").read_text(encoding="utf-8"))["items"]
    return items_from_raw_bank(raw), items_from_lessons(load_lessons(REPO / "lessons"))


def at_revision(rev: str) -> tuple[list[Item], list[Item]]:
    """The bank and lesson checks as committed at rev (for before/after figures)."""
    def show(path: str) -> str:
        return subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:{path}"],
                              check=True, capture_output=True, text=True).stdout
    raw = yaml_text.parse(show("quiz/bank.yaml"))["items"]
    names = subprocess.run(["git", "-C", str(REPO), "ls-tree", "--name-only", rev, "lessons/"],
                           check=True, capture_output=True, text=True).stdout.split()
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            if name.endswith(".md"):
                (Path(folder) / Path(name).name).write_text(show(name), encoding="utf-8")
        lessons = load_lessons(folder)
    return items_from_raw_bank(raw), items_from_lessons(lessons)


# ---------------------------------------------------------------------- tests


@pytest.fixture(scope="module")
def rows() -> list[Row]:
    found = play_all(*working_tree())
    print("\n" + table(found, "Guessing strategies on the working tree (points are percent of the maximum score)"))
    return found


def test_strategies_cover_bank_and_lesson_checks(rows):
    groups = {r.group for r in rows}
    assert groups == {"bank single", "bank multiple", "lesson checks"}, groups


@pytest.mark.parametrize("group", ["bank single", "bank multiple", "lesson checks"])
def test_no_strategy_beats_chance_by_more_than_the_margin(rows, group):
    over = [r for r in rows if r.group == group and r.margin > MARGIN]
    assert not over, "\n" + table(over, f"{group}: these strategies beat blind chance by more than {MARGIN:g} points")


def test_multiple_items_vary_their_number_of_correct_options():
    bank, _ = working_tree()
    counts = {len(i.correct_keys) for i in bank if i.type == "multiple"}
    ratios = {len(i.correct_keys) == len(i.options) for i in bank if i.type == "multiple"}
    assert 1 in counts and True in ratios, f"need items with one correct option and with all correct: {sorted(counts)}"
    assert len(counts) >= 3, f"correct-option counts used: {sorted(counts)}"


def test_no_bank_option_opens_with_a_verdict_word():
    # "Nothing: ...", "Agreed ...", "They are right ..." used to mark wrong options.
    bank, _ = working_tree()
    found = [f"{i.id}: {o.text}" for i in bank for o in i.options if dismissive(o.text)]
    assert not found, found


def test_the_strategies_do_detect_a_giveaway():
    # A bank whose key is always the longest, most hedged option must fail loudly,
    # otherwise the test above could never fail.
    def q(n: int) -> Item:
        opts = (
            Option(0, "Short wrong", False, "."),
            Option(1, "Usually true, but only when the window may still be open", True, "."),
            Option(2, "Also wrong", False, "."),
        )
        return Item(f"q{n}", "", "single", "?", "", opts)
    found = play_group("bank single", [q(n) for n in range(10)])
    by_name = {r.strategy: r for r in found}
    assert by_name["longest option"].margin > MARGIN
    assert by_name["most hedged option"].margin > MARGIN
    assert by_name["always raw position 1"].score == 100.0


def test_chance_for_multiple_uses_the_graders_partial_credit():
    # 2 options, 1 correct: subsets {right} -> 1, {wrong} -> 0, {both} -> 0; mean 1/3.
    item = Item("m", "", "multiple", "?", "", (Option(0, "a", True, "."), Option(1, "b", False, ".")))
    assert chance_score(item) == pytest.approx(1 / 3)


def main(argv: Sequence[str]) -> None:
    if not argv:
        print(table(play_all(*working_tree()), "working tree"))
    for rev in argv:
        print(table(play_all(*at_revision(rev)), f"git {rev}"))
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
