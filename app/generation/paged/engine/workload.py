"""What a paged-engine run sends: requests that share a system prompt, with a spread of prompt
and answer lengths, and optionally one long prompt that arrives among running generations. Seeded:
the same workload plans the same requests, so two settings compare on identical traffic.

Each prompt is the system prompt followed by the request's own tokens (ids in the toy model's
vocabulary of 256). Arrivals follow a Poisson process (exponential gaps with the given mean),
the first at 0 s; the long prompt, when asked for, arrives `long_at_ms` after the start.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.generation.engine.workload import PlannedRequest
from app.lab.problems import LabError, Problem
from app.lab.scenario.ids import unique_ids

VOCAB = 256
# Ranges a learner may choose, read by the widgets, the URL and the checks.
RANGES: dict[str, tuple[float, float]] = {
    "requests": (1, 32),
    "mean_gap_ms": (0, 2000),
    "system_tokens": (0, 256),
    "min_user_tokens": (1, 128),
    "max_user_tokens": (1, 128),
    "min_answer_tokens": (1, 128),
    "max_answer_tokens": (1, 128),
    "long_prompt_tokens": (0, 448),
    "long_at_ms": (0, 10_000),
}


@dataclass(frozen=True)
class PagedWorkload:
    requests: int = 8
    mean_gap_ms: float = 30.0
    system_tokens: int = 32  # the system prompt every request starts with (0: none)
    min_user_tokens: int = 4
    max_user_tokens: int = 24
    min_answer_tokens: int = 8
    max_answer_tokens: int = 32
    long_prompt_tokens: int = 0  # one more request with a prompt this long (0: none)
    long_at_ms: float = 100.0
    seed: int = 0

    def problems(self) -> list[Problem]:
        """Every reason this workload cannot run, as codes (their words sit in the paged feature's words module)."""
        out = []
        for name, (low, high) in RANGES.items():
            value = getattr(self, name)
            if not low <= value <= high:
                out.append(Problem("kv_workload_range", {"setting": name, "low": low, "high": high, "value": value}))
        if self.min_user_tokens > self.max_user_tokens or self.min_answer_tokens > self.max_answer_tokens:
            out.append(Problem("kv_workload_order", {}))
        return out

    def check(self) -> None:
        problems = self.problems()
        if problems:
            raise LabError(problems)

    @property
    def total_requests(self) -> int:
        return self.requests + (1 if self.long_prompt_tokens else 0)

    def plan(self, tags: Sequence[int] | None = None) -> list[PlannedRequest]:
        """The requests in arrival order (the long prompt, if any, is the last index). Pure when
        `tags` is given; otherwise fresh unique tags are drawn, so two runs never share one."""
        self.check()
        total = self.total_requests
        if tags is not None and len(tags) != total:
            raise ValueError(f"{total} requests need {total} tags, got {len(tags)}")
        tags = list(tags) if tags is not None else unique_ids(total)
        rng = np.random.default_rng(self.seed)
        system = [int(t) for t in rng.integers(0, VOCAB, size=self.system_tokens)]
        gaps = rng.exponential(self.mean_gap_ms / 1000.0, size=self.requests) if self.mean_gap_ms else np.zeros(self.requests)
        gaps[0] = 0.0
        arrivals = np.cumsum(gaps)
        out = []
        for i in range(self.requests):
            own = [int(t) for t in rng.integers(0, VOCAB, size=int(rng.integers(self.min_user_tokens, self.max_user_tokens + 1)))]
            answer = int(rng.integers(self.min_answer_tokens, self.max_answer_tokens + 1))
            out.append(PlannedRequest(index=i, tag=int(tags[i]), arrival_s=round(float(arrivals[i]), 6),
                                      prompt=tuple(system + own), max_tokens=answer))
        if self.long_prompt_tokens:
            long_prompt = tuple(int(t) for t in rng.integers(0, VOCAB, size=self.long_prompt_tokens))
            out.append(PlannedRequest(index=self.requests, tag=int(tags[self.requests]),
                                      arrival_s=round(self.long_at_ms / 1000.0, 6), prompt=long_prompt,
                                      max_tokens=self.min_answer_tokens))
        out.sort(key=lambda p: (p.arrival_s, p.index))
        return out
