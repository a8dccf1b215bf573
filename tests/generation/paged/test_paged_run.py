"""A paged-engine run through the generation driver, on the suite's real Triton."""
from __future__ import annotations

import pytest

from app.generation.engine.workload import PlannedRequest
from app.generation.paged.engine import PagedSettings, run

pytestmark = pytest.mark.server


def test_a_run_whose_every_request_is_refused_ends_with_the_refusals(lab_server):
    # Triton's error on a stream names no request; the driver still sees the run end once every
    # request is accounted for, instead of waiting out its timeout and calling the server gone.
    plans = [PlannedRequest(index=i, tag=900 + i, arrival_s=0.01 * i, prompt=(), max_tokens=4) for i in range(3)]
    result = run(lab_server, PagedSettings(), plans, timeout_s=5.0)
    errors = result.stream.trace["error"]
    assert len(errors) == 3 and all(e.startswith("PROMPT must hold at least 1 token id") for e in errors)
