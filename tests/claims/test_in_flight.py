"""Claims of lesson 8 about static and in-flight batching and iterative sequences, on the embedded server (2.51).

Requests go out on raw gRPC streams (tritonclient), so a test can send the next request when the event it waits for
has happened (a first token received, a line in the server's log), never after a fixed time. Every token response
of the generator names the execution that made it (EXECUTION) and how many requests it held (BATCH).

Sources (r24.10): server docs/user_guide/model_configuration.md (Iterative Sequences); common
protobuf/model_config.proto (StrategyOldest); core src/sequence_batch_scheduler/sequence_utils.{h,cc}
(IterativeSequencer), sequence_batch_scheduler.cc (a request without START for an unknown ID is refused),
src/infer_request.cc (RESCHEDULE refused without iterative_sequence); python_backend src/python_be.cc.
"""
from __future__ import annotations

import queue
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tritonclient.grpc as grpc
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2 as mc

from app.generation.engine import GeneratorSettings
from app.lab.observation import LogWindow
from app.lab.scenario.ids import unique_ids
from tests.claims.helpers import START_FLAG_ERROR, deployed, unique_name
from tests.server_calls import ask
from tests.waiting import wait_for

RESCHEDULE_PROBE = Path(__file__).parent / "models" / "reschedule_probe.py"
RESCHEDULE_REFUSED = ("Request is released with TRITONSERVER_REQUEST_RELEASE_RESCHEDULE, while the model is not "
                      "configured to handle such a flag")


@dataclass(frozen=True)
class Reply:
    request: str
    t: float  # client receive time, monotonic seconds
    final: bool
    outputs: dict[str, int]


class Stream:
    """One gRPC stream: send requests by id, read their replies in the order they arrive."""

    def __init__(self, server):
        self.replies: queue.Queue = queue.Queue()
        self.client = grpc.InferenceServerClient(server.grpc_url)
        self.client.start_stream(callback=self._got)

    def _got(self, result, error) -> None:
        if error is not None:  # until() fails with it (the stream's own cancel at close() is never read)
            self.replies.put(error)
            return
        response = result.get_response()
        outputs = {o.name: int(result.as_numpy(o.name).reshape(-1)[0]) for o in response.outputs}
        self.replies.put(Reply(response.id, time.monotonic(), response.parameters["triton_final_response"].bool_param,
                               outputs))

    def send(self, model: str, request: str, inputs: dict[str, np.ndarray], **sequence) -> None:
        tensors = []
        for name, value in inputs.items():
            tensor = grpc.InferInput(name, list(value.shape), "UINT64" if value.dtype == np.uint64 else "INT32")
            tensor.set_data_from_numpy(value)
            tensors.append(tensor)
        self.client.async_stream_infer(model, tensors, request_id=request, enable_empty_final_response=True, **sequence)

    def until(self, done, seen: list[Reply] | None = None) -> list[Reply]:
        """Replies (after `seen`) until done(replies) is true."""
        seen = list(seen or [])
        while not done(seen):
            reply = self.replies.get(timeout=60)
            assert isinstance(reply, Reply), f"the stream failed: {reply}"
            seen.append(reply)
        return seen

    def close(self) -> None:
        self.client.stop_stream(cancel_requests=True)  # a request left without a final response is cancelled
        self.client.close()


def generation(prompt: tuple[int, int, int, int], tokens: int, tag: int) -> dict[str, np.ndarray]:
    return {"PROMPT": np.array([prompt], dtype=np.int32), "MAX_TOKENS": np.array([[tokens]], dtype=np.int32),
            "TAG": np.array([[tag]], dtype=np.uint64)}


def final_of(request: str):
    return lambda replies: any(r.request == request and r.final for r in replies)


def of(replies: list[Reply], request: str) -> list[Reply]:
    """A request's token replies (an empty final response carries no outputs)."""
    return [r for r in replies if r.request == request and r.outputs]


def newcomer(server, model: str, long_tokens: int = 12, short_tokens: int = 2) -> tuple[list[Reply], list[Reply]]:
    """A long generation starts; the moment its first token is in, a short one is sent. (long's, short's) replies."""
    tags = unique_ids(2)
    stream = Stream(server)
    try:
        stream.send(model, "long", generation((1, 2, 3, 4), long_tokens, int(tags[0])))
        replies = stream.until(lambda got: any(r.request == "long" for r in got))
        stream.send(model, "short", generation((5, 6, 7, 8), short_tokens, int(tags[1])))
        replies = stream.until(lambda got: final_of("long")(got) and final_of("short")(got), replies)
    finally:
        stream.close()
    long, short = of(replies, "long"), of(replies, "short")
    assert (len(long), len(short)) == (long_tokens, short_tokens), replies
    return long, short


def test_a_static_batch_makes_a_newcomer_wait_for_the_whole_batch(lab_server, generators):
    """gen_static generates a batch to its end in one execution: a request that arrives once the batch is under way
    gets its first token only after the batch's last, from an execution of its own."""
    long, short = newcomer(lab_server, "gen_static")
    assert len({r.outputs["EXECUTION"] for r in long}) == 1  # the whole long generation in one execution
    assert short[0].t > long[-1].t
    assert short[0].outputs["EXECUTION"] not in {r.outputs["EXECUTION"] for r in long}


def test_in_flight_a_newcomer_joins_the_running_generation_and_leaves_before_it(lab_server, generators):
    """gen_inflight runs one step per execution: the newcomer's steps run between the long generation's steps
    (beside them, or alone while the long one is on its way back to the queue), and its two tokens are done while
    the long one is still generating."""
    long, short = newcomer(lab_server, "gen_inflight")
    running = [r.outputs["EXECUTION"] for r in long]
    assert len(set(running)) == len(long)  # one step per execution
    assert running[0] < short[0].outputs["EXECUTION"] < running[-1]
    assert short[0].t < short[-1].t < long[-1].t


def test_a_client_id_with_start_and_end_on_an_iterative_request_gets_one_token_then_the_start_flag_refusal(
        lab_server, generators):
    """The client numbers an iterative request itself and sets START and END on it (server issue 8167): Triton keeps
    them, forgets the ID at END, and the rescheduled copy, its flags cleared, is refused for lacking START. The
    client gets one token; a plain request sent after the refusal still runs to its end."""
    own, tag, plain = (int(v) for v in unique_ids(3))
    window = LogWindow.start(lab_server)
    stream = Stream(lab_server)
    try:
        stream.send("gen_inflight", "own", generation((1, 2, 3, 4), 3, tag), sequence_id=own, sequence_start=True,
                    sequence_end=True)
        refused = wait_for(lambda: [line for line in window.text().splitlines()
                                    if START_FLAG_ERROR in line and str(own) in line],
                           f"the START-flag refusal of sequence {own} in the server log")
        # Once refused, nothing of "own" is queued any more: a plain request sent now runs to its end alone.
        stream.send("gen_inflight", "plain", generation((5, 6, 7, 8), 2, plain))
        replies = stream.until(final_of("plain"))
    finally:
        stream.close()
    mine = [r for r in replies if r.request == "own"]
    assert len(mine) == 1 and not mine[0].final and mine[0].outputs["STEP"] == 0, (mine, refused)
    assert len(of(replies, "plain")) == 2


def reschedule_probe_config(name: str) -> mc.ModelConfig:
    text = f"""
name: "{name}"
backend: "python"
max_batch_size: 4
input [ {{ name: "X" data_type: TYPE_INT32 dims: [ 1 ] }} ]
output [ {{ name: "EXECUTION" data_type: TYPE_INT32 dims: [ 1 ] }} ]
model_transaction_policy {{ decoupled: true }}
dynamic_batching {{ }}
instance_group [ {{ count: 1 kind: KIND_CPU }} ]
"""
    return text_format.Parse(text, mc.ModelConfig())


def test_rescheduling_without_iterative_sequence_is_refused_in_the_log_and_the_request_runs_no_more(lab_server):
    """A decoupled Python model on the dynamic batcher releases a request with RESCHEDULE: Triton refuses the flag
    (an error in its log), the backend releases the request, and it is never executed again: the next request's
    execution is the very next one."""
    with deployed(lab_server, reschedule_probe_config(unique_name("reschedule")), code=RESCHEDULE_PROBE) as names:
        window = LogWindow.start(lab_server)
        stream = Stream(lab_server)
        x = {"X": np.array([[1]], dtype=np.int32)}
        try:
            stream.send(names[0], "first", x)
            wait_for(lambda: RESCHEDULE_REFUSED in window.text(), "the RESCHEDULE refusal in the server log")
            stream.send(names[0], "second", x)
            replies = stream.until(lambda got: any(r.request == "second" for r in got))
        finally:
            stream.close()
    first = [r for r in replies if r.request == "first"]
    second = [r for r in replies if r.request == "second"]
    assert len(first) == 1 and not first[0].final, replies
    assert second[0].outputs["EXECUTION"] == first[0].outputs["EXECUTION"] + 1


def test_oldest_runs_only_its_candidates_and_a_finished_generation_frees_its_place_for_the_backlog(lab_server):
    """With max_candidate_sequences 1 (max_batch_size 4), three generations sent at once run one after the other:
    each step holds one request, the next starts only after the one before sent its last token, and each step is
    one execution and one inference."""
    config = GeneratorSettings(step_ms=5).to_config(unique_name("gen_one_candidate"))
    config.sequence_batching.oldest.max_candidate_sequences = 1
    tokens = 4
    with deployed(lab_server, config) as names:
        def counts() -> tuple[int, int]:
            stats = ask(lab_server, "get_inference_statistics", names[0])["model_stats"][0]
            return int(stats.get("inference_count", 0)), int(stats.get("execution_count", 0))

        before = counts()
        stream = Stream(lab_server)
        try:
            for k, tag in enumerate(unique_ids(3)):
                stream.send(names[0], f"g{k}", generation((k, 1, 2, 3), tokens, int(tag)))
            replies = stream.until(lambda got: all(final_of(f"g{k}")(got) for k in range(3)))
        finally:
            stream.close()
        total = 3 * tokens
        # An execution is counted just after its responses go out: wait until all are.
        after = wait_for(lambda: (c := counts())[1] >= before[1] + total and c, f"{total} executions counted")
    made = [r for r in replies if r.outputs]
    assert {r.outputs["BATCH"] for r in made} == {1}
    runs = [k for k, r in enumerate(made) if k == 0 or r.request != made[k - 1].request]
    assert len(runs) == 3, [r.request for r in made]  # each stream whole before the next starts
    assert [b - a for a, b in zip(before, after, strict=True)] == [total, total]


def test_a_decoupled_generator_is_refused_on_the_http_endpoint_and_the_unary_rpc_and_streams_over_grpc(
        lab_server, generators):
    """A decoupled model may send any number of responses per request, so Triton serves it only on the gRPC stream:
    the HTTP infer endpoint and the unary ModelInfer RPC refuse it (server r24.10 src/http_server.cc and
    src/grpc/infer_handler.cc check the model's TRITONSERVER_TXN_DECOUPLED property), while the stream delivers one
    response per token."""
    import tritonclient.http as http
    from tritonclient.utils import InferenceServerException

    inputs = generation((1, 2, 3, 4), 3, int(unique_ids(1)[0]))
    refusals = []
    for module, url in ((http, lab_server.url), (grpc, lab_server.grpc_url)):
        tensors = []
        for name, value in inputs.items():
            tensor = module.InferInput(name, list(value.shape), "UINT64" if value.dtype == np.uint64 else "INT32")
            tensor.set_data_from_numpy(value)
            tensors.append(tensor)
        client = module.InferenceServerClient(url)
        try:
            client.infer("gen_inflight", tensors)
        except InferenceServerException as err:
            refusals.append(err.message())
        finally:
            client.close()
    assert len(refusals) == 2, refusals
    assert "HTTP end point doesn't support models with decoupled transaction policy" in refusals[0]
    assert "ModelInfer RPC doesn't support models with decoupled transaction policy" in refusals[1]
    stream = Stream(lab_server)
    try:
        stream.send("gen_inflight", "three", inputs)
        replies = stream.until(final_of("three"))
    finally:
        stream.close()
    assert len(of(replies, "three")) == 3
