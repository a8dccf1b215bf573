"""Claims about the paged engine (model_repository/kv_engine): what lesson 9, the lab and the
benchmark say it does, proved on a real Triton.

The engine is transformers' continuous batching with a paged KV cache inside a decoupled
Python-backend model (max_batch_size 0). Each claim is one test:
  - a client that knows only the model's metadata gets the same stream alone and in flight;
  - the blocks-in-use gauge returns to zero after a run and after a cancel mid-generation, and
    the cancelled request's neighbours finish as if alone;
  - an empty prompt, a prompt the cache could never hold and an absurd MAX_TOKENS get an error
    naming the limit, and neighbours still finish;
  - fewer blocks: fewer requests running at once and later first tokens, the same tokens;
  - prefix sharing on: a later request finds its shared prompt's blocks in the cache; off: none;
  - a long prompt with a small step budget is computed in several steps, none over the budget.

Deployments other than the shipped kv_engine are loaded through app.generation.paged.engine.ensure
(`kv_lab_<hash>`, one per distinct setting) and stay loaded for the module, so the server starts
once and each deployment loads once.
"""
from __future__ import annotations

import math
import queue
import threading
from typing import Any

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException, triton_to_np_dtype

from app.generation.engine.workload import PlannedRequest
from app.generation.paged.engine import PagedSettings, PagedWorkload, alone, analysis, ensure, run, settle
from app.lab.scenario.ids import unique_ids

FINAL = "triton_final_response"
SHIPPED = PagedSettings()  # kv_engine's config: 64 blocks of 16, a budget of 128, fifo, sharing on
SMALL_CACHE = PagedSettings(num_blocks=8)  # 128 tokens: one or two of the workload's requests at a time
NO_SHARING = PagedSettings(prefix_sharing=False)
SMALL_BUDGET = PagedSettings(max_batch_tokens=32)
# Long steps, so a request that was not really cancelled would still hold its blocks long after
# settle() gives up (256 tokens x 40 ms = 10 s, against settle's 5 s).
SLOW = PagedSettings(step_ms=40)
WORKLOAD = PagedWorkload(requests=8, mean_gap_ms=20, system_tokens=32, seed=3)


@pytest.fixture()
def deployed(lab_server):
    """settings -> the deployment's name, loaded if it was not (ensure loads each set-up once)."""
    return lambda settings: ensure(lab_server, settings)


# -- a client that knows only the model's metadata --------------------------------------------------

class StreamClient:
    """Sends requests on one gRPC stream and collects each one's responses until its final flag
    (enable_empty_final_response), as any client of a decoupled model does. An error on a gRPC
    stream names no request, so a stream that may meet one carries one request only."""

    def __init__(self, url: str):
        self.client = grpcclient.InferenceServerClient(url)
        self.responses: dict[str, list[dict[str, np.ndarray[Any, Any]]]] = {}
        self.errors: list[str] = []
        self.ended: set[str] = set()
        self.events: queue.Queue[str] = queue.Queue()
        self.lock = threading.Lock()
        self.client.start_stream(callback=self._heard)

    def _heard(self, result: Any, error: InferenceServerException | None) -> None:
        if error is not None:
            with self.lock:
                self.errors.append(error.message())
            self.events.put("error")
            return
        response = result.get_response()
        with self.lock:
            if response.outputs:
                self.responses.setdefault(response.id, []).append(
                    {out.name: result.as_numpy(out.name) for out in response.outputs})
            if FINAL in response.parameters and response.parameters[FINAL].bool_param:
                self.ended.add(response.id)
        self.events.put(response.id)

    def send(self, model: str, request_id: str, arrays: dict[str, np.ndarray[Any, Any]], datatypes: dict[str, str]) -> None:
        inputs = []
        for name, array in arrays.items():
            tensor = grpcclient.InferInput(name, list(array.shape), datatypes[name])
            tensor.set_data_from_numpy(array)
            inputs.append(tensor)
        self.client.async_stream_infer(model, inputs, request_id=request_id, enable_empty_final_response=True)

    def wait(self, ids: set[str], errors: int = 0, timeout_s: float = 60) -> None:
        """Until every request in `ids` has its final response and `errors` errors were heard."""
        while True:
            with self.lock:
                if ids <= self.ended and len(self.errors) >= errors:
                    return
            try:
                self.events.get(timeout=timeout_s)
            except queue.Empty:
                raise AssertionError(f"waited {timeout_s} s for {sorted(ids - self.ended)} to end") from None

    def tokens(self, request_id: str) -> list[int]:
        return [int(r["TOKEN"].reshape(-1)[0]) for r in self.responses.get(request_id, [])]

    def close(self) -> None:
        self.client.stop_stream()
        self.client.close()


def metadata_inputs(url: str, model: str, count: int, seed: int) -> tuple[list[dict[str, np.ndarray[Any, Any]]], dict[str, str]]:
    """`count` requests built from the model's metadata and config alone: every required input,
    its variable dimensions drawn from 8 to 40, values drawn from 0 to 999 (optional inputs are
    left out, as a client that knows nothing else would)."""
    client = grpcclient.InferenceServerClient(url)
    try:
        metadata = client.get_model_metadata(model, as_json=True)
        config = client.get_model_config(model, as_json=True)["config"]
    finally:
        client.close()
    optional = {i["name"] for i in config.get("input", []) if i.get("optional")}
    specs = [(i["name"], i["datatype"], [int(d) for d in i["shape"]]) for i in metadata["inputs"] if i["name"] not in optional]
    rng = np.random.default_rng(seed)
    requests = []
    for _ in range(count):
        size = int(rng.integers(8, 41))
        requests.append({name: rng.integers(0, 1000, size=[size if d < 0 else d for d in dims]).astype(triton_to_np_dtype(datatype))
                         for name, datatype, dims in specs})
    return requests, {name: datatype for name, datatype, _ in specs}


def test_a_metadata_only_client_gets_the_same_streams_alone_and_in_flight(lab_server, deployed):
    model = deployed(SHIPPED)
    requests, datatypes = metadata_inputs(lab_server.grpc_url, model, count=6, seed=11)
    assert set(datatypes) == {"PROMPT"}  # MAX_TOKENS and TAG are optional: this client sends neither
    lone = {}
    for i, arrays in enumerate(requests):
        client = StreamClient(lab_server.grpc_url)
        try:
            client.send(model, f"alone-{i}", arrays, datatypes)
            client.wait({f"alone-{i}"})
            lone[i] = client.tokens(f"alone-{i}")
        finally:
            client.close()
    client = StreamClient(lab_server.grpc_url)
    try:
        for i, arrays in enumerate(requests):
            client.send(model, f"together-{i}", arrays, datatypes)
        client.wait({f"together-{i}" for i in range(len(requests))})
        together = {i: client.tokens(f"together-{i}") for i in range(len(requests))}
        running = max(int(r["RUNNING"].reshape(-1)[0]) for rs in client.responses.values() for r in rs)
    finally:
        client.close()
    assert running > 1  # they did share the engine's steps
    assert all(len(t) > 0 for t in lone.values())
    assert together == lone
    after = settle(lab_server.metrics_url, model)
    assert after["kv_blocks_used"] == 0 and after["kv_requests_running"] == 0


def test_blocks_in_use_return_to_zero_after_a_run_and_after_a_cancel(lab_server, deployed):
    plans = WORKLOAD.plan()
    victim = plans[0]
    plans[0] = PlannedRequest(index=victim.index, tag=victim.tag, arrival_s=0.0, prompt=victim.prompt, max_tokens=256)
    references = alone(lab_server, SLOW, plans[1:])
    result = run(lab_server, SLOW, plans, cancel_after={victim.index: 3})
    requests = analysis.requests_table(result.stream.trace, plans)
    cancelled = requests[requests["index"] == victim.index].iloc[0]
    assert cancelled["status"] == analysis.CANCELLED and cancelled["tokens"] < 256
    # run() waits (settle) until no block is in use; it gives up after 5 s, long before the
    # cancelled request's 256 tokens at 40 ms a step would have freed its blocks by finishing.
    assert result.gauges_after["kv_blocks_used"] == 0
    assert result.gauges_after["kv_requests_running"] == 0 and result.gauges_after["kv_requests_waiting"] == 0
    neighbours = requests[requests["index"] != victim.index]
    assert (neighbours["status"] == analysis.COMPLETE).all()
    assert analysis.equal_alone(neighbours, references) == {i: True for i in references}


def _one(url: str, model: str, request_id: str, prompt: list[int], max_tokens: int | None) -> StreamClient:
    client = StreamClient(url)
    arrays = {"PROMPT": np.array(prompt, dtype=np.int32)}
    if max_tokens is not None:
        arrays["MAX_TOKENS"] = np.array([max_tokens], dtype=np.int32)
    client.send(model, request_id, arrays, {"PROMPT": "INT32", "MAX_TOKENS": "INT32"})
    return client


def test_impossible_requests_get_an_error_naming_the_limit_and_neighbours_finish(lab_server, deployed):
    model = deployed(SMALL_CACHE)  # 8 blocks of 16: a whole cache of 128 tokens
    plans = PagedWorkload(requests=3, mean_gap_ms=0, system_tokens=8, seed=5).plan()
    references = alone(lab_server, SMALL_CACHE, plans)
    neighbours = StreamClient(lab_server.grpc_url)
    bad: dict[str, StreamClient] = {}
    try:
        for plan in plans:
            neighbours.send(model, f"n{plan.index}", {"PROMPT": np.array(plan.prompt, dtype=np.int32),
                                                     "MAX_TOKENS": np.array([plan.max_tokens], dtype=np.int32)},
                            {"PROMPT": "INT32", "MAX_TOKENS": "INT32"})
        bad["empty"] = _one(lab_server.grpc_url, model, "empty", [], 8)
        bad["cache"] = _one(lab_server.grpc_url, model, "cache", list(range(120)), 16)
        bad["absurd"] = _one(lab_server.grpc_url, model, "absurd", [1, 2, 3], 1_000_000)
        for client in bad.values():
            client.wait(set(), errors=1)
        neighbours.wait({f"n{p.index}" for p in plans})
    finally:
        neighbours.close()
        for client in bad.values():
            client.close()
    assert "PROMPT must hold at least 1 token" in bad["empty"].errors[0]
    assert "whole cache holds 128" in bad["cache"].errors[0]
    assert "MAX_TOKENS must be 1 to 256, got 1000000" in bad["absurd"].errors[0]
    assert {p.index: neighbours.tokens(f"n{p.index}") for p in plans} == references
    assert settle(lab_server.metrics_url, model)["kv_blocks_used"] == 0


def test_fewer_blocks_run_fewer_requests_at_once_later_with_the_same_tokens(lab_server, deployed):
    plans = WORKLOAD.plan()
    figures = {}
    together = {}
    received = {}
    for settings in (SHIPPED, SMALL_CACHE):
        result = run(lab_server, settings, plans)
        requests = analysis.requests_table(result.stream.trace, plans)
        assert (requests["status"] == analysis.COMPLETE).all()
        figures[settings] = analysis.figures(result.stream.trace, requests, WORKLOAD.system_tokens, settings.block_size)
        # Running at once: the requests that computed tokens in one engine step (its STEP_TAGS).
        together[settings] = int(analysis.steps_table(result.stream.trace)["requests"].max())
        received[settings] = dict(zip(requests["index"], requests["received"], strict=True))
        assert result.gauges_after["kv_blocks_used"] == 0
    big, small = figures[SHIPPED], figures[SMALL_CACHE]
    assert together[SMALL_CACHE] < together[SHIPPED]
    assert small.peak_waiting > 0
    assert small.ttft_p95_ms > big.ttft_p95_ms
    assert received[SMALL_CACHE] == received[SHIPPED]
    assert received[SHIPPED] == alone(lab_server, SHIPPED, plans)


def test_prefix_sharing_serves_a_later_requests_prompt_blocks_from_the_cache(lab_server, deployed):
    workload = PagedWorkload(requests=4, mean_gap_ms=30, system_tokens=48, seed=8)
    shared_blocks = workload.system_tokens // SHIPPED.block_size
    prefix = {}
    for settings in (SHIPPED, NO_SHARING):
        plans = workload.plan()
        # The first request runs to its end before the others are sent: its prompt's blocks are
        # in the cache by then, whatever the machine's load.
        first = run(lab_server, settings, plans[:1])
        assert analysis.requests_table(first.stream.trace, plans[:1])["status"].eq(analysis.COMPLETE).all()
        result = run(lab_server, settings, plans[1:])
        requests = analysis.requests_table(result.stream.trace, plans[1:])
        assert (requests["status"] == analysis.COMPLETE).all()
        prefix[settings.prefix_sharing] = [int(n) for n in requests["prefix_blocks"]]
    assert all(0 < n <= shared_blocks + 1 for n in prefix[True])
    assert all(n == 0 for n in prefix[False])


def _long_prompt_steps(lab_server, settings: PagedSettings, long_tokens: int) -> tuple[int, int]:
    """A long prompt arriving while another request decodes: how many engine steps computed part
    of it (the steps, seen in the neighbour's responses, whose STEP_TAGS hold its TAG, up to the
    step that made its first token) and the STEP_TOKENS of that last step."""
    rng = np.random.default_rng(4)
    tags = unique_ids(2)
    neighbour = PlannedRequest(index=0, tag=int(tags[0]), arrival_s=0.0,
                               prompt=tuple(int(t) for t in rng.integers(0, 256, size=8)), max_tokens=48)
    long = PlannedRequest(index=1, tag=int(tags[1]), arrival_s=0.1,
                          prompt=tuple(int(t) for t in rng.integers(0, 256, size=long_tokens)), max_tokens=2)
    result = run(lab_server, settings, [neighbour, long])
    tokens = analysis.token_rows(result.stream.trace)
    first = tokens[tokens["index"] == long.index].sort_values("position").iloc[0]
    near = tokens[(tokens["index"] == neighbour.index) & (tokens["step"] < first["step"])]
    earlier = {int(r.step) for r in near.itertuples() if long.tag in set(r.step_tags)}
    assert int(tokens[tokens["index"] == neighbour.index]["step"].max()) > first["step"]  # it decoded throughout
    return len(earlier) + 1, int(first["step_tokens"])


def test_a_long_prompt_under_a_small_step_budget_is_computed_in_chunks(lab_server, deployed):
    long_tokens = 100
    steps, last = _long_prompt_steps(lab_server, SMALL_BUDGET, long_tokens)
    assert steps >= math.ceil(long_tokens / SMALL_BUDGET.max_batch_tokens)
    assert 0 < last <= SMALL_BUDGET.max_batch_tokens
    # The shipped budget of 128 takes the same prompt in one step.
    steps, last = _long_prompt_steps(lab_server, SHIPPED, long_tokens)
    assert (steps, last) == (1, long_tokens)

