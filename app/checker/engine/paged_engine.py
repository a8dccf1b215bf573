"""The lab's paged engine as the checker meets it: a generation engine with a paged KV cache inside a
decoupled model (model_repository/kv_engine and the lab's kv_lab_<hash> copies), which batches in
flight inside and answers each request with a stream of tokens. Codes and values only.

The checker knows this model by its inputs and outputs (as it knows the recogniser and the token
generator: compare.lab_model), and then:
  - compares TOKEN and POSITION only: the other outputs say where and when a token was made (the
    engine step, who shared it, the blocks held, the cache and queue then), which change with the
    traffic by design (PLACEMENT);
  - generates requests the engine can take: a PROMPT of PREFIX_BLOCKS whole blocks every request
    shares (a system prompt; the engine can serve those blocks from its cache) and 1 to 16 tokens
    of its own, MAX_TOKENS within the model's 1..256 (ANSWER_TOKENS: short, so the check stays
    quick), and its own TAG;
  - sends enough requests that together they need more KV cache than the deployment has
    (num_blocks x block_size, read from its config), all at once: memory pressure, where the
    engine must make requests wait or pre-empt them, on top of the shared prefix;
  - reads the engine's own outputs of that run as evidence (evidence()): the most requests
    waiting, the most computing in one step, the prompt blocks found in the cache;
  - where a stream differs from its lone run without continuing another request's stream
    (stream_diagnosis: not foreign), replays its request alone with the tokens it got up to the
    first differing one appended to its prompt (replay_tail). The model's outputs carry no
    scores, so nothing the checker sees can show how near two candidates were; what it can show
    is whether, after that one token, the stream is the model's own continuation of what it had
    generated: own_continuation true is what a near tie in float arithmetic leaves (one token
    changed, the rest the model's own), false is a stream that went on from a state that was not
    its own.
"""
from __future__ import annotations

import contextlib
import math
import queue
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from app.checker.engine.aliases import Arrays
from app.checker.engine.facts import ModelFacts
from app.checker.engine.inputs import DrawnSizes, Generated, InputsUsed, ShapeUsed


class StreamLike(Protocol):
    """What this module reads of a streams.Stream (streams.py imports this module, so not that class)."""

    request: int
    responses: list[Arrays]

# model_repository/kv_engine/config.pbtxt and 1/model.py (tests/checker/test_paged_engine_check.py holds them to it).
INPUTS = frozenset({"PROMPT", "MAX_TOKENS", "TAG"})
ANSWERS = ("TOKEN", "POSITION")
PLACEMENT = ("STEP", "STEP_TAGS", "STEP_TOKENS", "BLOCKS", "SHARED_BLOCKS", "PREFIX_BLOCKS", "FREE_BLOCKS",
             "CACHED_BLOCKS", "WAITING", "RUNNING")
MAX_TOKENS_LIMIT = 256  # model.py's MAX_TOKENS_LIMIT: 1..256
MAX_POSITIONS = 512  # paged.py's MAX_POSITIONS: a prompt and its answer together
VOCAB = 256  # the toy model's vocabulary: prompt ids are drawn in it
ANSWER_TOKENS = (4, 24)  # what the checker asks for, within 1..MAX_TOKENS_LIMIT
OWN_TOKENS = (1, 16)  # each request's own prompt tokens after the shared prefix
PREFIX_BLOCKS = 2  # the shared prefix, in whole blocks of the deployment's block_size
MIN_REQUESTS, MAX_REQUESTS = 12, 48
REPLAY_TIMEOUT_S = 30.0
FINAL = "triton_final_response"


def is_paged(facts: ModelFacts) -> bool:
    """The lab's paged engine, by its inputs and outputs."""
    outputs = {t.name for t in facts.outputs}
    return ({t.name for t in facts.inputs} == INPUTS and "TOKEN" in outputs and outputs <= {*ANSWERS, *PLACEMENT}
            and facts.decoupled)


def _parameter(facts: ModelFacts, name: str, default: int) -> int:
    value = ((facts.config.get("parameters") or {}).get(name) or {}).get("string_value")
    try:
        return int(value) if value not in (None, "") else default
    except ValueError:
        return default


def cache_tokens(facts: ModelFacts) -> tuple[int, int]:
    """(num_blocks, block_size) of the deployment's cache, from its config parameters (model.py's defaults)."""
    return _parameter(facts, "num_blocks", 64), _parameter(facts, "block_size", 16)


def request_count(facts: ModelFacts, asked: int | None) -> int:
    """--sessions when given; else enough requests that their prompts and answers, all at once,
    need more KV cache than the deployment has (at least MIN_REQUESTS, at most MAX_REQUESTS)."""
    if asked:
        return asked
    blocks, size = cache_tokens(facts)
    mean = PREFIX_BLOCKS * size + sum(OWN_TOKENS) / 2 + sum(ANSWER_TOKENS) / 2
    return max(MIN_REQUESTS, min(MAX_REQUESTS, math.ceil(1.25 * blocks * size / mean)))


@dataclass
class PagedInputs(Generated):
    """Generated requests the engine takes: a shared prefix, each request's own tokens (their
    count drawn from OWN_TOKENS by `sizes`), MAX_TOKENS from ANSWER_TOKENS, TAG the request's number."""

    prefix: tuple[int, ...] = ()
    fits: int = MAX_POSITIONS  # the most tokens (prompt and answer) one request may need

    def request(self, session: int) -> tuple[list[int], int]:
        """(prompt, max_tokens) of request `session`, cut to fit the cache and the model's
        positions (the engine refuses a request that could never run, and says so)."""
        rng = np.random.default_rng([self.seed, session, 101])
        assert self.sizes is not None  # built by paged_inputs()
        own = [int(t) for t in rng.integers(0, VOCAB, size=self.sizes.size(session, 0))]
        answer = int(rng.integers(ANSWER_TOKENS[0], ANSWER_TOKENS[1] + 1))
        prompt = [*self.prefix, *own][: max(1, self.fits - 1)]
        return prompt, max(1, min(answer, self.fits - len(prompt)))

    def arrays(self, session: int, step: int) -> Arrays:
        prompt, max_tokens = self.request(session)
        return {"PROMPT": np.array(prompt, dtype=np.int32), "MAX_TOKENS": np.array([max_tokens], dtype=np.int32),
                "TAG": np.array([session + 1], dtype=np.uint64)}

    def used(self) -> InputsUsed:
        """The prompts' lengths as sent (the shared prefix included), as the report says drawn sizes."""
        lengths = [len(self.request(session)[0]) for session in range(len(self.lengths))]
        low, high = min(lengths, default=0), max(lengths, default=0)
        shapes = []
        for spec in self.facts.inputs:
            if spec.name == "PROMPT":
                shapes.append(ShapeUsed(spec.name, spec.dims, "drawn", (low,), (high,)))
            else:
                shapes.append(ShapeUsed(spec.name, spec.dims, "model", spec.dims, spec.dims))
        return InputsUsed(DrawnSizes(low, high, "request", self.seed), tuple(shapes))


def paged_inputs(facts: ModelFacts, count: int, seed: int) -> PagedInputs:
    blocks, size = cache_tokens(facts)
    rng = np.random.default_rng([seed, 100])
    # A small cache gets a shorter prefix: at most half of it, so requests still fit beside it.
    prefix = tuple(int(t) for t in rng.integers(0, VOCAB, size=min(PREFIX_BLOCKS, blocks // 2) * size))
    dims: dict[str, tuple[int, ...] | None] = {spec.name: None if spec.variable else spec.dims for spec in facts.inputs}
    return PagedInputs(facts, dims, [1] * count, seed, DrawnSizes(OWN_TOKENS[0], OWN_TOKENS[1], "request", seed), prefix=prefix,
                       fits=min(MAX_POSITIONS, blocks * size))


def _scalar(response: Arrays, name: str) -> int | None:
    value = response.get(name)
    return None if value is None or np.size(value) == 0 else int(np.asarray(value).reshape(-1)[0])


def evidence(facts: ModelFacts, source: PagedInputs, streams: Sequence[StreamLike]) -> dict[str, int | bool]:
    """What the engine's own outputs say of a run: the cache against what the requests needed,
    the most requests waiting and computing in one step, and the prompt blocks found in the cache
    (per request: PREFIX_BLOCKS of its first response)."""
    blocks, size = cache_tokens(facts)
    demand = 0
    for s in streams:
        prompt, max_tokens = source.request(s.request)
        demand += len(prompt) + max_tokens
    responses = [r for s in streams for r in s.responses]
    waiting = [v for v in (_scalar(r, "WAITING") for r in responses) if v is not None]
    in_step = [len(np.asarray(r["STEP_TAGS"]).reshape(-1)) for r in responses if r.get("STEP_TAGS") is not None]
    prefix = [_scalar(s.responses[0], "PREFIX_BLOCKS") for s in streams if s.responses]
    found = [p for p in prefix if p]
    return {"cache_tokens": blocks * size, "demand_tokens": demand, "pressure": demand > blocks * size,
            "most_waiting": max(waiting, default=0), "most_in_a_step": max(in_step, default=0),
            "shared_prefix_blocks": len(source.prefix) // size, "requests_with_prefix_from_cache": len(found),
            "prefix_blocks_from_cache": int(sum(found))}


def replay_tail(grpc_url: str, model: str, prompt: list[int], got: list[int], wrong: int) -> bool | None:
    """Whether got[wrong + 1:] is what the model generates alone from prompt + got[:wrong + 1]
    (None: nothing after the differing token to compare, or the replay did not end)."""
    rest = got[wrong + 1:]
    if not rest or len(rest) > MAX_TOKENS_LIMIT:
        return None
    events: queue.Queue[str] = queue.Queue()
    tokens: list[int] = []
    client = grpcclient.InferenceServerClient(grpc_url)

    def heard(result: grpcclient.InferResult, error: InferenceServerException | None) -> None:
        if error is not None:
            events.put("error")
            return
        response = result.get_response()
        if response.outputs:
            tokens.append(int(result.as_numpy("TOKEN").reshape(-1)[0]))
        if FINAL in response.parameters and response.parameters[FINAL].bool_param:
            events.put("final")

    arrays = {"PROMPT": (np.array([*prompt, *got[:wrong + 1]], dtype=np.int32), "INT32"),
              "MAX_TOKENS": (np.array([len(rest)], dtype=np.int32), "INT32")}
    inputs = []
    for name, (array, datatype) in arrays.items():
        tensor = grpcclient.InferInput(name, list(array.shape), datatype)
        tensor.set_data_from_numpy(array)
        inputs.append(tensor)
    try:
        client.start_stream(callback=heard)
        client.async_stream_infer(model, inputs, request_id="replay", enable_empty_final_response=True)
        try:
            if events.get(timeout=REPLAY_TIMEOUT_S) != "final":
                return None
        except queue.Empty:
            return None
    finally:
        with contextlib.suppress(Exception):
            client.stop_stream(cancel_requests=True)
        client.close()
    return tokens == rest


def stream_tokens(stream: StreamLike) -> list[int]:
    return [v for v in (_scalar(r, "TOKEN") for r in stream.responses) if v is not None]
