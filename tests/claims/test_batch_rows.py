"""The dynamic batcher counts rows, not requests: a request may carry several rows (its first
dimension), and max_batch_size, batch_stats and inference_count all count rows
(core src/dynamic_batch_scheduler.cc, the batcher adds each request's batch size;
server docs/protocol/extension_statistics.md, batch_stats and inference_count)."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import tritonclient.http as http
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2 as mc

from app.lab.deployment import deployments
from app.lab.observation import server_stats
from tests.claims.helpers import deployed, unique_name

ROWS_CODE = Path(__file__).parent / "models" / "rows_probe.py"
ROWS = 3


def _config(name: str) -> mc.ModelConfig:
    config = text_format.Parse(
        f"""
        name: "{name}" backend: "python" max_batch_size: 4
        input [ {{ name: "SEQ" data_type: TYPE_INT32 dims: [ 1 ] }} ]
        output [
          {{ name: "REQUESTS_IN_BATCH" data_type: TYPE_INT32 dims: [ 1 ] }},
          {{ name: "ROWS_IN_BATCH" data_type: TYPE_INT32 dims: [ 1 ] }}
        ]
        dynamic_batching {{ }}
        instance_group [ {{ count: 1 }} ]
        """,
        mc.ModelConfig(),
    )
    return deployments.place_instances(config)


def test_one_request_of_three_rows_is_a_batch_of_three(lab_server, client):
    model = unique_name("rows")
    with deployed(lab_server, _config(model), code=ROWS_CODE):
        before = server_stats.snapshot(client, lab_server.metrics_url, model)
        data = http.InferInput("SEQ", [ROWS, 1], "INT32")
        data.set_data_from_numpy(np.arange(ROWS, dtype=np.int32).reshape(ROWS, 1))
        result = client.infer(model, [data])
        after = server_stats.snapshot_after(client, lab_server.metrics_url, model, before, ROWS)
    # The model ran one request holding three rows ...
    assert result.as_numpy("REQUESTS_IN_BATCH").reshape(-1).tolist() == [1] * ROWS
    assert result.as_numpy("ROWS_IN_BATCH").reshape(-1).tolist() == [ROWS] * ROWS
    # ... and Triton counts three inferences in one execution of batch size three.
    added = server_stats.delta(before, after)
    assert added["inference_count"] == ROWS
    assert added["execution_count"] == 1
    assert added["batch_sizes"] == {ROWS: 1}


def test_a_request_whose_rows_exceed_max_batch_size_is_refused(lab_server, client):
    model = unique_name("rows_max")
    with deployed(lab_server, _config(model), code=ROWS_CODE):
        data = http.InferInput("SEQ", [5, 1], "INT32")
        data.set_data_from_numpy(np.zeros((5, 1), dtype=np.int32))
        try:
            client.infer(model, [data])
        except Exception as err:  # Triton's refusal, before any scheduler
            message = str(err)
        else:
            message = ""
    assert "batch-size must be <= 4" in message, message


def _ragged_config(name: str, ragged: bool) -> mc.ModelConfig:
    config = _config(name)
    config.input[0].dims[:] = [-1]
    config.input[0].allow_ragged_batch = ragged
    # A long window: two requests sent together always reach the batcher inside it.
    config.dynamic_batching.max_queue_delay_microseconds = 3_000_000
    return config


def _two_lengths_together(lab_server, model: str) -> list[int]:
    """Send one request of 2 values and one of 5 at the same moment; return how many requests
    each one's execution held."""
    def one(length: int) -> int:
        with lab_server.client() as own:
            data = http.InferInput("SEQ", [1, length], "INT32")
            data.set_data_from_numpy(np.zeros((1, length), dtype=np.int32))
            return int(own.infer(model, [data]).as_numpy("REQUESTS_IN_BATCH").reshape(-1)[0])

    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(one, (2, 5)))


def test_only_a_ragged_input_lets_requests_of_different_shapes_share_a_batch(lab_server):
    """Without allow_ragged_batch the dynamic batcher batches only requests whose variable-size
    inputs have equal shapes, so a request of another length closes the batch; with it, both
    share one execution and the backend gets each request's own shape
    (server docs/user_guide/ragged_batching.md; core src/backend_model.cc, enforce_equal_shape_tensors)."""
    equal, ragged = unique_name("rows_equal"), unique_name("rows_ragged")
    with deployed(lab_server, _ragged_config(equal, False), _ragged_config(ragged, True), code=ROWS_CODE):
        assert _two_lengths_together(lab_server, equal) == [1, 1]
        assert _two_lengths_together(lab_server, ragged) == [2, 2]
