"""Claims of lessons 7 and 8 an operator of a generation on Triton needs, on the embedded server (2.51).

Every request goes to the generation probe (tests/claims/models/generation_probe.py) on a raw gRPC stream,
with no correlation ID and no flags, so Triton numbers it. Each token reply says the CORRID, row and batch
size it had; the probe's gate holds a request inside an execution until the test lets it go, so a test knows
where a request is without timing anything.

Sources (r24.10): common protobuf/model_config.proto (ModelSequenceBatching: "Default strategy is
'direct'"); core src/sequence_batch_scheduler/sequence_utils.h and .cc (IterativeSequencer: the per-model
counter from 1; RescheduleRequest: a cancelled null END marker for a request released without RESCHEDULE,
none for a cancelled one), sequence_batch_scheduler.cc (the reaper; direct's slots and padding rows; oldest's
CompleteAndNext), src/dynamic_batch_scheduler.cc and src/scheduler_utils.cc (a cancelled queued request is
answered by the batcher); server src/grpc/stream_infer_handler.cc (an empty final response only with
triton_enable_empty_final_response).
"""
from __future__ import annotations

import queue
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpc
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2 as mc

from app.lab.observation import server_stats
from app.lab.observation.server_log import LogCode, LogWindow, raised_verbosity
from app.lab.server import LabServer
from tests.claims.helpers import START_FLAG_ERROR, Gate, Loader, unique_name
from tests.waiting import has_line, wait_for, wait_for_log

PROBE = Path(__file__).parent / "models" / "generation_probe.py"
OUTPUTS = ("CORRID_SEEN", "ROW", "BATCH", "EXECUTION", "LEFT")


def probe_config(name: str, strategy: str = "oldest", rows: int = 4, candidates: int | None = None,
                 idle_us: int = 5_000_000, **parameters: str) -> mc.ModelConfig:
    """The probe under iterative sequences with `strategy`: `rows` is max_batch_size (direct's slots);
    oldest keeps `candidates` generations in play (rows when None). `direct` declares READY, whose 0 marks
    a padding row."""
    ready = ('{ name: "READY" control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ] },'
             if strategy == "direct" else "")
    chosen = "direct { }" if strategy == "direct" else f"oldest {{ max_candidate_sequences: {candidates or rows} }}"
    text = f"""
name: "{name}" backend: "python" max_batch_size: {rows}
input [
  {{ name: "STEPS" data_type: TYPE_INT32 dims: [ 1 ] }},
  {{ name: "TAG" data_type: TYPE_INT64 dims: [ 1 ] }},
  {{ name: "HOLD_AT" data_type: TYPE_INT32 dims: [ 1 ] }}
]
output [ {", ".join(f'{{ name: "{o}" data_type: {"TYPE_UINT64" if o == "CORRID_SEEN" else "TYPE_INT32"} dims: [ 1 ] }}'
                    for o in OUTPUTS)} ]
model_transaction_policy {{ decoupled: true }}
sequence_batching {{
  iterative_sequence: true
  max_sequence_idle_microseconds: {idle_us}
  control_input [
    {ready}
    {{ name: "START" control [ {{ kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] }} ] }},
    {{ name: "CORRID" control [ {{ kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 }} ] }}
  ]
  {chosen}
}}
instance_group [ {{ count: 1 kind: KIND_CPU }} ]
parameters [ {", ".join(f'{{ key: "{k}" value: {{ string_value: "{v}" }} }}' for k, v in parameters.items())} ]
"""
    return text_format.Parse(text, mc.ModelConfig())


@dataclass(frozen=True)
class Reply:
    request: str
    final: bool
    outputs: dict[str, int]  # empty for a response that carries only the final flag


class Stream:
    """One gRPC stream: send generations by name, read their replies in the order they arrive."""

    def __init__(self, server):
        self.replies: queue.Queue = queue.Queue()
        self.client = grpc.InferenceServerClient(server.grpc_url)
        self.client.start_stream(callback=self._got)

    def _got(self, result, error) -> None:
        if error is not None:
            self.replies.put(error)
            return
        response = result.get_response()
        outputs = {o.name: int(result.as_numpy(o.name).reshape(-1)[0]) for o in response.outputs}
        self.replies.put(Reply(response.id, response.parameters["triton_final_response"].bool_param, outputs))

    def send(self, model: str, request: str, steps: int, tag: int = 0, hold_at: int = 0,
             empty_final: bool = True) -> None:
        tensors = []
        for name, value, kind in (("STEPS", steps, "INT32"), ("TAG", tag, "INT64"), ("HOLD_AT", hold_at, "INT32")):
            tensor = grpc.InferInput(name, [1, 1], kind)
            tensor.set_data_from_numpy(np.array([[value]], dtype=np.int32 if kind == "INT32" else np.int64))
            tensors.append(tensor)
        self.client.async_stream_infer(model, tensors, request_id=request, enable_empty_final_response=empty_final)

    def until(self, done, seen: list[Reply] | None = None) -> list[Reply]:
        seen = list(seen or [])
        while not done(seen):
            reply = self.replies.get(timeout=60)
            assert isinstance(reply, Reply), f"the stream failed: {reply}"
            seen.append(reply)
        return seen

    def close(self) -> None:
        self.client.stop_stream(cancel_requests=True)
        self.client.close()


def final_of(request: str):
    return lambda replies: any(r.request == request and r.final for r in replies)


def tokens(replies: list[Reply], request: str) -> list[dict[str, int]]:
    return [r.outputs for r in replies if r.request == request and r.outputs]


@pytest.fixture()
def load(lab_server):
    loader = Loader(lab_server)
    yield lambda config: loader.load(config, code=PROBE)
    loader.unload_all()


def joined_and_left(server, model: str) -> tuple[list[dict[str, int]], list[dict[str, int]], list[dict[str, int]]]:
    """A 4-step generation starts; at its first token a 10-step one joins; the first ends. Returns the first's
    tokens, the second's, and the second's tokens from executions after the first's last. A loaded machine
    can send the second only after the first has ended, which shows nothing about joining: the pair is run
    again until the second's first step came while the first still ran (at most five times)."""
    for _ in range(5):
        stream = Stream(server)
        try:
            stream.send(model, "first", steps=4)
            replies = stream.until(lambda got: any(r.request == "first" for r in got))
            stream.send(model, "second", steps=10)
            replies = stream.until(lambda got: final_of("first")(got) and final_of("second")(got), replies)
        finally:
            stream.close()
        first, second = tokens(replies, "first"), tokens(replies, "second")
        if second[0]["EXECUTION"] <= first[-1]["EXECUTION"]:
            return first, second, [t for t in second if t["EXECUTION"] > first[-1]["EXECUTION"]]
    raise AssertionError(f"the second generation never joined while the first ran: {first} {second}")


def test_under_direct_a_generation_keeps_its_row_for_life_beside_padding_rows(lab_server, load):
    """`direct`, the sequence batcher's default strategy, gives each generation a slot, its row, for life: the
    first stays in row 0, the second in row 1, and once the first has ended the second's steps still hold two
    rows, row 0 a padding row (READY 0). While both run, no step runs one without the other."""
    first, second, alone = joined_and_left(lab_server, load(probe_config(unique_name("gen_direct"), "direct", step_ms="40")))
    assert {t["ROW"] for t in first} == {0} and {t["ROW"] for t in second} == {1}, (first, second)
    assert alone and {t["BATCH"] for t in alone} == {2}, second
    # direct forms a step only once the last one is complete, every rescheduled request back: while both
    # generations ran, every step held both.
    together = {t["EXECUTION"] for t in second} & set(range(second[0]["EXECUTION"], first[-1]["EXECUTION"] + 1))
    assert together <= {t["EXECUTION"] for t in first}, (first, second)


def test_under_oldest_the_rows_follow_the_queue_and_a_generation_changes_row(lab_server, load):
    """`oldest` packs each step with the requests that are ready, in queue order: once the second generation
    has joined, a generation's row changes from step to step, and after the first has ended the second runs
    alone in row 0 of one-row batches."""
    first, second, alone = joined_and_left(lab_server, load(probe_config(unique_name("gen_oldest"), "oldest", step_ms="40")))
    assert len({t["ROW"] for t in first}) > 1 or len({t["ROW"] for t in second}) > 1, (first, second)
    assert alone and {(t["ROW"], t["BATCH"]) for t in alone} == {(0, 1)}, second


def test_triton_numbers_iterative_requests_from_one_per_model(lab_server, load):
    """A fresh model's first iterative request gets CORRID 1, its next 2; a second fresh model starts at 1
    again: the counter is the model's own, not the server's."""
    seen = {}
    for model in (load(probe_config(unique_name("gen_count_a"))), load(probe_config(unique_name("gen_count_b")))):
        stream = Stream(lab_server)
        try:
            ids = []
            for k in range(2):
                stream.send(model, f"g{k}", steps=1)
                ids.append(tokens(stream.until(final_of(f"g{k}")), f"g{k}")[0]["CORRID_SEEN"])
        finally:
            stream.close()
        seen[model] = ids
    assert list(seen.values()) == [[1, 2], [1, 2]], seen


def test_an_empty_final_response_reaches_only_a_client_that_asked_for_it(lab_server, load):
    """The model sends its last token as a plain response and the final flag on its own. A request sent
    with enable_empty_final_response gets that flag as an empty response marked triton_final_response; one
    sent without gets its tokens and nothing that says they are over. A marker request sent after the quiet
    one's last token, on the same stream, proves nothing more was on its way for the quiet one."""
    model = load(probe_config(unique_name("gen_final_apart"), final_apart="true"))
    stream = Stream(lab_server)
    try:
        stream.send(model, "quiet", steps=3, empty_final=False)
        stream.send(model, "told", steps=3)
        replies = stream.until(lambda got: final_of("told")(got) and len(tokens(got, "quiet")) == 3)
        stream.send(model, "marker", steps=1)
        replies = stream.until(final_of("marker"), replies)
    finally:
        stream.close()
    told = [r for r in replies if r.request == "told"]
    quiet = [r for r in replies if r.request == "quiet"]
    assert [(bool(r.outputs), r.final) for r in told] == [(True, False)] * 3 + [(False, True)], told
    assert [(bool(r.outputs), r.final) for r in quiet] == [(True, False)] * 3, quiet


def test_a_completed_generation_counts_one_cancelled_failure_on_2_51(lab_server, load):
    """When a generation ends (released without RESCHEDULE), the iterative sequencer enqueues a cancelled
    null request flagged END to free the sequence's place (sequence_utils.cc). On 2.51 the batcher answers
    that marker as cancelled, and Triton counts it: nv_inference_request_failure{reason="CANCELED"} rises by
    one per completed generation, while nv_inference_request_success counts every step as a success."""
    model = load(probe_config(unique_name("gen_failure")))

    def failures() -> float:
        return server_stats.model_metrics(lab_server.metrics_url, model).get(
            "nv_inference_request_failure{reason=CANCELED}", 0.0)

    def successes() -> float:
        return server_stats.model_metrics(lab_server.metrics_url, model).get("nv_inference_request_success", 0.0)

    assert failures() == 0.0
    stream = Stream(lab_server)
    try:
        for k in range(2):
            stream.send(model, f"g{k}", steps=3)
            stream.until(final_of(f"g{k}"))
    finally:
        stream.close()
    # Each step is counted when its execution returns, just after its responses went out: wait for all six.
    wait_for(lambda: successes() >= 6 and failures() >= 2, "six steps and two CANCELED failures counted")
    assert (successes(), failures()) == (6.0, 2.0)  # per step, not per generation; one marker per generation


def test_a_step_longer_than_the_idle_timeout_gets_the_generation_reaped_and_its_stream_never_ends(lab_server, load):
    """The idle timeout runs between a generation's requests to the batcher, and a rescheduled step is one:
    with each step (700 ms) longer than max_sequence_idle_microseconds (300 ms), the reaper ends the sequence
    while its first step runs, the rescheduled request is refused for lacking START, and the client gets its
    first token and then nothing, no final response."""
    model = load(probe_config(unique_name("gen_idle"), idle_us=300_000, step_ms="700"))
    with raised_verbosity(lab_server, 1):
        window = LogWindow.start(lab_server)
        stream = Stream(lab_server)
        try:
            stream.send(model, "slow", steps=3)
            replies = stream.until(lambda got: any(r.request == "slow" for r in got))
            corrid = replies[0].outputs["CORRID_SEEN"]
            wait_for_log(window, has_line(LogCode.REAPER_FORCE_END, corrid, model), f"the reaper end CORRID {corrid}")
            wait_for(lambda: [line for line in window.text().splitlines() if START_FLAG_ERROR in line and model in line],
                     f"the rescheduled request of {model} refused for lacking START")
            # A marker on the same stream: once its final is in, anything sent for "slow" before it is too.
            stream.send(model, "marker", steps=1)
            replies = stream.until(final_of("marker"), replies)
        finally:
            stream.close()
    slow = [r for r in replies if r.request == "slow"]
    assert len(slow) == 1 and not slow[0].final, slow


@pytest.fixture(scope="module")
def apart(lab_server):
    """A server of its own for cancels that reach a running request: on 2.51 such a cancel can crash the
    server (server#7368, fixed by server#7840 in 24.12), which must not take the session's server with it.
    An external server (TRITON_URL) is used as it is."""
    if not lab_server.is_embedded:
        yield lab_server
        return
    server = LabServer().start()
    yield server
    server.stop()


@pytest.fixture()
def load_apart(apart):
    loader = Loader(apart)
    yield lambda config: loader.load(config, code=PROBE)
    loader.unload_all()


@pytest.mark.parametrize(("honour", "frees_at_once"), [("false", True), ("true", False)])
def test_a_cancel_frees_the_place_at_once_only_when_the_model_ignores_it(apart, load_apart, tmp_path, honour,
                                                                        frees_at_once):
    """A generation is cancelled while the model runs its second step. A model that never asks reschedules
    it; the batcher finds it cancelled and releases its place at once. A model that honours the cancel
    answers with a final flag and releases it: Triton adds no END marker for a cancelled request, so the
    place stays taken until the reaper ends the sequence at the idle timeout (2 s here)."""
    gate = Gate(tmp_path)
    model = load_apart(probe_config(unique_name("gen_cancel"), rows=1, idle_us=2_000_000, step_ms="10",
                                    honour_cancel=honour, gate_dir=str(tmp_path)))
    with raised_verbosity(apart, 1):
        window = LogWindow.start(apart)
        stream = Stream(apart)
        closed = False
        try:
            stream.send(model, "cancelled", steps=50, tag=7, hold_at=2)
            corrid = stream.until(lambda got: any(r.request == "cancelled" for r in got))[0].outputs["CORRID_SEEN"]
            gate.wait_started(7)
            stream.close()
            closed = True
            wait_for_log(window, lambda es: any("Issuing cancellation for" in e.message for e in es),
                         "the cancellation reach the core")
            gate.open(7)
            assert gate.wait_done(7) == {"cancelled": True}
            code = LogCode.CANCELLED_RELEASED if frees_at_once else LogCode.REAPER_FORCE_END
            entries = wait_for_log(window, has_line(code, corrid, None if frees_at_once else model), f"{code} for {corrid}")
        finally:
            if not closed:
                stream.close()
    other = LogCode.REAPER_FORCE_END if frees_at_once else LogCode.CANCELLED_RELEASED
    assert not [e for e in entries if e.code == other and e.corrid == str(corrid)]


def test_a_cancel_between_steps_is_answered_by_the_batcher_and_holds_the_place_until_the_reaper(
        apart, load_apart, tmp_path):
    """Two places, one row per step. The first generation is held inside the model; the second, queued
    behind it, is cancelled there. The batcher answers the cancel itself (the model never sees that request
    again), and, with no END marker for a cancelled request, the second's place stays taken until the
    reaper ends it at the idle timeout."""
    gate = Gate(tmp_path)
    model = load_apart(probe_config(unique_name("gen_cancel_queued"), rows=1, candidates=2, idle_us=2_000_000,
                                    step_ms="10", honour_cancel="true", gate_dir=str(tmp_path)))
    with raised_verbosity(apart, 1):
        window = LogWindow.start(apart)
        running, queued = Stream(apart), Stream(apart)
        try:
            running.send(model, "running", steps=3, tag=1, hold_at=2)
            first = running.until(lambda got: any(r.request == "running" for r in got))[0].outputs["CORRID_SEEN"]
            gate.wait_started(1)
            queued.send(model, "queued", steps=3)
            entries = wait_for_log(window, lambda es: any(e.code == LogCode.SEQUENCE_ENQUEUED and e.corrid not in (None, str(first))
                                                          for e in es), "the second generation enqueued")
            second = next(e.corrid for e in entries if e.code == LogCode.SEQUENCE_ENQUEUED and e.corrid != str(first))
            queued.close()
            wait_for_log(window, lambda es: any("Issuing cancellation for" in e.message for e in es),
                         "the cancellation reach the core")
            gate.open(1)
            running.until(final_of("running"))
            entries = wait_for_log(window, has_line(LogCode.REAPER_FORCE_END, second, model), f"the reaper end CORRID {second}")
        finally:
            running.close()
            with suppress(Exception):  # closed already unless the test failed before the cancel
                queued.close()
    assert not [e for e in entries if e.code == LogCode.CANCELLED_RELEASED and e.corrid == second]
