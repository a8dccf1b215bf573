"""Whole-number settings a host gives through the environment (TRITON_LAB_PARALLEL_RUNS,
TRITON_LAB_MAX_STUBS): a value that is not a number stops the app with a message naming it,
rather than quietly falling back to a default the host did not choose."""
from __future__ import annotations

import os


def count(name: str, unit: str) -> int | None:
    """The variable's value (at least 1), None when unset or blank; ValueError naming the
    variable, its value and `unit` when it is not a whole number."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        return max(1, int(raw))
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a whole number of {unit}") from None
