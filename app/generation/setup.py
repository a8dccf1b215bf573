"""The generation lab's set-up as one flat dataclass (settings and workload), its presets, and its
round trip through the URL (app/lab/deployment/query.py reads it back), so a copied link reproduces it.
Streamlit-free and word-free: the page (app/views/generation.py) draws it, the exercises and tests build it.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace

from app.lab.deployment import values_from_query

MODES = ("static", "inflight", "compare")  # compare: both, on the same workload
STRATEGIES = ("oldest", "direct")  # in flight: the sequence batcher's strategy (the engine's deployments.STRATEGIES)
LIMITS: dict[str, tuple[int, int]] = {  # field -> (lowest, highest) the page offers
    "max_batch_size": (1, 8),
    "queue_delay_ms": (0, 100),  # the engine's deployments.QUEUE_DELAY_US
    "max_candidates": (1, 8),
    "instances": (1, 2),
    "requests": (1, 24),
    "mean_gap_ms": (0, 500),
    "min_tokens": (1, 64),
    "max_tokens": (1, 64),
    "prompt_seed": (0, 9999),
    "seed": (0, 9999),
}


@dataclass(frozen=True)
class GenSetup:
    mode: str = "compare"
    max_batch_size: int = 4
    queue_delay_ms: int = 0  # static: the dynamic batcher's max_queue_delay; in flight: the sequence batcher's
    max_candidates: int = 4  # in flight: oldest's max_candidate_sequences
    strategy: str = "oldest"  # in flight; a link without g_strategy keeps gen_inflight's
    instances: int = 1
    requests: int = 8
    mean_gap_ms: int = 40
    min_tokens: int = 2
    max_tokens: int = 12
    prompt_seed: int = 1
    seed: int = 7

    def clamped(self) -> GenSetup:
        """Every number within LIMITS, min_tokens <= max_tokens, and a mode the lab knows."""
        values: dict[str, int] = {name: min(max(int(getattr(self, name)), low), high) for name, (low, high) in LIMITS.items()}
        values["min_tokens"] = min(values["min_tokens"], values["max_tokens"])
        return replace(self, mode=self.mode if self.mode in MODES else GenSetup.mode,
                       strategy=self.strategy if self.strategy in STRATEGIES else GenSetup.strategy, **values)

    def modes(self) -> tuple[str, ...]:
        """The batching modes a run of this set-up deploys, in the order they run and are drawn."""
        return ("static", "inflight") if self.mode == "compare" else (self.mode,)

    def to_query(self) -> dict[str, str]:
        return {f"g_{name}": str(value) for name, value in asdict(self).items()}

    @classmethod
    def from_query(cls, query: Mapping[str, object]) -> GenSetup:
        """The set-up a link names (fields it lacks or cannot parse keep their defaults), clamped."""
        mine = {key.removeprefix("g_"): value for key, value in query.items() if key.startswith("g_")}
        return cls(**values_from_query(cls, mine)).clamped()


QUERY_KEYS = tuple(f"g_{f.name}" for f in fields(GenSetup))

# Presets, in button order: each a set-up worth seeing (words: app/generation/words.PRESETS).
PRESETS: dict[str, GenSetup] = {
    "side_by_side": GenSetup(),
    "long_and_short": GenSetup(requests=6, mean_gap_ms=30, min_tokens=2, max_tokens=24, seed=3),
    "sparse": GenSetup(requests=6, mean_gap_ms=300, min_tokens=4, max_tokens=8),
    "patient_queue": GenSetup(mode="static", queue_delay_ms=60, requests=10, mean_gap_ms=20),
}
