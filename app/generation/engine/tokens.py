"""The generator's token rule, pure: what a stream must hold when each request keeps its own state.

model_repository/gen_inflight/1/model.py computes the same rule in torch on the instance's
device; a stream that differs from expected_tokens continued some other state.
"""
from __future__ import annotations

from collections.abc import Sequence

VOCAB = 64  # token ids are 0..VOCAB-1
PROMPT_LENGTH = 4
MAX_TOKENS_LIMIT = 64  # the model clamps MAX_TOKENS into 1..this (a workload asks for no more)
PROMPT_WEIGHTS = (1, 3, 5, 7)


def prompt_hash(prompt: Sequence[int]) -> int:
    """h = (p0 + 3 p1 + 5 p2 + 7 p3) mod VOCAB: all a stream remembers of its prompt."""
    if len(prompt) != PROMPT_LENGTH:
        raise ValueError(f"a prompt holds {PROMPT_LENGTH} token ids, got {len(prompt)}")
    return sum(w * p for w, p in zip(PROMPT_WEIGHTS, prompt, strict=True)) % VOCAB


def next_token(h: int, step: int, last: int) -> int:
    """Token `step` of a stream whose prompt hash is h and whose previous token was `last`."""
    if step == 0:
        return (h * 11 + 5) % VOCAB
    return (last * 17 + h * 13 + step * 7 + 3) % VOCAB


def expected_tokens(prompt: Sequence[int], n: int) -> list[int]:
    """The first n tokens of the prompt's stream: t_0 = (11 h + 5) mod VOCAB,
    t_k = (17 t_(k-1) + 13 h + 7 k + 3) mod VOCAB."""
    h = prompt_hash(prompt)
    out: list[int] = []
    last = 0
    for step in range(n):
        last = next_token(h, step, last)
        out.append(last)
    return out
