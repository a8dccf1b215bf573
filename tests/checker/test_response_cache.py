"""A stateless model with `response_cache { enable: true }`, checked on real servers.

Triton uses the response cache only when the model's config and the server (--cache-config) both
turn it on (core src/dynamic_batch_scheduler.cc:L101-L104 at r24.10). The session's embedded
server has no cache: Triton ignores the model's setting, runs the model for every request, and the
checks see the state it keeps. A server started with a small local cache answers the second lone
run from the cache: the checker counts those hits in the server's statistics and skips the three
stateless checks instead of passing them on stored answers.
"""
from __future__ import annotations

import pytest

from app.checker import words as check_text
from app.checker.engine import ReviewCode
from app.i18n import words
from app.lab.server import LabServer
from tests.checker.conftest import Zoo, as_json, load_zoo, zoo_fixture
from tests.server_calls import ask

pytestmark = pytest.mark.server  # a real Triton, one of them started with a response cache

zoo = zoo_fixture("zoo_cached_state")
CACHE_BYTES = 1 << 20  # the docs warn that a very small local cache may fail to start; a run of this test needs a few kB


def cache_stats(server, model: str) -> dict:
    stats = ask(server, "get_inference_statistics", model, timeout_s=30)["model_stats"][0]["inference_stats"]
    return {"hits": int(stats["cache_hit"]["count"]), "misses": int(stats["cache_miss"]["count"])}


def test_without_a_server_cache_triton_runs_the_model_for_every_request_and_its_state_is_seen(zoo, lab_server):
    if not lab_server.is_embedded:
        pytest.skip("an external server may have been started with a response cache; the session's embedded one has none")
    result = zoo.check("zoo_cached_state")
    broken = result.judgement.verdict("repeat_alone")
    assert (broken.verdict, broken.reason) == ("broken", "keeps_state") and result.exit_code == 1
    assert cache_stats(lab_server, "zoo_cached_state") == {"hits": 0, "misses": 0}  # the cache was never asked
    # The review still says what a server with a cache would do, for the version this server reports.
    assert ReviewCode.RESPONSE_CACHE_HIDES_STATE in {f.code for f in result.review}
    assert result.triton_version == ask(lab_server, "get_server_metadata")["version"] == "2.51.0"
    assert as_json(result)["server"]["triton_version"] == "2.51.0"
    assert "reviewed for Triton 2.51.0" in check_text.summary_lines(result, words("en"))


@pytest.fixture(scope="module")
def cached_server():
    """An embedded server of its own with a local response cache, serving only zoo_cached_state."""
    server = LabServer(response_cache_bytes=CACHE_BYTES).start()
    try:
        load_zoo(server, ["zoo_cached_state"])
        yield server
    finally:
        server.stop()


def test_with_a_server_cache_the_repeats_are_answered_from_it_so_the_checks_are_skipped_not_passed(cached_server):
    before = cache_stats(cached_server, "zoo_cached_state")
    result = Zoo(cached_server).check("zoo_cached_state")
    requests = sum(result.tables.lengths)
    after = cache_stats(cached_server, "zoo_cached_state")
    # the checks judged against the lone reference are skipped; golden has no data file here and
    # finite no float output to look at
    against_reference = [v for v in result.verdicts if v.check not in ("golden", "finite")]
    assert {v.id: v.verdict for v in against_reference} == {"repeat_alone/alone": "skipped", "batch_composition/all_instances": "skipped",
                                                            "after_traffic/alone": "skipped"}
    assert {(v.reason, str(v.values)) for v in against_reference} == {("response_cache", str({"cache_hits": requests, "requests": requests}))}
    assert {v.reason for v in result.verdicts if v.check in ("golden", "finite")} == {"no_golden_data", "no_float_outputs"}
    # The first lone run reached the model (each distinct input a miss); every request of the second was a hit.
    assert after["hits"] - before["hits"] >= requests and after["misses"] > before["misses"]
    # Nothing held on stored answers, nothing broke, and the later phases were not sent at all.
    assert result.exit_code == 0 and result.judgement.diagnoses == []
    assert set(result.tables.phases["phase"]) == {"reference"} and len(result.tables.steps) == 2 * requests
    lines = "\n".join(check_text.summary_lines(result, words("en")))
    assert f"the server answered {requests} of the {requests} repeated lone requests from its response cache" in lines
