"""A real in-flight batching engine with a paged KV cache: transformers' continuous batching,
around a small causal LM made from a seed, with every step it takes written down.

Free of Triton so that it runs (and is tested) on its own; model.py puts it inside Triton the way
the vLLM backend puts vLLM there. The engine itself is transformers' (`init_continuous_batching`):
its scheduler, its PagedAttentionCache and its block tables are read, never re-implemented. Two
small hooks record what happened at each step, because the engine keeps no history:
  - a scheduler subclass (registered under its own name in transformers' SCHEDULER_MAPPING)
    notes, right after the engine picks a step's requests, who is in the step, how many tokens
    each computes, which blocks each holds, and what is free, cached and waiting;
  - the output router's deliver_batch, called in the engine's thread right after that step,
    stamps every token with that step's record before handing it on.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM
from transformers.generation.configuration_utils import ContinuousBatchingConfig
from transformers.generation.continuous_batching import scheduler as cb_scheduler

# The toy model: small enough for a laptop's CPU, varied enough that greedy decoding does not
# collapse to one token (a large initializer_range; the default 0.02 repeats one token).
VOCAB = 256
LAYERS = 2
HIDDEN = 64
HEADS = 4
KV_HEADS = 2
HEAD_DIM = HIDDEN // HEADS
MAX_POSITIONS = 512
DTYPE = torch.float32
BYTES_PER_VALUE = 4
# What one token's keys and values cost in the cache: layers x KV heads x head size x 2 (K and V)
# x bytes per value. 2 x 2 x 16 x 2 x 4 = 512 bytes for the toy.
KV_BYTES_PER_TOKEN = LAYERS * KV_HEADS * HEAD_DIM * 2 * BYTES_PER_VALUE
SCHEDULERS = ("fifo", "prefill_first")


def build_model(seed: int, device: torch.device) -> LlamaForCausalLM:
    """The same weights for the same seed, made here (nothing is downloaded)."""
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=2 * HIDDEN,
                         num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
                         max_position_embeddings=MAX_POSITIONS, initializer_range=0.3)
    model = LlamaForCausalLM(config).to(device=device, dtype=DTYPE)
    model.eval()
    return model


@dataclass(frozen=True)
class EngineSettings:
    num_blocks: int = 64
    block_size: int = 16
    max_batch_tokens: int = 128
    scheduler: str = "fifo"
    prefix_sharing: bool = True
    max_requests_per_batch: int = 16
    seed: int = 0


@dataclass
class StepRecord:
    """One engine step: who ran, how many tokens each computed, the block table around it."""

    step: int
    requests: dict[str, int]  # request id -> tokens it computed in this step
    tags: list[int]  # the clients' TAGs of those requests, in the same order
    blocks: dict[str, list[int]]  # request id -> the block ids it holds (every running request)
    shared: set[int]  # blocks that more than one request holds
    free_blocks: int
    cached_blocks: int
    waiting: int
    running: int


@dataclass(frozen=True)
class CacheState:
    blocks_used: int
    free_blocks: int
    cached_blocks: int
    running: int
    waiting: int


@dataclass
class Token:
    """One generated token and the step that made it."""

    request_id: str
    token: int
    index: int
    finished: bool
    record: StepRecord | None
    error: str | None = None


@dataclass
class _Counters:
    steps: int = 0
    prefix_blocks_reused: int = 0
    preemptions: int = 0
    first_seen: dict[str, int] = field(default_factory=dict)  # request id -> prompt blocks found in the cache
    preempted_now: set[str] = field(default_factory=set)


class PagedEngine:
    """transformers' continuous batching with a paged cache, recording every step.

    `submit` queues a prompt; `on_token` (set before `start`) is called in the engine's thread for
    every token with the step record that made it; `cancel` asks the engine to drop a request and
    free its blocks; `snapshot` reads the cache now.
    """

    def __init__(self, settings: EngineSettings, device: torch.device | None = None):
        if settings.scheduler not in SCHEDULERS:
            raise ValueError(f"scheduler must be one of {', '.join(SCHEDULERS)}, got {settings.scheduler!r}")
        self.settings = settings
        self.device = device or torch.device("cpu")
        self.model = build_model(settings.seed, self.device)
        self.counters = _Counters()
        self.lock = threading.Lock()
        self.last: StepRecord | None = None
        self.on_token: Callable[[Token], None] = lambda token: None
        self.min_step_s = 0.0  # a step lasts at least this long (model.py's step_ms)
        # ... plus this long per token it computes (model.py's token_ms): a larger model's prefill
        # grows with the prompt, the toy's does not, so without it a long prompt stalls nobody.
        self.token_s = 0.0
        self._step_began = 0.0
        self._step_cost_s = 0.0  # how long the step scheduled last lasts
        self.tags: dict[str, int] = {}  # request id -> the client's TAG, until the request ends
        scheduler_name = f"lab_recording_{settings.scheduler}"
        cb_scheduler.SCHEDULER_MAPPING[scheduler_name] = _recording(
            cb_scheduler.SCHEDULER_MAPPING[settings.scheduler], self)
        generation = GenerationConfig(max_new_tokens=16, do_sample=False, eos_token_id=None, pad_token_id=0)
        cb_config = ContinuousBatchingConfig(
            num_blocks=settings.num_blocks, page_size=settings.block_size, max_batch_tokens=settings.max_batch_tokens,
            allow_block_sharing=settings.prefix_sharing, scheduler_type=scheduler_name,
            max_requests_per_batch=settings.max_requests_per_batch, seed=settings.seed, use_cuda_graph=False)
        self.manager = self.model.init_continuous_batching(generation_config=generation,
                                                           continuous_batching_config=cb_config)
        # The router's own queue is never read: every output goes to on_token, stamped with its step.
        router = self.manager.output_router
        router.deliver_batch = lambda outputs: [self._deliver(o, self.last) for o in outputs]
        router.deliver = lambda output: self._deliver(output, self.last)
        self._seen_tokens: dict[str, int] = {}

    # -- running ---------------------------------------------------------------------------------
    def start(self) -> None:
        self.manager.start()

    def stop(self) -> None:
        self.manager.stop(block=True, timeout=10)

    def submit(self, request_id: str, prompt: list[int], max_new_tokens: int, tag: int = 0) -> None:
        with self.lock:
            self.tags[request_id] = tag
            self._seen_tokens[request_id] = 0
        self.manager.add_request(prompt, request_id=request_id, max_new_tokens=max_new_tokens, streaming=True)

    def cancel(self, request_id: str) -> None:
        self.manager.cancel_request(request_id)
        with self.lock:
            self._seen_tokens.pop(request_id, None)
            self.tags.pop(request_id, None)

    def _deliver(self, output, record: StepRecord | None) -> None:
        with self.lock:
            seen = self._seen_tokens.get(output.request_id)
        if seen is None:
            return  # cancelled: the client was told already
        finished = output.is_finished()
        if output.error:
            self.on_token(Token(output.request_id, -1, seen, True, record, error=str(output.error)))
            self._forget(output.request_id)
            return
        tokens = output.generated_tokens
        for index in range(seen, len(tokens)):
            last = index == len(tokens) - 1
            self.on_token(Token(output.request_id, int(tokens[index]), index, finished and last, record))
        with self.lock:
            if output.request_id in self._seen_tokens:
                self._seen_tokens[output.request_id] = len(tokens)
        if finished:
            self._forget(output.request_id)

    def _forget(self, request_id: str) -> None:
        with self.lock:
            self._seen_tokens.pop(request_id, None)
            self.tags.pop(request_id, None)

    # -- reading the cache -------------------------------------------------------------------------
    @property
    def cache(self):
        processor = getattr(self.manager, "batch_processor", None)
        return None if processor is None else processor.cache

    def total_blocks(self) -> int:
        cache = self.cache
        return self.settings.num_blocks if cache is None else int(cache.num_blocks)

    def snapshot(self, scheduler=None, requests: dict[str, int] | None = None) -> StepRecord:
        """The block table now: every running request's blocks, shared, cached and free blocks."""
        cache = self.cache
        blocks: dict[str, list[int]] = {}
        cached = 0
        total = self.total_blocks()
        if cache is not None:
            for allocator in cache.cache_allocators.values():
                # Ids count from the first usable block: the pool's reserved (trash) sectors come first.
                offset = allocator.pool.num_reserved_sectors * allocator.blocks_per_sector
                for request_id, ids in list(allocator.block_table.items()):
                    blocks.setdefault(request_id, []).extend(int(b) - offset for b in ids)
                cached += len(allocator.ledger.cached_blocks)
        owners: dict[int, int] = {}
        for ids in blocks.values():
            for block in set(ids):
                owners[block] = owners.get(block, 0) + 1
        in_use = len(owners)
        waiting = running = 0
        if scheduler is not None:
            waiting = len(scheduler.waiting_requests)
            running = len(scheduler.active_requests)
        requests = dict(requests or {})
        with self.lock:
            tags = [self.tags.get(r, 0) for r in requests]
        return StepRecord(step=self.counters.steps, requests=requests, tags=tags, blocks=blocks,
                          shared={b for b, n in owners.items() if n > 1},
                          free_blocks=max(total - in_use - cached, 0), cached_blocks=cached,
                          waiting=waiting, running=running)

    def state(self) -> CacheState:
        """The cache and queues now, from any thread (the engine's dicts may change meanwhile)."""
        processor = getattr(self.manager, "batch_processor", None)
        for _ in range(5):
            try:
                scheduler = None if processor is None else processor.scheduler
                snap = self.snapshot(scheduler)
                return CacheState(blocks_used=self.total_blocks() - snap.free_blocks - snap.cached_blocks,
                                  free_blocks=snap.free_blocks, cached_blocks=snap.cached_blocks,
                                  running=snap.running, waiting=snap.waiting + self.manager.input_queue.qsize())
            except RuntimeError:  # a dict changed size while read: read again
                continue
        return CacheState(0, self.total_blocks(), 0, 0, 0)

    def prefix_blocks(self, request_id: str) -> int:
        return self.counters.first_seen.get(request_id, 0)


def _recording(base: type, engine: PagedEngine) -> type:
    """The engine's own scheduler, noting each step it schedules."""

    class Recording(base):  # type: ignore[misc, valid-type]
        def schedule_batch(self, token_budget, cache_budget):
            result = super().schedule_batch(token_budget, cache_budget)
            scheduled = result[0]
            if scheduled:
                # Pace the steps as a larger model's would take, so requests sent apart overlap.
                rest = max(engine.min_step_s, engine._step_cost_s) - (time.perf_counter() - engine._step_began)
                if rest > 0:
                    time.sleep(rest)
                engine._step_began = time.perf_counter()
                counters = engine.counters
                counters.steps += 1
                requests = {}
                for future in scheduled:
                    state = future.state
                    requests[state.request_id] = len(state.tokens_to_process)
                    if state.request_id not in counters.first_seen:
                        # On its first step a request starts after the prompt tokens found in the cache.
                        reused = state.position_offset // engine.settings.block_size
                        counters.first_seen[state.request_id] = reused
                        counters.prefix_blocks_reused += reused
                # A request the engine had started and now waits again was pre-empted: its blocks
                # were taken back (offloaded or freed) so that others could go on.
                waiting_again = {r for r in self.waiting_requests if r in counters.first_seen}
                counters.preemptions += len(waiting_again - counters.preempted_now)
                counters.preempted_now = waiting_again
                engine._step_cost_s = engine.min_step_s + engine.token_s * sum(requests.values())
                engine.last = engine.snapshot(self, requests)
            return result

    Recording.__name__ = f"Recording{base.__name__}"
    return Recording


def alone(settings: EngineSettings, prompt: list[int], max_new_tokens: int) -> list[int]:
    """The request's tokens when it runs by itself (greedy, no other request in any step)."""
    model = build_model(settings.seed, torch.device("cpu"))
    ids = torch.tensor([prompt], dtype=torch.long)
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=max_new_tokens, do_sample=False, eos_token_id=None,
                             pad_token_id=0, attention_mask=torch.ones_like(ids))
    return [int(t) for t in out[0, len(prompt):].tolist()]
