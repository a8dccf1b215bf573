"""Claims about what a Python-backend model sees of a sequence request.

A test-only gate probe under `direct`, 1 instance x 2 slots, with READY and a TYPE_UINT64
CORRID control: it answers every request with what `request.correlation_id()` and
`request.flags()` returned for it, and with ROWS, the same for every row of its batch (a
padding row's own reply reaches no client). Flags are TRITONSERVER_REQUEST_FLAG_SEQUENCE_START
(1) and _END (2), core r24.10 include/triton/core/tritonserver.h lines 957-960, the values
python_backend exposes as pb_utils.TRITONSERVER_REQUEST_FLAG_SEQUENCE_START/_END
(src/resources/triton_python_backend_utils.py lines 606-607).
"""
from __future__ import annotations

import tritonclient.http as http

from app.lab.scenario.ids import unique_ids
from tests.claims.helpers import FLAG_END, FLAG_START, GATE_CODE, STRING_ID, gate_config, gate_inputs, gate_reply, unique_name

PADDING = (0, 0, 0, 0)  # correlation_id(), flags(), READY, CORRID of a padding row
NO_ROW = -1  # the gate probe's value for a control input the config does not declare


def test_model_sees_correlation_id_and_flags(load, gate, client):
    """request.correlation_id() is the client's sequence ID (an int, or a str for a string ID)
    and request.flags() carries START (1) and END (2) on the requests that had them, 0 on the
    others; the CORRID control input holds the same number. Under `direct` a padding row is a
    real request object too: READY 0, correlation_id() 0, flags() 0 and CORRID 0.

    Source: python_backend r24.10 src/python_be.cc lines 262-282 (each request's correlation ID,
    as a number or a string, and its flags are read from Triton) and src/pb_stub.cc lines
    1784-1796 (correlation_id() returns a str for a string ID, an int otherwise; flags());
    core r24.10 src/sequence_batch_scheduler/sequence_batch_scheduler.cc lines 1759-1767 (a
    padding row is InferenceRequest::CopyAsNull of a real one with CORRID 0 and READY false;
    src/infer_request.cc lines 510-520: a new request, so correlation ID 0 and no flags).
    """
    model = load(gate_config(unique_name("python_request"), gate.folder, max_batch_size=2, controls=("READY", "CORRID")),
                 code=GATE_CODE)

    def send(corrid, **flags):
        return gate_reply(client.infer(model, gate_inputs(http, 7), sequence_id=corrid, **flags))

    a, b, c = unique_ids(3)
    first = send(a, sequence_start=True)
    second = send(b, sequence_start=True)  # slot 1, so slot 0 (a, idle) gets a padding row
    middle = send(b)
    last = send(b, sequence_end=True)
    assert [(r["CORRELATION_ID"], r["FLAGS"], r["READY_IN"], r["CORRID_IN"]) for r in (first, second, middle, last)] == [
        (a, FLAG_START, 1, a), (b, FLAG_START, 1, b), (b, 0, 1, b), (b, FLAG_END, 1, b)]
    assert (second["ROW"], second["BATCH_SIZE"]) == (1, 2)
    assert second["ROWS"] == [PADDING, (b, FLAG_START, 1, b)]
    assert send(a, sequence_end=True)["FLAGS"] == FLAG_END
    assert send(c, sequence_start=True, sequence_end=True)["FLAGS"] == FLAG_START | FLAG_END

    text_id = f"learner-{c}"
    as_string = send(text_id, sequence_start=True, sequence_end=True)
    assert (as_string["ID_TEXT"], as_string["CORRELATION_ID"], as_string["FLAGS"]) == (text_id, STRING_ID, FLAG_START | FLAG_END)


def test_padding_rows_without_ready_carry_correlation_id_zero(load, gate, client):
    """A direct model that declares no control input at all still gets padding rows, and can
    tell them apart: request.correlation_id() is 0 on a padding row, never on a real request of
    a sequence (a sequence-batched model refuses ID 0). With sequences in slots 0 and 1 of one
    instance, a request of slot 1 alone runs as a batch of 2 whose row 0 has ID 0 and flags 0.

    Source: core r24.10 src/sequence_batch_scheduler/sequence_batch_scheduler.cc lines
    1758-1767 (a padding row is CopyAsNull of a real request, its controls set with CORRID 0 and
    not_ready) and src/infer_request.cc lines 509-520 (the copy is a new request: correlation ID
    0, no flags); src/sequence_batch_scheduler/sequence_utils.h lines 38-56 (ID 0 refused);
    python_backend r24.10 src/python_be.cc lines 262-278 (the model reads each request's ID).
    """
    model = load(gate_config(unique_name("no_controls"), gate.folder, max_batch_size=2, controls=()), code=GATE_CODE)

    def send(corrid, **flags):
        return gate_reply(client.infer(model, gate_inputs(http, 7), sequence_id=corrid, **flags))

    a, b = unique_ids(2)
    first = send(a, sequence_start=True)
    second = send(b, sequence_start=True)
    alone = send(b)
    assert (first["ROW"], first["BATCH_SIZE"], second["ROW"], second["BATCH_SIZE"]) == (0, 1, 1, 2)
    no_control = (NO_ROW, NO_ROW)  # READY and CORRID: not declared
    assert alone["ROWS"] == [(0, 0, *no_control), (b, 0, *no_control)]
    assert (alone["CORRELATION_ID"], alone["SEEN"]) == (b, 2)
    for corrid in (a, b):
        send(corrid, sequence_end=True)
