"""Claims about iterative sequences (in-flight batching), proven on the embedded server (Triton 2.51).

What lesson 8 says Triton does for `sequence_batching { iterative_sequence: true }`, read in core
r24.10 src/sequence_batch_scheduler/sequence_utils.h and .cc (IterativeSequencer):
- a request that carries no correlation ID is given one by Triton (SetupSequenceRequest: a counter
  from 1, per scheduler) and flagged START, so its first execution sees START = 1;
- a request the model releases with TRITONSERVER_REQUEST_RELEASE_RESCHEDULE goes back to the
  scheduler with its flags cleared (RescheduleRequest: SetFlags(0), Enqueue), so it is executed
  again, without START;
- each execution of it is an inference in the model's statistics (the probe runs one request
  STEPS times and the server counts STEPS inferences).
The probe (tests/claims/models/iterative_probe.py) reports the CORRID and START it was handed.
"""
from __future__ import annotations

import json
import queue
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpc
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2 as mc

from tests.claims.helpers import deployed, unique_name
from tests.server_calls import ask
from tests.waiting import wait_for

PROBE = Path(__file__).parent / "models" / "iterative_probe.py"
STEPS = 4


def probe_config(name: str) -> mc.ModelConfig:
    text = f"""
name: "{name}"
backend: "python"
max_batch_size: 4
input [ {{ name: "STEPS" data_type: TYPE_INT32 dims: [ 1 ] }} ]
output [
  {{ name: "CORRID_SEEN" data_type: TYPE_UINT64 dims: [ 1 ] }},
  {{ name: "START_SEEN" data_type: TYPE_INT32 dims: [ 1 ] }},
  {{ name: "EXECUTION" data_type: TYPE_INT32 dims: [ 1 ] }},
  {{ name: "LEFT" data_type: TYPE_INT32 dims: [ 1 ] }}
]
model_transaction_policy {{ decoupled: true }}
sequence_batching {{
  iterative_sequence: true
  control_input [
    {{ name: "START" control [ {{ kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] }} ] }},
    {{ name: "CORRID" control [ {{ kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 }} ] }}
  ]
  oldest {{ max_candidate_sequences: 4 }}
}}
instance_group [ {{ count: 1 kind: KIND_CPU }} ]
"""
    return text_format.Parse(text, mc.ModelConfig())


@pytest.fixture(scope="module")
def probe(lab_server):
    with deployed(lab_server, probe_config(unique_name("iterative")), code=PROBE) as names:
        yield names[0]


def stream(server, model: str, steps: int = STEPS) -> list[dict[str, int]]:
    """One request, no sequence ID and no flags from the client, on a gRPC stream: its responses."""
    got: queue.Queue = queue.Queue()
    client = grpc.InferenceServerClient(server.grpc_url)
    client.start_stream(callback=lambda result, error: got.put((result, error)))
    tensor = grpc.InferInput("STEPS", [1, 1], "INT32")
    tensor.set_data_from_numpy(np.array([[steps]], dtype=np.int32))
    client.async_stream_infer(model, [tensor], request_id="probe", enable_empty_final_response=True)
    replies = []
    try:
        while True:
            result, error = got.get(timeout=60)
            assert error is None, error
            replies.append({name: int(result.as_numpy(name).reshape(-1)[0])
                            for name in ("CORRID_SEEN", "START_SEEN", "EXECUTION", "LEFT")})
            if result.get_response().parameters["triton_final_response"].bool_param:
                return replies
    finally:
        client.stop_stream()
        client.close()


def test_triton_numbers_an_iterative_request_itself_and_flags_start_on_its_first_execution_only(lab_server, probe):
    replies = stream(lab_server, probe)
    corrids = {r["CORRID_SEEN"] for r in replies}
    assert len(corrids) == 1 and corrids != {0}  # one ID, given by Triton: the client sent none
    assert [r["START_SEEN"] for r in replies] == [1] + [0] * (STEPS - 1)
    # A second request gets an ID of its own.
    assert {r["CORRID_SEEN"] for r in stream(lab_server, probe)}.isdisjoint(corrids)


def test_a_rescheduled_request_is_executed_again(lab_server, probe):
    replies = stream(lab_server, probe)
    executions = [r["EXECUTION"] for r in replies]
    assert len(executions) == STEPS and executions == sorted(set(executions))  # one new execution per step
    assert [r["LEFT"] for r in replies] == list(range(STEPS - 1, -1, -1))


def test_inference_count_counts_every_step_of_an_iterative_request(lab_server, probe):
    def counts() -> tuple[int, int]:
        stats = ask(lab_server, "get_inference_statistics", probe)["model_stats"][0]
        return int(stats["inference_count"]), int(stats["execution_count"])

    inferences, executions = counts()
    stream(lab_server, probe)
    # Triton counts an execution just after its responses go out: wait until all are in.
    now = wait_for(lambda: (c := counts())[1] >= executions + STEPS and c, f"{STEPS} executions counted")
    assert now == (inferences + STEPS, executions + STEPS)


def _post(server, path: str, body: dict) -> tuple[int, str, str]:
    """POST JSON to the server's HTTP endpoint: (status, content type, body text)."""
    request = urllib.request.Request(f"http://{server.url}{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, reply.headers.get("Content-Type", ""), reply.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("Content-Type", ""), err.read().decode()


def test_http_generate_stream_carries_every_response_of_a_decoupled_model_as_server_sent_events(lab_server, probe):
    """The decoupled-models guide sends streaming clients to gRPC, since the HTTP infer endpoint
    carries one response per request; the generate extension's generate_stream endpoint streams
    every response as a server-sent event (server src/http_server.cc, HandleGenerate, r24.10),
    while generate refuses a model that sends more than one."""
    status, kind, text = _post(lab_server, f"/v2/models/{probe}/generate_stream", {"STEPS": STEPS})
    assert status == 200 and kind.startswith("text/event-stream"), (status, kind, text)
    events = [json.loads(line.removeprefix("data: ")) for line in text.splitlines() if line.startswith("data: ")]
    assert [int(np.array(e["LEFT"]).reshape(-1)[0]) for e in events] == list(range(STEPS - 1, -1, -1))
    # generate answers with an error object (on 2.51 under HTTP status 200: the error is known only
    # once the second response comes, after the status went out).
    _, _, text = _post(lab_server, f"/v2/models/{probe}/generate", {"STEPS": STEPS})
    assert "exactly 1 response" in json.loads(text).get("error", ""), text
