"""Deterministic quiz order from a seed the learner sees and can share.

Only private random.Random instances are used: the global generator is shared
with the rest of the app (and Streamlit reruns), so it cannot be reproducible.
"""
from __future__ import annotations

import random
import secrets
from collections.abc import Iterable
from typing import TypeVar

from app.quiz.bank import Item, Option

T = TypeVar("T")
SEED_LIMIT = 1_000_000  # six digits: short enough to read aloud in class


def new_seed() -> int:
    """A fresh seed in [0, 1_000_000), from the OS so it never repeats a session's state."""
    return secrets.randbelow(SEED_LIMIT)


def _shuffled(values: Iterable[T], rng: random.Random) -> list[T]:
    out = list(values)
    rng.shuffle(out)
    return out


def item_order(items: Iterable[Item], seed: int) -> list[Item]:
    """Items in the order a learner with this seed sees them."""
    return _shuffled(items, random.Random(seed))


def option_order(item: Item, seed: int) -> list[Option]:
    """Options of item in shuffled order; depends on seed and item id only.

    Keying on the item id means adding an item to the bank does not reshuffle the
    options of every other item for a seed already handed out.
    """
    # str seeds are hashed with SHA-512 by Random, so this is stable across runs
    # (unlike hash(), which PYTHONHASHSEED randomises).
    return _shuffled(item.options, random.Random(f"{seed}:{item.id}"))


def shuffled_quiz(items: Iterable[Item], seed: int) -> list[tuple[Item, list[Option]]]:
    """The whole quiz for one seed: (item, its options in display order) pairs."""
    return [(item, option_order(item, seed)) for item in item_order(items, seed)]
