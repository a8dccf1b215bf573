"""The generation lab's engine mode set-up, declared once: the workload every run gets, the paged
engine's settings for side A and side B, and whether B runs too. URL keys, widget ranges and
validation are all derived from this declaration and the engine's own RANGES, so a copied link
reproduces the set-up and no range is written twice. Streamlit-free and word-free: the view
(app/generation/paged/view.py) draws it, tests and the Presenter's demo build it.

URL keys: `k_<workload field>`, `ka_<setting>` and `kb_<setting>`, and `k_compare`. The generator
lab's own keys (`g_*`, app/generation/setup.py) are untouched, so its old links keep working; which
lab a link opens is `g_lab` (absent: the generator, as before the engine existed).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, SupportsInt

from app.generation.paged.engine import RANGES as SETTING_RANGES
from app.generation.paged.engine import SCHEDULERS, PagedSettings, PagedWorkload
from app.generation.paged.engine.settings import MAX_POSITIONS
from app.generation.paged.engine.workload import RANGES as WORKLOAD_RANGES
from app.lab.deployment import values_from_query
from app.lab.problems import LabError, Problem

SIDES = ("a", "b")
# What a learner turns, per side; step_ms stays the shipped deployment's (a pace, not a lesson).
SETTING_FIELDS = ("num_blocks", "block_size", "max_batch_tokens", "scheduler", "prefix_sharing")
WORKLOAD_FIELDS = tuple(f.name for f in fields(PagedWorkload))
# Every number a learner may type, with its range: the engine's, so the page never offers what the
# engine refuses.
LIMITS: dict[str, tuple[int, int]] = {
    **{k: (int(lo), int(hi)) for k, (lo, hi) in SETTING_RANGES.items() if k in SETTING_FIELDS},
    **{k: (int(lo), int(hi)) for k, (lo, hi) in WORKLOAD_RANGES.items()},
    "seed": (0, 9999),
}
LAB_KEY = "g_lab"  # which lab of the generation page a link opens
LABS = ("generator", "engine")
PREFIX = "k_"


def side_prefix(side: str) -> str:
    return f"k{side}_"


def _clamp(name: str, value: SupportsInt) -> int:
    low, high = LIMITS[name]
    return min(max(int(value), low), high)


def _clamped_settings(settings: PagedSettings) -> PagedSettings:
    numbers = {name: _clamp(name, getattr(settings, name)) for name in SETTING_FIELDS if name in LIMITS}
    scheduler = settings.scheduler if settings.scheduler in SCHEDULERS else PagedSettings.scheduler
    return replace(settings, scheduler=scheduler, prefix_sharing=bool(settings.prefix_sharing), **numbers)


def _clamped_workload(workload: PagedWorkload) -> PagedWorkload:
    # Untyped: ints and floats by field, which PagedWorkload(**values) checks only at run time.
    values: dict[str, Any] = {name: _clamp(name, getattr(workload, name)) for name in WORKLOAD_FIELDS}
    values.update({name: float(values[name]) for name in ("mean_gap_ms", "long_at_ms")})  # the workload's floats
    values["min_user_tokens"] = min(values["min_user_tokens"], values["max_user_tokens"])
    values["min_answer_tokens"] = min(values["min_answer_tokens"], values["max_answer_tokens"])
    return PagedWorkload(**values)


@dataclass(frozen=True)
class PagedSetup:
    """One engine-mode set-up: the workload, setting A, and setting B (run only when compare)."""

    compare: bool = True
    a: PagedSettings = field(default_factory=PagedSettings)
    b: PagedSettings = field(default_factory=lambda: PagedSettings(num_blocks=8))
    workload: PagedWorkload = field(default_factory=lambda: PagedWorkload(mean_gap_ms=20.0))

    def clamped(self) -> PagedSetup:
        """Every number within LIMITS, each shortest <= longest, and a scheduler the engine knows."""
        return PagedSetup(compare=bool(self.compare), a=_clamped_settings(self.a), b=_clamped_settings(self.b),
                          workload=_clamped_workload(self.workload))

    def sides(self) -> tuple[str, ...]:
        """The sides a run of this set-up deploys, in the order they run and are drawn."""
        return SIDES if self.compare else SIDES[:1]

    def settings(self, side: str) -> PagedSettings:
        settings: PagedSettings = getattr(self, side)
        return settings

    def longest_request(self) -> int:
        """The most tokens one planned request needs: its prompt and its whole answer."""
        plans = self.workload.plan(tags=[0] * self.workload.total_requests)
        return max(len(p.prompt) + p.max_tokens for p in plans)

    def problems(self) -> list[Problem]:
        """Why a side could never run its workload (words: app/generation/paged/words.py). The engine answers such
        a request with an error naming the limit; saying so before the run spares the learner a run of errors."""
        out = []
        longest = self.longest_request()
        if longest > MAX_POSITIONS:
            out.append(Problem("kv_request_past_positions", {"tokens": longest, "positions": MAX_POSITIONS}))
        for side in self.sides():
            settings = self.settings(side)
            if longest > settings.capacity_tokens:
                out.append(Problem("kv_request_past_cache", {
                    "side": side.upper(), "tokens": longest, "blocks": settings.num_blocks, "size": settings.block_size,
                    "capacity": settings.capacity_tokens}))
        return out

    def check(self) -> None:
        problems = self.problems()
        if problems:
            raise LabError(problems)

    def to_query(self) -> dict[str, str]:
        out = {f"{PREFIX}compare": str(self.compare).lower()}
        for side in SIDES:
            for name in SETTING_FIELDS:
                value = getattr(self.settings(side), name)
                out[side_prefix(side) + name] = str(value).lower() if isinstance(value, bool) else str(value)
        for name in WORKLOAD_FIELDS:
            value = getattr(self.workload, name)
            out[PREFIX + name] = f"{value:g}" if isinstance(value, float) else str(value)
        return out

    @classmethod
    def from_query(cls, query: Mapping[str, object]) -> PagedSetup:
        """The set-up a link names (keys it lacks or cannot parse keep their defaults), clamped."""
        default = cls()
        compare = values_from_query(_Compare, {"compare": query.get(PREFIX + "compare")})
        sides = {}
        for side in SIDES:
            mine = {k.removeprefix(side_prefix(side)): v for k, v in query.items() if k.startswith(side_prefix(side))}
            parsed = values_from_query(PagedSettings, {k: v for k, v in mine.items() if k in SETTING_FIELDS})
            sides[side] = replace(default.settings(side), **parsed)
        mine = {k.removeprefix(PREFIX): v for k, v in query.items() if k.startswith(PREFIX)}
        parsed = values_from_query(PagedWorkload, {k: v for k, v in mine.items() if k in WORKLOAD_FIELDS})
        return cls(compare=compare.get("compare", default.compare), a=sides["a"], b=sides["b"],
                   workload=replace(default.workload, **parsed)).clamped()


@dataclass(frozen=True)
class _Compare:
    compare: bool = True


QUERY_KEYS = tuple(PagedSetup().to_query())

# Presets, in button order: each a set-up worth seeing (words: app/generation/paged/words.PRESETS).
_LONG = PagedWorkload(requests=6, mean_gap_ms=20.0, long_prompt_tokens=384, long_at_ms=80.0)
PRESETS: dict[str, PagedSetup] = {
    "plenty_of_blocks": PagedSetup(compare=False, a=PagedSettings(num_blocks=64)),
    "too_few_blocks": PagedSetup(compare=True, a=PagedSettings(num_blocks=64), b=PagedSettings(num_blocks=8)),
    "sharing_off": PagedSetup(compare=True, a=PagedSettings(prefix_sharing=True), b=PagedSettings(prefix_sharing=False)),
    "long_prompt": PagedSetup(compare=True, a=PagedSettings(max_batch_tokens=512), b=PagedSettings(max_batch_tokens=64),
                              workload=_LONG),
}
