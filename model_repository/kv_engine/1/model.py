"""A generation engine with a paged KV cache inside Triton, shaped as Triton's vLLM backend is.

The deployment is decoupled with `max_batch_size: 0`: Triton's own batcher is off and hands each
request to `execute` as it arrives; the engine (paged.py beside this file: transformers'
continuous batching around a small LM made from a seed) batches in flight inside, and how many
generations run at once is decided by its KV cache: a fixed number of blocks of `block_size`
tokens each. A sender thread streams one response per token, the last with the final flag.

Inputs
  PROMPT      INT32 [-1]   the prompt's token ids (each wraps into the vocabulary)
  MAX_TOKENS  INT32 [1]    tokens to generate (optional, DEFAULT_TOKENS; 1..MAX_TOKENS_LIMIT)
  TAG         UINT64 [1]   the client's own name for the request (optional), echoed in STEP_TAGS

Outputs, one response per token, read from the engine's own state at the step that made it
  TOKEN                 the token id (the lab shows each id as a word from a fixed list)
  POSITION              the token's position in the answer (0 = first)
  STEP                  the engine step that made it (this instance's count)
  STEP_TAGS             TAGs of every request that computed tokens in that step
  STEP_TOKENS           tokens this request computed in that step (its prompt, or a chunk of it,
                        on its first steps; 1 while decoding)
  BLOCKS                the cache blocks this request held in that step
  SHARED_BLOCKS         those of them other requests held too (a shared prefix)
  PREFIX_BLOCKS         blocks of its prompt found in the cache instead of computed
  FREE_BLOCKS, CACHED_BLOCKS, WAITING, RUNNING   the cache and queue in that step

Config parameters (string values): num_blocks, block_size, max_batch_tokens (the step's token
budget: what chunks a long prompt), scheduler (fifo | prefill_first), prefix_sharing
(true | false), max_requests_per_batch, step_ms (a step lasts at least this long, as a larger
model's would, so that requests arriving apart overlap), token_ms (and this much longer per token
the step computes, default 0: a larger model's prefill costs more the longer the prompt), seed.

Custom metrics on Triton's Prometheus endpoint (labels: model, version):
  kv_blocks_used, kv_blocks_free, kv_blocks_cached, kv_requests_running, kv_requests_waiting
  (gauges); kv_prefix_blocks_reused_total, kv_preemptions_total (counters, as gauges of totals).

Errors come back as one error response with the final flag, naming the limit: an empty prompt, a
prompt and answer that could never fit the cache, a MAX_TOKENS outside its range. A request the
client cancels is cancelled in the engine, which frees its blocks.
"""
from __future__ import annotations

import json
import queue
import threading

import torch
import torch.utils.dlpack as dlpack
import triton_python_backend_utils as pb_utils
from paged import MAX_POSITIONS, SCHEDULERS, VOCAB, EngineSettings, PagedEngine, Token

DEFAULT_TOKENS = 16
MAX_TOKENS_LIMIT = 256
WATCH_S = 0.02  # how often cancellations are looked for and the gauges refreshed
METRICS = {
    "kv_blocks_used": "KV cache blocks held by running requests",
    "kv_blocks_free": "KV cache blocks free",
    "kv_blocks_cached": "KV cache blocks no request holds, kept for their prefix content",
    "kv_requests_running": "Requests the engine has started and not finished",
    "kv_requests_waiting": "Requests waiting for the engine (for memory or a step's budget)",
    "kv_prefix_blocks_reused_total": "Prompt blocks found in the cache instead of computed, since load",
    "kv_preemptions_total": "Running requests sent back to wait so that others could go on, since load",
}


def _param(config: dict, name: str, default: str) -> str:
    value = config.get("parameters", {}).get(name, {}).get("string_value")
    return default if value in (None, "") else value


def instance_device(args: dict) -> torch.device:
    """Where this instance computes: the GPU Triton gave it (KIND_GPU), else the CPU."""
    if args.get("model_instance_kind") == "GPU" and torch.cuda.is_available():
        return torch.device(f"cuda:{int(args.get('model_instance_device_id', 0))}")
    return torch.device("cpu")


def settings_from(config: dict) -> tuple[EngineSettings, float]:
    settings = EngineSettings(
        num_blocks=int(_param(config, "num_blocks", "64")),
        block_size=int(_param(config, "block_size", "16")),
        max_batch_tokens=int(_param(config, "max_batch_tokens", "128")),
        scheduler=_param(config, "scheduler", "fifo"),
        prefix_sharing=_param(config, "prefix_sharing", "true").lower() == "true",
        max_requests_per_batch=int(_param(config, "max_requests_per_batch", "16")),
        seed=int(_param(config, "seed", "0")),
    )
    if settings.scheduler not in SCHEDULERS:
        raise pb_utils.TritonModelException(
            f"parameter scheduler must be one of {', '.join(SCHEDULERS)}, got {settings.scheduler!r}")
    for name in ("num_blocks", "block_size", "max_batch_tokens", "max_requests_per_batch"):
        if getattr(settings, name) < 1:
            raise pb_utils.TritonModelException(f"parameter {name} must be at least 1")
    return settings, float(_param(config, "step_ms", "10")) / 1000.0


_CHECK_CANCELLED = object()  # put in the outbox: the sender's thread looks for cancellations


class _Live:
    __slots__ = ("request", "sender", "tag")

    def __init__(self, request, sender, tag: int):
        self.request, self.sender, self.tag = request, sender, tag


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.settings, self.step_s = settings_from(config)
        self.engine = PagedEngine(self.settings, instance_device(args))
        self.engine.min_step_s = self.step_s
        self.engine.token_s = float(_param(config, "token_ms", "0")) / 1000.0
        self.engine.on_token = self._on_token
        self.live: dict[str, _Live] = {}
        self.lock = threading.Lock()
        self.counter = 0
        self.outbox: queue.Queue = queue.Queue()
        labels = {"model": args.get("model_name", ""), "version": str(args.get("model_version", ""))}
        self.families = {name: pb_utils.MetricFamily(name=name, description=text, kind=pb_utils.MetricFamily.GAUGE)
                         for name, text in METRICS.items()}
        self.gauges = {name: family.Metric(labels=labels) for name, family in self.families.items()}
        self.stopping = threading.Event()
        self.engine.start()
        self.sender = threading.Thread(target=self._send_loop, name="kv-sender", daemon=True)
        self.watcher = threading.Thread(target=self._watch_loop, name="kv-watcher", daemon=True)
        self.sender.start()
        self.watcher.start()

    # -- requests in ---------------------------------------------------------------------------
    def _read(self, request):
        prompt_t = pb_utils.get_input_tensor_by_name(request, "PROMPT")
        prompt = [] if prompt_t is None else dlpack.from_dlpack(prompt_t.to_dlpack()).reshape(-1).to(torch.int64)
        capacity = self.engine.total_blocks() * self.settings.block_size
        if len(prompt) == 0:
            return "PROMPT must hold at least 1 token id"
        tokens_t = pb_utils.get_input_tensor_by_name(request, "MAX_TOKENS")
        max_tokens = DEFAULT_TOKENS if tokens_t is None else int(dlpack.from_dlpack(tokens_t.to_dlpack()).reshape(-1)[0])
        if not 1 <= max_tokens <= MAX_TOKENS_LIMIT:
            return f"MAX_TOKENS must be 1 to {MAX_TOKENS_LIMIT}, got {max_tokens}"
        total = len(prompt) + max_tokens
        if total > MAX_POSITIONS:
            return (f"the prompt ({len(prompt)} tokens) and MAX_TOKENS ({max_tokens}) make {total} positions; "
                    f"the model has {MAX_POSITIONS}")
        if total > capacity:
            return (f"the prompt ({len(prompt)} tokens) and MAX_TOKENS ({max_tokens}) need {total} tokens of KV "
                    f"cache; this deployment's whole cache holds {capacity} ({self.engine.total_blocks()} blocks of "
                    f"{self.settings.block_size}), so it could never run")
        tag_t = pb_utils.get_input_tensor_by_name(request, "TAG")
        tag = 0 if tag_t is None else int(dlpack.from_dlpack(tag_t.to_dlpack()).reshape(-1)[0])
        return [int(t) % VOCAB for t in prompt.tolist()], max_tokens, tag

    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            read = self._read(request)
            if isinstance(read, str):
                sender.send(pb_utils.InferenceResponse(error=pb_utils.TritonError(read)),
                            flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                continue
            prompt, max_tokens, tag = read
            with self.lock:
                self.counter += 1
                request_id = f"q{self.counter}"
                self.live[request_id] = _Live(request, sender, tag)
            self.engine.submit(request_id, prompt, max_tokens, tag)
        return None

    # -- tokens out ----------------------------------------------------------------------------
    def _on_token(self, token: Token) -> None:
        # In the engine's thread: hand over, never block a step on Triton.
        self.outbox.put(token)

    def _send_loop(self) -> None:
        while not self.stopping.is_set():
            try:
                token = self.outbox.get(timeout=0.1)
            except queue.Empty:
                continue
            if token is _CHECK_CANCELLED:
                self._end_cancelled()
                continue
            with self.lock:
                live = self.live.get(token.request_id)
                if live is not None and token.finished:
                    del self.live[token.request_id]
            if live is None:
                continue  # cancelled, and already closed
            try:
                if token.error:
                    live.sender.send(pb_utils.InferenceResponse(error=pb_utils.TritonError(token.error)),
                                     flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                    continue
                flags = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL if token.finished else 0
                live.sender.send(pb_utils.InferenceResponse(output_tensors=self._tensors(token)), flags=flags)
            except pb_utils.TritonModelException:
                # A sender that refuses more (its request closed) must not end this thread: every other
                # request's tokens go through it.
                continue

    def _tensors(self, token: Token) -> list:
        record = token.record
        blocks = [] if record is None else record.blocks.get(token.request_id, [])
        shared = [] if record is None else [b for b in blocks if b in record.shared]
        step_tags = [] if record is None else record.tags
        ints = {
            "TOKEN": [token.token], "POSITION": [token.index],
            "STEP": [0 if record is None else record.step],
            "STEP_TOKENS": [0 if record is None else record.requests.get(token.request_id, 0)],
            "BLOCKS": blocks, "SHARED_BLOCKS": shared,
            "PREFIX_BLOCKS": [self.engine.prefix_blocks(token.request_id)],
            "FREE_BLOCKS": [0 if record is None else record.free_blocks],
            "CACHED_BLOCKS": [0 if record is None else record.cached_blocks],
            "WAITING": [0 if record is None else record.waiting],
            "RUNNING": [0 if record is None else record.running],
        }
        tensors = [pb_utils.Tensor.from_dlpack(name, dlpack.to_dlpack(torch.tensor(values, dtype=torch.int32)))
                   for name, values in ints.items()]
        tensors.append(pb_utils.Tensor.from_dlpack(
            "STEP_TAGS", dlpack.to_dlpack(torch.tensor(step_tags, dtype=torch.uint64))))
        return tensors

    # -- cancellations and gauges ---------------------------------------------------------------
    def _watch_loop(self) -> None:
        while not self.stopping.wait(WATCH_S):
            # Cancellations are asked for in the sender's thread, between its sends: a request is
            # asked only while its final response has not gone. Asked from here, a request whose
            # final response the sender had just sent crashed the server now and then (Signal 11
            # in TRITONBACKEND_ResponseFactoryIsCancelled, seen on 2.51 with gRPC cancellations).
            self.outbox.put(_CHECK_CANCELLED)
            self._refresh_gauges()

    def _end_cancelled(self) -> None:
        """In the sender's thread: cancel in the engine every live request the client cancelled,
        freeing its blocks, and close its stream."""
        with self.lock:
            live = list(self.live.items())
        for request_id, item in live:
            if item.request.is_cancelled():
                self.engine.cancel(request_id)
                with self.lock:
                    self.live.pop(request_id, None)
                try:
                    item.sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                except pb_utils.TritonModelException:
                    continue  # already closed: nothing more to tell the client

    def _refresh_gauges(self) -> None:
        snap = self.engine.state()
        values = {
            "kv_blocks_used": snap.blocks_used, "kv_blocks_free": snap.free_blocks,
            "kv_blocks_cached": snap.cached_blocks, "kv_requests_running": snap.running,
            "kv_requests_waiting": snap.waiting,
            "kv_prefix_blocks_reused_total": self.engine.counters.prefix_blocks_reused,
            "kv_preemptions_total": self.engine.counters.preemptions,
        }
        for name, value in values.items():
            self.gauges[name].set(value)

    def finalize(self):
        self.stopping.set()
        self.engine.stop()
        self.watcher.join()
        self.sender.join()
        # A family may only go after its metrics (python_backend's custom-metrics rule).
        del self.gauges
        del self.families

