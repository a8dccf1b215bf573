"""The named cases that matter: a deployment plus the traffic that shows what it does.

Quiz "predict, then verify" items, the lab's preset buttons, the CLI and the tests all
run these same definitions.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.lab.deployment import LabSettings
from app.lab.problems import LabError
from app.lab.records import RunResult, Traffic
from app.lab.traffic import ServerView
from app.recogniser.engine import driver

if TYPE_CHECKING:
    from app.lab.deployment import Applied, Deployer
    from app.lab.progress import Progress


@dataclass(frozen=True)
class Preset:
    """A named case; its title and why are words at the edge (app/recogniser/words/presets.py, by name)."""

    name: str
    settings: LabSettings
    traffic: Traffic = field(default_factory=Traffic)
    expect: str = "intact"  # what the server really does: "intact" or "corrupted"


PRESETS = {
    p.name: p
    for p in (
        Preset(
            "the_mistake",
            LabSettings(scheduler="dynamic", instances=2, slots=4, queue_delay_us=2000, state_key="slot"),
            expect="corrupted",
        ),
        Preset(
            "the_fix",
            LabSettings(scheduler="direct", instances=2, slots=4, queue_delay_us=0, state_key="slot"),
        ),
        Preset(
            "oldest_right",
            LabSettings(scheduler="oldest", instances=2, slots=4, queue_delay_us=2000, state_key="corrid"),
        ),
        Preset(
            "oldest_wrong",
            LabSettings(scheduler="oldest", instances=2, slots=4, queue_delay_us=2000, state_key="slot"),
            expect="corrupted",
        ),
        Preset(
            "forgot_ready",
            LabSettings(scheduler="direct", instances=2, slots=4, queue_delay_us=0, state_key="slot", honour_ready=False),
            traffic=Traffic(spread_think=True),
            expect="corrupted",
        ),
    )
}


def get(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise LabError("preset_unknown", value=name, choices=", ".join(PRESETS)) from None


def run_preset(server: ServerView, deployer: Deployer, name: str, traffic: Traffic | None = None,
               progress: Progress | None = None) -> tuple[Applied, RunResult]:
    """Deploy the preset's settings (reusing a shipped model when it matches) and run its traffic."""
    preset = get(name)
    applied = deployer.apply(preset.settings)
    scenario = (traffic or preset.traffic).scenario(applied.model)
    return applied, driver.run(server, scenario, progress=progress)
