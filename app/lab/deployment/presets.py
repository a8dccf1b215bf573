"""The named cases that matter: a deployment plus the traffic that shows what it does.

Quiz "predict, then verify" items, the lab's preset buttons, the CLI and the tests all
run these same definitions.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.lab.deployment.deployments import LabSettings
from app.lab.problems import LabError
from app.lab.scenario.scenario import Scenario, random_texts
from app.lab.scenario.transport import Transport
from app.lab.traffic import driver

if TYPE_CHECKING:
    from app.lab.deployment.deployer import Applied, Deployer
    from app.lab.progress import Progress


@dataclass(frozen=True)
class Traffic:
    sessions: int = 8
    chunks: int = 24  # chunks each session sends: one symbol of its utterance each
    think_ms: float = 20.0
    jitter_ms: float = 10.0
    seed: int = 7
    spread_think: bool = False  # think times spread 5..65 ms across sessions, so slots idle at different moments
    transport: str = Transport.HTTP.value  # a Transport value, kept as text for the URL
    in_flight: int = 1  # chunks a session sends before earlier answers are back

    def scenario(self, model: str, texts: list[str] | None = None) -> Scenario:
        texts = texts or random_texts(self.sessions, self.chunks, self.seed)
        think = [5.0 + 60.0 * i / max(1, len(texts) - 1) for i in range(len(texts))] if self.spread_think else None
        return Scenario(
            model=model,
            texts=texts,
            think_ms=self.think_ms,
            jitter_ms=self.jitter_ms,
            seed=self.seed,
            think_ms_by_session=think,
            transport=Transport.parse(self.transport),
            in_flight=self.in_flight,
        )


@dataclass(frozen=True)
class Preset:
    """A named case; its title and why are words at the edge (app/text/presets.py, by name)."""

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


def run_preset(server: driver.ServerView, deployer: Deployer, name: str, owner: str = "presets", traffic: Traffic | None = None,
               progress: Progress | None = None) -> tuple[Applied, driver.RunResult]:
    """Deploy the preset's settings (reusing a shipped model when it matches) and run its traffic."""
    preset = get(name)
    applied = deployer.apply(preset.settings, owner=owner)
    scenario = (traffic or preset.traffic).scenario(applied.model)
    return applied, driver.run(server, scenario, progress=progress)
