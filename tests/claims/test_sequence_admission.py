"""Claims about which requests a sequence-batched model refuses before any slot is involved.

Two test-only gate probes under `direct`, max_batch_size 2: one with a TYPE_UINT64 CORRID
control, one with a TYPE_STRING CORRID. tritonclient leaves a sequence ID of 0 or "" out of
the request altogether (tritonclient http/_utils.py and grpc/_utils.py: `if sequence_id != 0
and sequence_id != ""`), so these requests are written as the KServe v2 JSON body itself,
which the HTTP endpoint turns into TRITONSERVER_InferenceRequestSetCorrelationId (a number)
or ...SetCorrelationIdString (a string): server r24.10 src/http_server.cc lines 2864-2880.
"""
from __future__ import annotations

import json
import urllib.error
import urllib.request

import numpy as np
import pytest
import tritonclient.grpc as grpc
import tritonclient.http as http
from tritonclient.utils import InferenceServerException

from app.lab.scenario.ids import unique_ids
from tests.claims.helpers import GATE_CODE, STRING_ID_CHECK_SINCE, Loader, gate_config, gate_inputs, gate_reply, server_version, unique_name
from tests.server_calls import ask

NO_ID = "must specify a non-zero or non-empty correlation ID"


@pytest.fixture(scope="module")
def models(lab_server, tmp_path_factory):
    """{"uint64": name, "string": name}: the probe with each CORRID data type."""
    gate_dir = tmp_path_factory.mktemp("admission-gate")
    loader = Loader(lab_server)
    names = {
        "uint64": loader.load(gate_config(unique_name("admit_u64"), gate_dir, controls=("READY", "CORRID")), code=GATE_CODE),
        "string": loader.load(gate_config(unique_name("admit_str"), gate_dir, controls=("READY", "CORRID_STRING")), code=GATE_CODE),
    }
    yield names
    loader.unload_all()


def _raw_infer(server, model: str, parameters: dict) -> tuple[int, dict]:
    """One request as its JSON body (TAG 1, HOLD 0, batch 1), with these request parameters."""
    body = {
        "inputs": [
            {"name": "TAG", "shape": [1, 1], "datatype": "INT64", "data": [1]},
            {"name": "HOLD", "shape": [1, 1], "datatype": "INT32", "data": [0]},
        ],
        "parameters": parameters,
    }
    request = urllib.request.Request(f"http://{server.url}/v2/models/{model}/infer", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_batch_size_above_one_is_refused(lab_server, models):
    """A sequence-batched model takes one row per request: a request whose batch dimension is 2
    is refused with INVALID_ARG, though max_batch_size (2) would allow it under any other
    scheduler. The same request with batch 1 is served.

    Source: core r24.10 src/sequence_batch_scheduler/sequence_batch_scheduler.cc lines 679-688
    (SequenceBatchScheduler::Enqueue: "must specify batch-size 1 due to requirements of
    sequence batcher", before the correlation ID or the flags are looked at).
    """
    model = models["uint64"]
    client = grpc.InferenceServerClient(lab_server.grpc_url)
    (corrid,) = unique_ids(1)
    tag = grpc.InferInput("TAG", [2, 1], "INT64")
    tag.set_data_from_numpy(np.array([[1], [2]], dtype=np.int64))
    hold = grpc.InferInput("HOLD", [2, 1], "INT32")
    hold.set_data_from_numpy(np.zeros((2, 1), dtype=np.int32))
    try:
        with pytest.raises(InferenceServerException) as refused:
            client.infer(model, [tag, hold], sequence_id=corrid, sequence_start=True, sequence_end=True)
        assert refused.value.status() == "StatusCode.INVALID_ARGUMENT"
        assert refused.value.message() == (
            f"inference request to model '{model}' must specify batch-size 1 due to requirements of sequence batcher"
        )
        served = gate_reply(client.infer(model, gate_inputs(grpc, 3), sequence_id=corrid, sequence_start=True, sequence_end=True))
        assert (served["TAG_OUT"], served["BATCH_SIZE"]) == (3, 1)
    finally:
        client.close()


def test_correlation_id_zero_is_refused(lab_server, models):
    """Correlation ID 0 means "no correlation ID": a START request carrying sequence_id 0 is
    refused with 400 and Triton's message, and so is one that carries no ID at all (what
    tritonclient sends for sequence_id=0). A non-zero ID is served.

    Source: core r24.10 src/sequence_batch_scheduler/sequence_utils.h lines 43-55
    (Sequencer::SetupSequenceRequest: an ID that is not InSequence() is refused, INVALID_ARG);
    src/infer_request.h lines 280-283 (InSequence: a non-empty string or a non-zero number).
    """
    model = models["uint64"]
    expected = {"error": f"inference request to model '{model}' {NO_ID}"}
    assert _raw_infer(lab_server, model, {"sequence_id": 0, "sequence_start": True, "sequence_end": True}) == (400, expected)
    assert _raw_infer(lab_server, model, {"sequence_start": True, "sequence_end": True}) == (400, expected)
    with pytest.raises(InferenceServerException, match=NO_ID):
        ask(lab_server, "infer", model, gate_inputs(http, 1), sequence_id=0, sequence_start=True, sequence_end=True)
    (corrid,) = unique_ids(1)
    status, served = _raw_infer(lab_server, model, {"sequence_id": corrid, "sequence_start": True, "sequence_end": True})
    assert status == 200, served
    assert {o["name"]: o["data"][0] for o in served["outputs"]}["CORRELATION_ID"] == corrid


def _string_id(length: int) -> str:
    """A string correlation ID of exactly `length` characters."""
    return f"s{unique_ids(1)[0]}".ljust(length, "x")[:length]


def test_empty_string_correlation_id_is_refused(lab_server, models):
    """On a model whose CORRID control is TYPE_STRING, the empty string is no correlation ID
    either: a START request with sequence_id "" is refused with the same INVALID_ARG message,
    while a non-empty string ID (here one of 128 characters, see the next test for why) is
    served and reaches the model as a str.

    Source: as test_correlation_id_zero_is_refused (InSequence() is false for ""); server
    r24.10 src/http_server.cc lines 2864-2880 (a JSON string sequence_id becomes a string
    correlation ID, "" included).
    """
    model = models["string"]
    expected = {"error": f"inference request to model '{model}' {NO_ID}"}
    assert _raw_infer(lab_server, model, {"sequence_id": "", "sequence_start": True, "sequence_end": True}) == (400, expected)
    corrid = _string_id(128)
    status, served = _raw_infer(lab_server, model, {"sequence_id": corrid, "sequence_start": True, "sequence_end": True})
    assert status == 200, served
    seen = {o["name"]: o["data"] for o in served["outputs"]}
    assert bytes(seen["ID_TEXT"]).rstrip(b"\0").decode() == corrid


def test_short_string_id_fails_on_a_python_model_with_string_corrid_on_2_51(lab_server, models):
    """What Triton 2.51 does with a string ID on a TYPE_STRING CORRID: it writes the ID into a
    buffer of 4 + 128 bytes (a 4-byte length, the bytes, and the rest left as it was), whatever
    the ID's length. The Python backend reads that buffer as a list of strings and finds more
    than the one element the control declares, so every request of a sequence whose ID is
    shorter than 125 bytes fails with INVALID_ARG; an ID of 128 bytes fills the buffer and works.

    Source: core r24.10 src/sequence_batch_scheduler/sequence_batch_scheduler.cc lines
    1343-1384 (SequenceBatch::SetControlTensors: size 4 + STRING_CORRELATION_ID_MAX_LENGTH_BYTES,
    memcpy of the length and the ID only); python_backend r24.10 src/python_be.cc lines
    443-450 and backend r24.10 src/backend_common.cc lines 1376-1400 (ValidateStringBuffer:
    "unexpected number of string elements"). Fixed in 25.01 (server 2.54) by core PR #425,
    commit eeb283a, which sizes the buffer to the ID: skipped on such a server.
    """
    if server_version(lab_server) >= STRING_ID_CHECK_SINCE:
        pytest.skip("from 2.54 the CORRID buffer fits the ID (core PR #425)")
    model = models["string"]
    status, refused = _raw_infer(lab_server, model, {"sequence_id": _string_id(7), "sequence_start": True, "sequence_end": True})
    assert (status, refused) == (400, {"error": "unexpected number of string elements 2 for inference input 'CORRID', expecting 1"})
    status, served = _raw_infer(lab_server, model, {"sequence_id": _string_id(128), "sequence_start": True, "sequence_end": True})
    assert status == 200, served


def test_string_id_longer_than_128_characters_is_refused(lab_server, models):
    """The server's C API caps a string correlation ID at 128 characters: one of 129 is refused
    before any scheduler sees it, with UNSUPPORTED (HTTP 501, not the 400 of the scheduler's own
    refusals), while 128 (test_empty_string_correlation_id_is_refused) is served.

    Source: core r24.10 src/tritonserver.cc lines 1841-1857
    (TRITONSERVER_InferenceRequestSetCorrelationIdString: UNSUPPORTED, "string correlation ID
    cannot be longer than 128 characters"); server r24.10 src/http_server.cc lines 2864-2880.
    """
    model = models["string"]
    status, refused = _raw_infer(lab_server, model, {"sequence_id": _string_id(129), "sequence_start": True, "sequence_end": True})
    assert (status, refused) == (501, {"error": "string correlation ID cannot be longer than 128 characters"})


def test_string_id_longer_than_128_characters_is_refused_over_grpc(lab_server, models):
    """gRPC sets a string correlation ID through the same C API call as HTTP, so the same cap
    holds: a 129-character ID is refused with UNSUPPORTED, which gRPC reports as UNIMPLEMENTED,
    before any scheduler sees the request; 128 characters are served.

    Source: server r24.10 src/grpc/infer_handler.cc lines 221-224 (a string sequence_id goes to
    TRITONSERVER_InferenceRequestSetCorrelationIdString) and src/grpc/grpc_utils.cc lines 101-102
    (UNSUPPORTED maps to grpc::StatusCode::UNIMPLEMENTED); core r24.10 src/tritonserver.cc lines 1848-1853.
    """
    channel = grpc.InferenceServerClient(lab_server.grpc_url)
    try:
        with pytest.raises(InferenceServerException) as refused:
            channel.infer(models["string"], gate_inputs(grpc, 1), sequence_id=_string_id(129), sequence_start=True, sequence_end=True)
        served = gate_reply(channel.infer(models["string"], gate_inputs(grpc, 1), sequence_id=_string_id(128),
                                          sequence_start=True, sequence_end=True))
    finally:
        channel.close()
    assert (refused.value.status(), refused.value.message()) == (
        "StatusCode.UNIMPLEMENTED", "string correlation ID cannot be longer than 128 characters")
    assert served["FLAGS"] == 3
