"""The presenter's core demos (no Streamlit, no words): two set-ups that differ in one setting, a question
about one of them, and the answer a real run gives.

Peer instruction runs ask, vote, reveal, discuss: the question and its options are codes from
app/recogniser/engine/judgement/prediction.py (words: app/recogniser/words/prediction.py and app/presenter/words.py); the right answer is
never stored here, it is what the server did when both set-ups ran the same traffic.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from app.lab.deployment import DiffLine, LabSettings, changed_lines, config_lines, diff_lines
from app.lab.records import RunResult, Traffic
from app.recogniser.engine import driver
from app.recogniser.engine.judgement import prediction
from app.recogniser.engine.presets import PRESETS

if TYPE_CHECKING:
    import pandas as pd

    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.server import LabServer

DIFF_MODEL = "asr_demo"  # the name both configs carry in the diff, so only settings differ
SIDES = ("before", "after")


@dataclass(frozen=True)
class Demo:
    """before -> after are preset names; `asks` is the side the class predicts."""

    name: str
    before: str
    after: str
    traffic: Traffic
    asks: str = "before"
    options: tuple[str, ...] = prediction.CHOICES

    def preset(self, side: str) -> str:
        return self.before if side == "before" else self.after

    def settings(self, side: str) -> LabSettings:
        return PRESETS[self.preset(side)].settings

    def scenario_traffic(self, sessions: int | None = None) -> Traffic:
        """The one traffic both sides get: same seed, same texts, same timing."""
        return self.traffic if sessions is None else replace(self.traffic, sessions=sessions)


DEMOS = {
    d.name: d
    for d in (
        # One parameter line: where the model keys its state under `oldest`.
        Demo("state_key", before="oldest_wrong", after="oldest_right", traffic=PRESETS["oldest_wrong"].traffic),
        # One parameter line: whether the model honours READY=0 padding rows.
        Demo("ready", before="forgot_ready", after="the_fix", traffic=PRESETS["forgot_ready"].traffic),
        # One block: the dynamic batcher swapped for the sequence batcher.
        Demo("scheduler", before="the_mistake", after="the_fix", traffic=PRESETS["the_mistake"].traffic),
    )
}
DEFAULT = "state_key"


def get(name: str | None) -> Demo:
    return DEMOS.get(name or DEFAULT, DEMOS[DEFAULT])


def config_text(settings: LabSettings) -> list[str]:
    return config_lines(settings.to_config(DIFF_MODEL))


def config_diff(demo: Demo, context: int = 2) -> list[DiffLine]:
    """The lines that change from before to after, with `context` lines around each change."""
    return diff_lines(config_text(demo.settings("before")), config_text(demo.settings("after")), context)


def changed(demo: Demo) -> tuple[list[str], list[str]]:
    """(removed, added) config lines, without context."""
    return changed_lines(config_diff(demo, context=0))


@dataclass
class Side:
    side: str
    model: str
    settings: LabSettings
    result: RunResult


def run_side_by_side(server: LabServer, deployer: Deployer, demo: Demo, sessions: int | None = None,
                     progress: Progress | None = None) -> dict[str, Side]:
    """Both set-ups, one after the other, on identical traffic (same seed and texts)."""
    traffic = demo.scenario_traffic(sessions)
    out = {}
    for side in SIDES:
        applied = deployer.apply(demo.settings(side))
        out[side] = Side(side, applied.model, demo.settings(side), driver.run(server, traffic.scenario(applied.model), progress=progress))
    return out


@dataclass(frozen=True)
class Reveal:
    outcome: str  # "intact" or "corrupted": what the asked side's run did
    seen: tuple[str, ...]  # verdict codes observed in that run (intact included when any was)
    right: tuple[str, ...]  # options that would have held (outcome and cause), from the run
    outcome_right: tuple[str, ...]  # options with the right outcome, cause aside
    votes: int
    share_right: float | None  # None with no votes
    share_outcome_right: float | None


def reveal(demo: Demo, sessions: pd.DataFrame, tally: dict[str, int]) -> Reveal:
    """Judge every option against the asked side's observed sessions (a RunResult.sessions)."""
    verdicts = {option: prediction.judge(option, sessions) for option in demo.options}
    right = tuple(o for o, v in verdicts.items() if v.code == prediction.HELD)
    outcome_right = tuple(o for o, v in verdicts.items() if v.held)
    total = sum(int(tally.get(o, 0)) for o in demo.options)
    share = (lambda options: sum(int(tally.get(o, 0)) for o in options) / total) if total else (lambda options: None)
    return Reveal(
        outcome=prediction.outcome_of(sessions),
        seen=tuple(sorted(set(sessions["verdict"]))),
        right=right,
        outcome_right=outcome_right,
        votes=total,
        share_right=share(right),
        share_outcome_right=share(outcome_right),
    )
