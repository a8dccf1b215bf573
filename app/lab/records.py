"""The records a run passes between the engine's stages, each defined here once.

`Traffic` is what a case sends (it builds the run's Scenario), `SessionPlan` one session as
the run planned it, and `RunResult` everything a run recorded. The stages that make them
(traffic, deployment) and those that read them (judgement, exercises, cases) all import them
from here, which sits below them all: it needs only the scenario and the run's log.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from app.lab.observation import RunLog
from app.lab.scenario.scenario import Scenario, random_texts
from app.lab.scenario.transport import Transport


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


@dataclass
class SessionPlan:
    index: int
    text: str
    symbols: list[int]
    tag: int
    corrid: int | str
    think_ms: float
    start_s: float
    send_count: int  # chunks it will send (fewer than len(symbols) when it vanishes)
    url: str
    audio: npt.NDArray[np.float32] | None = field(repr=False, default=None)


@dataclass
class RunResult:
    run_id: str
    scenario: Scenario
    plans: list[SessionPlan]
    requests: pd.DataFrame  # one row per request sent
    sessions: pd.DataFrame  # one row per session with its verdict
    server: dict[str, Any]  # statistics and metrics deltas (server_stats.delta: why untyped)
    traced: bool
    wall_s: float
    log: RunLog | None = None  # the server log lines that belong to this run
    state_cells: pd.DataFrame | None = None  # the model's own state-cell metrics during the run

    @property
    def all_intact(self) -> bool:
        return bool((self.sessions["verdict"] == "intact").all())
