"""Helpers for the claims tests: each test proves one sentence the lessons say about Triton.

Test-only deployments get names starting with `claims_` (nothing else on the server uses
them), are built from Triton's ModelConfig protobuf, loaded through the project's own loader
and unloaded when their module is done. Requests go out through tritonclient directly,
because these claims are about what the server does with them.
"""
from __future__ import annotations

import contextlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tritonclient.grpc as grpc
import tritonclient.http as http
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2 as mc
from tritonclient.utils import InferenceServerException

from app.lab.deployment import deployments
from app.lab.scenario.audio import chunk

START_FLAG_ERROR = "must specify the START flag on the first request of the sequence"
PROBE_CODE = Path(__file__).parent / "models" / "batch_probe.py"


def recogniser_config(
    name: str,
    scheduler: str = "direct",
    instances: int = 1,
    slots: int = 4,
    idle_us: int | None = 10_000_000,
    state_key: str = "slot",
    idle_evict_s: str = "600",
    queue_delay_us: int = 0,
    min_slot_utilization: float = 0.0,
) -> mc.ModelConfig:
    """The shipped recogniser's config with the settings a claim needs (idle_us None: unset)."""
    config = deployments.read_config("asr_sequence_direct")
    config.name = name
    config.max_batch_size = slots
    seq = config.sequence_batching
    seq.ClearField("max_sequence_idle_microseconds")
    if idle_us is not None:
        seq.max_sequence_idle_microseconds = idle_us
    seq.ClearField("direct")
    if scheduler == "direct":
        seq.direct.max_queue_delay_microseconds = queue_delay_us
        seq.direct.minimum_slot_utilization = min_slot_utilization
    else:
        seq.oldest.max_candidate_sequences = slots
        seq.oldest.max_queue_delay_microseconds = queue_delay_us
    del config.instance_group[:]
    config.instance_group.add(count=instances)
    config.parameters["state_key"].string_value = state_key
    config.parameters["idle_evict_s"].string_value = idle_evict_s
    return deployments.place_instances(config)


def probe_config(name: str, delay_ms: int, max_batch_size: int = 4, queue_delay_us: int = 0) -> mc.ModelConfig:
    """A stateless model that sleeps per execution and says which batch and row each request had."""
    config = text_format.Parse(
        f"""
        name: "{name}" backend: "python" max_batch_size: {max_batch_size}
        input [ {{ name: "SEQ" data_type: TYPE_INT32 dims: [ 1 ] }} ]
        output [
          {{ name: "SEQ_OUT" data_type: TYPE_INT32 dims: [ 1 ] }},
          {{ name: "BATCH_NO" data_type: TYPE_INT32 dims: [ 1 ] }},
          {{ name: "ROW" data_type: TYPE_INT32 dims: [ 1 ] }},
          {{ name: "BATCH_SIZE" data_type: TYPE_INT32 dims: [ 1 ] }}
        ]
        dynamic_batching {{ max_queue_delay_microseconds: {queue_delay_us} }}
        instance_group [ {{ count: 1 }} ]
        parameters [ {{ key: "delay_ms" value: {{ string_value: "{delay_ms}" }} }} ]
        """,
        mc.ModelConfig(),
    )
    return deployments.place_instances(config)


@contextmanager
def deployed(server, *configs: mc.ModelConfig, code: Path | None = None):
    """Load test-only deployments (the recogniser's code unless `code` is given); unload after."""
    client = server.client(timeout_s=300)
    try:
        for config in configs:
            if code is None:
                deployments.load(client, config, with_code=True)
            else:
                client.load_model(config.name, config=deployments.to_json(config), files={"file:1/model.py": code.read_bytes()})
        yield [c.name for c in configs]
    finally:
        for config in configs:
            with contextlib.suppress(InferenceServerException):
                client.unload_model(config.name)


@dataclass
class Reply:
    symbol: int
    instance: int
    slot: int
    batch: int
    state_in: int
    state_owner: int


def send(client, model: str, corrid, tag: int, delta: int = 1, start: bool = False, end: bool = False,
         timeout_us: int | None = None) -> Reply:
    """One recogniser chunk carrying `delta`, with sequence flags (and Triton's own request
    timeout, in microseconds, if given); raises InferenceServerException if refused."""
    rng = np.random.default_rng(delta)
    audio = http.InferInput("AUDIO", [1, 160], "FP32")
    audio.set_data_from_numpy(chunk(delta, rng)[None])
    session = http.InferInput("SESSION", [1, 1], "UINT64")
    session.set_data_from_numpy(np.array([[tag]], dtype=np.uint64))
    result = client.infer(model, [audio, session], sequence_id=corrid, sequence_start=start, sequence_end=end,
                          timeout=timeout_us)
    value = lambda name: int(result.as_numpy(name).reshape(-1)[0])  # noqa: E731
    return Reply(value("SYMBOL"), value("INSTANCE"), value("SLOT"), value("BATCH"), value("STATE_IN"), value("STATE_OWNER"))


def grpc_send(server, model: str, corrid, tag: int, start: bool = False, end: bool = False):
    """The same chunk over gRPC, whose errors carry Triton's status code."""
    client = grpc.InferenceServerClient(server.grpc_url)
    audio = grpc.InferInput("AUDIO", [1, 160], "FP32")
    audio.set_data_from_numpy(chunk(1, np.random.default_rng(1))[None])
    session = grpc.InferInput("SESSION", [1, 1], "UINT64")
    session.set_data_from_numpy(np.array([[tag]], dtype=np.uint64))
    try:
        return client.infer(model, [audio, session], sequence_id=corrid, sequence_start=start, sequence_end=end)
    finally:
        client.close()
