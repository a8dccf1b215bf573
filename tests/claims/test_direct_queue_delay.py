"""Claims about `direct`'s max_queue_delay_microseconds and minimum_slot_utilization.

Two test-only recognisers, 1 instance x 2 slots, queue delay 2 s: one without a minimum slot
utilisation, one with 1.0 (both slots must have a ready request). Queue times are Triton's own
(statistics extension, inference_stats.queue), so client-side delays do not count.
Source: common protobuf/model_config.proto ModelSequenceBatching.StrategyDirect
("'max_queue_delay_microseconds' will be ignored unless minimum_slot_utilization is set to a
non-zero value"); core r24.10 sequence_batch_scheduler.cc DirectSequenceBatch::BatcherThread
(waits only when pending_batch_delay_ns_ and minimum_slot_utilization_ are both non-zero).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from app.lab.observation import server_stats
from app.lab.scenario.ids import unique_ids
from tests.claims.helpers import deployed, recogniser_config, send

DELAY_US = 2_000_000
IGNORED, HONOURED = "claims_direct_delay_only", "claims_direct_delay_util"


@pytest.fixture(scope="module")
def delay_models(lab_server):
    configs = (
        recogniser_config(IGNORED, slots=2, queue_delay_us=DELAY_US, min_slot_utilization=0.0),
        recogniser_config(HONOURED, slots=2, queue_delay_us=DELAY_US, min_slot_utilization=1.0),
    )
    with deployed(lab_server, *configs):
        yield


def _queue_s(lab_server, model: str, send_all) -> tuple[list, float]:
    """Run `send_all`, return its replies and the mean queue time Triton recorded for them."""
    with lab_server.client() as client:
        before = server_stats.snapshot(client, lab_server.metrics_url, model)
        replies = send_all()
        after = server_stats.snapshot_after(client, lab_server.metrics_url, model, before, len(replies))
        return replies, server_stats.delta(before, after)["mean_queue_us"] / 1e6


def test_queue_delay_ignored_without_min_slot_utilization(lab_server, delay_models, client):
    """With minimum_slot_utilization unset (0), a lone request under `direct` runs at once,
    whatever max_queue_delay_microseconds says (here 2 s)."""
    (corrid,) = unique_ids(1)
    replies, queue_s = _queue_s(lab_server, IGNORED, lambda: [send(client, IGNORED, corrid, corrid, start=True, end=True)])
    assert replies[0].batch == 1
    assert queue_s < 0.5, f"queued {queue_s:.3f} s"


def test_min_slot_utilization_holds_a_batch_until_filled_or_delay(lab_server, delay_models, client):
    """With minimum_slot_utilization 1.0 on 2 slots, a lone request waits the whole 2 s delay;
    two requests that arrive together fill both slots and run at once, as one batch of 2."""
    (alone,) = unique_ids(1)
    replies, queue_s = _queue_s(lab_server, HONOURED, lambda: [send(client, HONOURED, alone, alone, start=True, end=True)])
    assert replies[0].batch == 1
    assert queue_s >= 1.9, f"queued only {queue_s:.3f} s"

    pair = unique_ids(2)

    def together():
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = [pool.submit(send, lab_server.client(), HONOURED, c, c, start=True, end=True) for c in pair]
            return [f.result() for f in futures]

    replies, queue_s = _queue_s(lab_server, HONOURED, together)
    assert sorted((r.slot, r.batch) for r in replies) == [(0, 2), (1, 2)]
    assert queue_s < 1.5, f"a full batch still queued {queue_s:.3f} s"
