"""The presenter's generation demo (no Streamlit, no words): static batching against in-flight batching on the
same seeded workload, for a class to predict, vote on and see.

It is the generation family of the presenter's demos (the recogniser family is app/recogniser/demo.py): the same
five steps, with the generator's two configs as the change, the lab page's compare question (words:
app/generation/words.py QUESTIONS/ANSWERS["compare"]) as the question, both modes run by app/generation/runs.py
on one planned workload, and the answer judged from those runs' numbers by runs.answer, never stored here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.generation import runs
from app.generation.setup import PRESETS, GenSetup
from app.lab.deployment import DiffLine, changed_lines, config_lines, diff_lines

if TYPE_CHECKING:
    from app.lab.server import LabServer

FAMILY = "generation"
DIFF_MODEL = "gen_demo"  # the name both configs carry in the diff, so only settings differ
SIDES = ("before", "after")
KIND = "compare"  # runs.answer's question: which mode gave the median request its first token sooner
OPTIONS = ("static", "inflight", "same")  # runs.answer's codes for KIND, in the order the class reads them


@dataclass(frozen=True)
class GenDemo:
    """before -> after are batching modes of one set-up; the class predicts which gives first tokens sooner."""

    name: str
    setup: GenSetup
    before: str = "static"
    after: str = "inflight"
    options: tuple[str, ...] = OPTIONS

    def mode(self, side: str) -> str:
        return self.before if side == "before" else self.after

    def modes(self) -> tuple[str, ...]:
        return tuple(self.mode(side) for side in SIDES)


DEMOS = {
    d.name: d
    for d in (
        # One block: the dynamic batcher (a batch generates to its end in one execution) swapped for the sequence
        # batcher with iterative sequences (one step per execution); long and short requests arriving close together.
        GenDemo("static_inflight", setup=PRESETS["long_and_short"]),
    )
}


def config_text(demo: GenDemo, side: str) -> list[str]:
    settings = runs.settings_for(demo.setup, demo.mode(side))
    return config_lines(settings.to_config(DIFF_MODEL))


def config_diff(demo: GenDemo, context: int = 2) -> list[DiffLine]:
    """The generator config's lines that change from static to in flight, with `context` lines around each."""
    return diff_lines(config_text(demo, "before"), config_text(demo, "after"), context)


def changed(demo: GenDemo) -> tuple[list[str], list[str]]:
    """(removed, added) config lines, without context."""
    return changed_lines(config_diff(demo, context=0))


def run_side_by_side(server: LabServer, demo: GenDemo) -> dict[str, runs.GenRun]:
    """Both modes, one after the other, on the same planned workload (same arrivals, lengths and prompts)."""
    planned = runs.plan(demo.setup)
    return {side: runs.run(server, demo.setup, demo.mode(side), planned) for side in SIDES}


@dataclass(frozen=True)
class Reveal:
    seen: str  # runs.answer's code: what the runs did
    right: tuple[str, ...]  # the options that held
    votes: int
    share_right: float | None  # None with no votes


def reveal(demo: GenDemo, done: dict[str, runs.GenRun], tally: dict[str, int]) -> Reveal:
    """Judge the options against both runs' numbers (runs.answer, as the lab page judges its learners)."""
    seen = runs.answer(KIND, [done[side] for side in SIDES])
    right = tuple(o for o in demo.options if o == seen)
    total = sum(int(tally.get(o, 0)) for o in demo.options)
    return Reveal(seen=seen, right=right, votes=total,
                  share_right=sum(int(tally.get(o, 0)) for o in right) / total if total else None)
