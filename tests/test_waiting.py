"""The one poll (tests/waiting.py) and the rule that every wait goes through it."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import waiting

TESTS = Path(__file__).resolve().parent
# Model code runs inside Triton's stub, which cannot import the tests' helpers: it waits on its own.
MODEL_CODE = ("models", "zoo")
DEADLINE = re.compile(r"time\.(monotonic|time|perf_counter)\(\)\s*\+")


def test_a_deadline_that_passes_fails_naming_what_was_awaited():
    with pytest.raises(AssertionError, match="waited 0 s for the moon"):
        waiting.wait_for(lambda: False, "the moon", timeout_s=0.05)


def test_the_first_true_answer_is_returned():
    answers = iter([0, [], "ready"])
    assert waiting.wait_for(lambda: next(answers), "an answer") == "ready"


def test_no_test_polls_against_a_deadline_of_its_own():
    own = []
    for path in sorted(TESTS.rglob("*.py")):
        if path == Path(waiting.__file__).resolve() or set(MODEL_CODE) & set(path.relative_to(TESTS).parts[:-1]):
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if DEADLINE.search(line):
                own.append(f"{path.relative_to(TESTS.parent)}:{number}: {line.strip()}")
    assert not own, "wait through tests/waiting.py's wait_for, whose deadline fails the test:\n" + "\n".join(own)
