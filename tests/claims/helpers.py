"""Helpers for the claims tests: each test proves one sentence the lessons say about Triton.

Test-only deployments get names starting with `claims_` (nothing else on the server uses
them), are built from Triton's ModelConfig protobuf, loaded through the project's own loader
and unloaded when their module is done. Requests go out through tritonclient directly,
because these claims are about what the server does with them.
"""
from __future__ import annotations

import json
import secrets
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tritonclient.grpc as grpc
import tritonclient.http as http
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2 as mc
from tritonclient.utils import InferenceServerException

from app.lab.deployment import deployments
from app.recogniser.engine.audio import chunk
from tests.server_calls import ask
from tests.waiting import wait_for

START_FLAG_ERROR = "must specify the START flag on the first request of the sequence"
# Core PR #425 (commit eeb283a), first released in 25.01 (server 2.54): a correlation ID whose type
# does not suit the CORRID control is refused, and a string CORRID buffer is sized to the ID.
STRING_ID_CHECK_SINCE = (2, 54, 0)
PROBE_CODE = Path(__file__).parent / "models" / "batch_probe.py"


def server_version(server) -> tuple[int, ...]:
    return tuple(int(p) for p in ask(server, "get_server_metadata")["version"].split(".")[:3])


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
    with server.client(timeout_s=300) as client:
        try:
            for config in configs:
                if code is None:
                    deployments.load(client, config, with_code=True)
                else:
                    client.load_model(config.name, config=deployments.to_json(config), files={"file:1/model.py": code.read_bytes()})
            yield [c.name for c in configs]
        finally:
            for config in configs:
                with suppress(InferenceServerException):
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


GATE_CODE = Path(__file__).parent / "models" / "gate_probe.py"
GATE_OUTPUTS = ("TAG_OUT", "ROW", "BATCH_SIZE", "BATCH_NO", "INSTANCE", "VERSION", "CORRELATION_ID", "FLAGS", "READY_IN",
                "CORRID_IN", "SEEN")
# tritonserver.h (core r24.10, lines 957-960): the request flags a backend reads with TRITONBACKEND_RequestFlags.
FLAG_START, FLAG_END = 1, 2
STRING_ID = -2  # what the gate probe reports as CORRELATION_ID for a string ID (the text is in ID_TEXT)


def unique_name(stem: str) -> str:
    """A model name no other test (or test run on a shared server) uses: claims_<stem>_<hex>."""
    return f"claims_{stem}_{secrets.token_hex(3)}"


def gate_config(name: str, gate_dir: Path, scheduler: str = "direct", max_batch_size: int = 2, instances: int = 1,
                idle_us: int = 60_000_000, controls: tuple[str, ...] = ("READY",)) -> mc.ModelConfig:
    """The gate probe (tests/claims/models/gate_probe.py) under `scheduler`: none, dynamic, direct or oldest.
    `controls` picks the sequence control inputs it declares: READY, and CORRID as UINT64
    ("CORRID") or as STRING ("CORRID_STRING", which the probe does not read)."""
    config = text_format.Parse(
        f"""
        name: "{name}" backend: "python" max_batch_size: {max_batch_size}
        input [
          {{ name: "TAG" data_type: TYPE_INT64 dims: [ 1 ] }},
          {{ name: "HOLD" data_type: TYPE_INT32 dims: [ 1 ] }}
        ]
        output [
          {" , ".join(f'{{ name: "{o}" data_type: TYPE_INT64 dims: [ 1 ] }}' for o in GATE_OUTPUTS)},
          {{ name: "ROWS" data_type: TYPE_INT64 dims: [ {max(1, max_batch_size)}, 4 ] }},
          {{ name: "ID_TEXT" data_type: TYPE_UINT8 dims: [ 128 ] }}
        ]
        instance_group [ {{ count: {instances} }} ]
        parameters [ {{ key: "gate_dir" value: {{ string_value: "{gate_dir}" }} }} ]
        """,
        mc.ModelConfig(),
    )
    if scheduler == "dynamic":
        config.dynamic_batching.SetInParent()
    elif scheduler in ("direct", "oldest"):
        seq = config.sequence_batching
        seq.max_sequence_idle_microseconds = idle_us
        kinds = {"READY": ("READY", "CONTROL_SEQUENCE_READY", None), "CORRID": ("CORRID", "CONTROL_SEQUENCE_CORRID", mc.TYPE_UINT64),
                 "CORRID_STRING": ("CORRID", "CONTROL_SEQUENCE_CORRID", mc.TYPE_STRING)}
        for choice in controls:
            input_name, kind, data_type = kinds[choice]
            control = seq.control_input.add(name=input_name).control.add(kind=mc.ModelSequenceBatching.Control.Kind.Value(kind))
            if data_type is None:
                control.int32_false_true.extend([0, 1])
            else:
                control.data_type = data_type
        if scheduler == "direct":
            seq.direct.SetInParent()
        else:
            seq.oldest.max_candidate_sequences = max_batch_size
    return deployments.place_instances(config)


class Loader:
    """Loads test-only models on a server and unloads every one of them in unload_all() (call it
    from a fixture's teardown, so a failing test leaves nothing behind)."""

    def __init__(self, server):
        self.control = server.client(timeout_s=300)
        self.loaded: list[str] = []

    def load(self, config: mc.ModelConfig, code: Path | None = None, versions=(1,)) -> str:
        """Load `config` with `code` as model.py (the recogniser's when None) under each of
        `versions`; return the model's name."""
        source = (code or deployments.RECOGNISER_CODE).read_bytes()
        self.loaded.append(config.name)
        files = {f"file:{version}/model.py": source for version in versions}
        self.control.load_model(config.name, config=deployments.to_json(config), files=files)
        return config.name

    def unload_all(self) -> None:
        """Unload what was loaded, then close the client (the fixture's teardown, on its thread)."""
        try:
            for name in dict.fromkeys(self.loaded):
                with suppress(InferenceServerException):
                    self.control.unload_model(name)
        finally:
            self.control.close()


class Gate:
    """The test's side of the gate probe's barrier: files in one folder the model also sees."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def _wait(self, name: str, timeout_s: float) -> Path:
        path = self.folder / name
        wait_for(path.exists, f"the gate probe to write {name}", timeout_s)
        return path

    def wait_started(self, tag: int, timeout_s: float = 60) -> None:
        """Return once the request tagged `tag` is inside the model, waiting at the gate."""
        self._wait(f"started-{tag}", timeout_s)

    def open(self, tag: int) -> None:
        (self.folder / f"open-{tag}").write_text("open")

    def wait_done(self, tag: int, timeout_s: float = 60) -> dict:
        """What the model recorded as the held request left the gate ({"cancelled": bool})."""
        return json.loads(self._wait(f"done-{tag}", timeout_s).read_text())


def gate_inputs(module, tag: int, hold: bool = False) -> list:
    """TAG and HOLD for one request, as `module`'s (tritonclient.http or .grpc) InferInputs."""
    tag_input = module.InferInput("TAG", [1, 1], "INT64")
    tag_input.set_data_from_numpy(np.array([[tag]], dtype=np.int64))
    hold_input = module.InferInput("HOLD", [1, 1], "INT32")
    hold_input.set_data_from_numpy(np.array([[1 if hold else 0]], dtype=np.int32))
    return [tag_input, hold_input]


def gate_reply(result) -> dict:
    """A gate probe reply as {output: int}, plus ROWS as a list of (cid, flags, ready, corrid) and ID_TEXT as str."""
    reply = {name: int(result.as_numpy(name).reshape(-1)[0]) for name in GATE_OUTPUTS}
    reply["ROWS"] = [tuple(int(v) for v in row) for row in result.as_numpy("ROWS").reshape(-1, 4)]
    reply["ID_TEXT"] = bytes(result.as_numpy("ID_TEXT").reshape(-1).tolist()).rstrip(b"\0").decode()
    return reply
