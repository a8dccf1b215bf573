"""What a generation run sends: requests with their arrival times, prompts and lengths, seeded.

Arrivals follow a Poisson process (exponential gaps with the given mean), the first at 0 s; each
request asks for a length drawn uniformly from min_tokens..max_tokens. The same workload and
seed plan the same requests, so two deployments can be compared on identical traffic.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.generation.engine.tokens import MAX_TOKENS_LIMIT, PROMPT_LENGTH, VOCAB
from app.lab.problems import LabError, Problem
from app.lab.scenario.ids import unique_ids

MAX_REQUESTS = 64
MAX_GAP_MS = 10_000.0


@dataclass(frozen=True)
class PlannedRequest:
    index: int  # position in the workload, 0-based, in arrival order
    tag: int  # the client's own tag (TAG input), unique across runs and processes
    arrival_s: float  # planned send time, seconds after the run's start
    prompt: tuple[int, ...]  # four ids for the generator; any length for the paged engine
    max_tokens: int


@dataclass(frozen=True)
class Workload:
    requests: int = 8
    mean_gap_ms: float = 40.0
    min_tokens: int = 2
    max_tokens: int = 16
    seed: int = 0

    def problems(self) -> list[Problem]:
        """Every reason this workload cannot run, as codes (words: app/generation/words.py)."""
        out = []
        if not 1 <= self.requests <= MAX_REQUESTS:
            out.append(Problem("gen_requests_range", {"low": 1, "high": MAX_REQUESTS, "value": self.requests}))
        if not 0.0 <= self.mean_gap_ms <= MAX_GAP_MS:
            out.append(Problem("gen_gap_range", {"low": 0, "high": int(MAX_GAP_MS), "value": self.mean_gap_ms}))
        if not 1 <= self.min_tokens <= self.max_tokens <= MAX_TOKENS_LIMIT:
            out.append(Problem("gen_tokens_range", {"low": 1, "high": MAX_TOKENS_LIMIT, "min": self.min_tokens,
                                                    "max": self.max_tokens}))
        return out

    def check(self) -> None:
        problems = self.problems()
        if problems:
            raise LabError(problems)

    def plan(self, tags: Sequence[int] | None = None) -> list[PlannedRequest]:
        """The requests in arrival order. Pure when `tags` is given; otherwise fresh unique tags
        are drawn (app/lab/scenario/ids.py), so two runs never share one."""
        self.check()
        if tags is not None and len(tags) != self.requests:
            raise ValueError(f"{self.requests} requests need {self.requests} tags, got {len(tags)}")
        tags = list(tags) if tags is not None else unique_ids(self.requests)
        rng = np.random.default_rng(self.seed)
        gaps = rng.exponential(self.mean_gap_ms / 1000.0, size=self.requests) if self.mean_gap_ms else np.zeros(self.requests)
        gaps[0] = 0.0
        arrivals = np.cumsum(gaps)
        prompts = rng.integers(0, VOCAB, size=(self.requests, PROMPT_LENGTH))
        lengths = rng.integers(self.min_tokens, self.max_tokens + 1, size=self.requests)
        return [
            PlannedRequest(index=i, tag=int(tags[i]), arrival_s=round(float(arrivals[i]), 6),
                           prompt=(int(prompts[i, 0]), int(prompts[i, 1]), int(prompts[i, 2]), int(prompts[i, 3])),
                           max_tokens=int(lengths[i]))
            for i in range(self.requests)
        ]
