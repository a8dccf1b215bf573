"""The Presenter's paged-engine demo (no Streamlit, no words): the same requests on the paged engine
with plenty of KV blocks and with too few, for a class to predict, vote on and see.

It is the paged family of the Presenter's demos (beside the recogniser's, app/recogniser/demo.py,
and the generator's, app/generation/demo.py): the same five steps, the engine's two configs as the
change, the engine mode's compare question (words: app/generation/paged/words.py
QUESTIONS/ANSWERS["compare"]), both settings run by app/generation/paged/runs.py on one workload,
and the answer judged from those runs' numbers by runs.answer, never stored here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.generation.paged import runs
from app.generation.paged.setup import PRESETS, SIDES, PagedSetup
from app.lab.deployment import DiffLine, changed_lines, config_lines, diff_lines

if TYPE_CHECKING:
    from app.lab.traffic import ServerView

FAMILY = "paged"
DIFF_MODEL = "kv_demo"  # the name both configs carry in the diff, so only settings differ
KIND = "compare"  # runs.answer's question: which setting gave the median request its first token sooner
OPTIONS = ("a", "b", "same")  # runs.answer's codes for KIND, in the order the class reads them
PRESENTER_SIDES = ("before", "after")  # the Presenter's names for setting A and setting B


@dataclass(frozen=True)
class KvDemo:
    """before -> after are setting A and setting B of one compare set-up."""

    name: str
    setup: PagedSetup
    options: tuple[str, ...] = OPTIONS


DEMOS = {
    d.name: d
    for d in (
        # One parameter: the cache cut from 64 blocks to 8 on the same requests, so memory, not the step, decides
        # how many generations run at once.
        KvDemo("kv_blocks", setup=PRESETS["too_few_blocks"]),
    )
}


def side_of(presenter_side: str) -> str:
    """The set-up's side ("a" or "b") a Presenter side ("before" or "after") shows."""
    return SIDES[PRESENTER_SIDES.index(presenter_side)]


def config_text(demo: KvDemo, presenter_side: str) -> list[str]:
    return config_lines(demo.setup.settings(side_of(presenter_side)).to_config(DIFF_MODEL))


def config_diff(demo: KvDemo, context: int = 2) -> list[DiffLine]:
    """The engine config's lines that change from setting A to setting B, with `context` lines around each."""
    return diff_lines(config_text(demo, "before"), config_text(demo, "after"), context)


def changed(demo: KvDemo) -> tuple[list[str], list[str]]:
    """(removed, added) config lines, without context."""
    return changed_lines(config_diff(demo, context=0))


def run_side_by_side(server: ServerView, demo: KvDemo) -> dict[str, runs.SideRun]:
    """Both settings, one after the other, on the same planned workload."""
    done = runs.run_setup(server, demo.setup)
    return dict(zip(PRESENTER_SIDES, done, strict=True))


@dataclass(frozen=True)
class Reveal:
    seen: str  # runs.answer's code: what the runs did
    right: tuple[str, ...]  # the options that held
    votes: int
    share_right: float | None  # None with no votes


def reveal(demo: KvDemo, done: dict[str, runs.SideRun], tally: dict[str, int]) -> Reveal:
    """Judge the options against both runs' numbers (runs.answer, as the lab judges its learners)."""
    seen = runs.answer(KIND, [done[side] for side in PRESENTER_SIDES])
    right = tuple(o for o in demo.options if o == seen)
    total = sum(int(tally.get(o, 0)) for o in demo.options)
    return Reveal(seen=seen, right=right, votes=total,
                  share_right=sum(int(tally.get(o, 0)) for o in right) / total if total else None)
