"""Claims about the sequence batcher's control flags, the idle timeout and correlation-ID types.

Sources are Triton 2.51's (release r24.10) core and common repositories unless a test says
otherwise: src/sequence_batch_scheduler/sequence_batch_scheduler.cc, src/constants.h,
src/model_config_utils.cc, protobuf/model_config.proto.
"""
from __future__ import annotations

import pytest
from tritonclient.utils import InferenceServerException

from app.lab.observation.server_log import LogCode, LogWindow, raised_verbosity
from app.lab.scenario.ids import unique_ids
from tests.claims.helpers import START_FLAG_ERROR, STRING_ID_CHECK_SINCE, deployed, grpc_send, recogniser_config, send, server_version
from tests.waiting import has_line, log_seconds, wait_for_log

SHIPPED = "asr_sequence_direct"
IDLE_UNSET, IDLE_ZERO = "claims_idle_unset", "claims_idle_zero"


@pytest.fixture(scope="module")
def idle_models(lab_server):
    configs = (recogniser_config(IDLE_UNSET, idle_us=None), recogniser_config(IDLE_ZERO, idle_us=0))
    with deployed(lab_server, *configs):
        yield


def test_request_without_start_is_refused(lab_server):
    """The first request of a sequence must carry START; without it Triton refuses the request
    with INVALID_ARG and this text (the model never sees it).

    Source: sequence_batch_scheduler.cc SequenceBatchScheduler::Enqueue ("must specify the
    START flag on the first request of the sequence", Status::Code::INVALID_ARG).
    """
    (corrid,) = unique_ids(1)
    with pytest.raises(InferenceServerException) as refused:
        grpc_send(lab_server, SHIPPED, corrid, tag=corrid)
    assert refused.value.status() == "StatusCode.INVALID_ARGUMENT"
    assert refused.value.message() == (
        f"inference request for sequence {corrid} to model '{SHIPPED}' {START_FLAG_ERROR}"
    )


@pytest.mark.parametrize("model", [IDLE_UNSET, IDLE_ZERO], ids=["unset", "zero"])
def test_idle_timeout_is_one_second_when_unset(lab_server, idle_models, client, model):
    """With max_sequence_idle_microseconds unset, or set to 0, a sequence may idle 1 s before
    the reaper ends it. By the server's own log clock: the reaper finds it idle no sooner than
    1 s after its last request arrived (and well before 2 s), and its next request is refused.

    Source: model_config.proto (ModelSequenceBatching.max_sequence_idle_microseconds: "If not
    specified (or specified as zero) a default value of 1000000 (1 second) is used");
    constants.h SEQUENCE_IDLE_DEFAULT_MICROSECONDS; model_config_utils.cc applies it;
    sequence_batch_scheduler.cc ReaperThread (idle when now minus the last arrival exceeds it).
    """
    deployed_config = client.get_model_config(model)["sequence_batching"]
    assert int(deployed_config["max_sequence_idle_microseconds"]) == 1_000_000  # what the server filled in
    (corrid,) = unique_ids(1)
    with raised_verbosity(lab_server, 1):
        window = LogWindow.start(lab_server)
        send(client, model, corrid, corrid, start=True)
        send(client, model, corrid, corrid)  # still alive: no error
        wait_for_log(window, has_line(LogCode.REAPER_FORCE_END, corrid, model), f"the reaper end CORRID {corrid}")
        with pytest.raises(InferenceServerException, match=START_FLAG_ERROR):
            send(client, model, corrid, corrid)
    arrivals = window.select(model=model, corrids=[corrid], codes=[LogCode.SEQUENCE_ENQUEUED])
    (idle,) = window.select(corrids=[corrid], codes=[LogCode.REAPER_IDLE])
    assert len(arrivals) == 2
    idled_s = log_seconds(idle) - log_seconds(arrivals[-1])
    # Enqueue records the arrival time a moment before it writes the "Enqueuing" line (hence 0.95);
    # the reaper wakes when the earliest window ends, so a reaper thread late by 0.9 s still passes.
    assert 0.95 <= idled_s < 1.9, f"reaped {idled_s:.3f} s after the last request arrived"


def test_start_flag_error_after_reaping(lab_server, idle_models, client):
    """Once the idle reaper has ended a sequence, its next request is a request without START
    for an unknown sequence, and is refused with the START-flag error. The server's verbose
    log shows the order: reaper, force-end, then the refusal.

    Source: sequence_batch_scheduler.cc ReaperThread ("Reaper: CORRID ...: max sequence idle
    exceeded", "force-ending"), then Enqueue's START-flag check; both VERBOSE(1).
    """
    (corrid,) = unique_ids(1)
    with raised_verbosity(lab_server, 1):
        window = LogWindow.start(lab_server)
        send(client, IDLE_UNSET, corrid, corrid, start=True)
        wait_for_log(window, has_line(LogCode.REAPER_FORCE_END, corrid, IDLE_UNSET), f"the reaper end CORRID {corrid}")
        with pytest.raises(InferenceServerException, match=START_FLAG_ERROR):
            send(client, IDLE_UNSET, corrid, corrid)
        wait_for_log(window, has_line(LogCode.START_FLAG_MISSING, corrid), f"the refusal of CORRID {corrid}")
    codes = [e.code for e in window.select(corrids=[corrid]) if e.code is not LogCode.SEQUENCE_ENQUEUED]
    assert codes == [LogCode.REAPER_IDLE, LogCode.REAPER_FORCE_END, LogCode.START_FLAG_MISSING]


def test_string_id_refused_by_uint64_corrid(lab_server, client, request):
    """The correlation ID's type must match the CORRID control's data_type: a string ID sent
    to a model whose CORRID is TYPE_UINT64 is refused with INVALID_ARG ("sequence batching
    control 'CORRID' data-type is 'BYTES', but model ... expects 'UINT64'").

    Source: core src/infer_request.cc InferenceRequest::Normalize, from release 25.01 (server
    2.54) on. NOT on this lab's Triton 2.51, where this test is a strict expected failure:
    it fails as long as the server accepts the ID and turns red the day it refuses it (see
    test_string_id_accepted_by_uint64_corrid_on_2_51 for what 2.51 does).
    """
    if server_version(lab_server) < STRING_ID_CHECK_SINCE:
        request.applymarker(pytest.mark.xfail(
            reason="Triton before 2.54 accepts a string ID for a TYPE_UINT64 CORRID (no type check "
            "until core PR #425, release 25.01)",
            raises=AssertionError,
            strict=True,
        ))
    corrid = f"s{unique_ids(1)[0] % 1000:03d}"  # 4 bytes: fits the 8-byte UINT64 slot, see below
    try:
        send(client, SHIPPED, corrid, tag=1, start=True, end=True)
        refused = ""
    except InferenceServerException as err:
        refused = err.message()
    assert "data-type is 'BYTES'" in refused and "expects 'UINT64'" in refused, "a string ID was accepted"


def test_string_id_accepted_by_uint64_corrid_on_2_51(lab_server, client):
    """On Triton 2.51 a string correlation ID is NOT refused by a TYPE_UINT64 CORRID: the
    sequence runs, keyed by the string, and START/END rules apply to it as to any ID. What
    the model reads in CORRID is then the string's length and bytes packed into 8 bytes, not
    a meaningful number, so a model keyed by CORRID must declare TYPE_STRING to use string IDs.

    Source: r24.10 core src/sequence_batch_scheduler/sequence_batch_scheduler.cc
    SequenceBatch::SetControlTensors (copies length + string into the CORRID buffer sized
    for the declared type); src/infer_request.cc has no type check before 25.01.
    """
    if server_version(lab_server) >= STRING_ID_CHECK_SINCE:
        pytest.skip("servers from 2.54 refuse the string ID: test_string_id_refused_by_uint64_corrid")
    corrid = f"s{unique_ids(1)[0] % 1000:03d}"  # 4 characters: 4 + 4 bytes fill the slot exactly
    first = send(client, SHIPPED, corrid, tag=7, start=True)
    assert first.state_in == 0  # a fresh sequence, served
    send(client, SHIPPED, corrid, tag=7, end=True)
    with pytest.raises(InferenceServerException, match=START_FLAG_ERROR):
        send(client, SHIPPED, corrid, tag=7)  # ended: the string names a sequence like an int does
