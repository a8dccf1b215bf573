"""A tiny token generator for Triton's Python backend: the lab's stand-in for an LLM decoder.

This one file serves every `gen_*` deployment; the deployments differ only in their
config.pbtxt. A request carries four prompt tokens, how many tokens to make (MAX_TOKENS) and
the client's own TAG; the model streams one response per token (the deployments are decoupled).
Prompt ids wrap into the vocabulary and MAX_TOKENS is clamped into 1..64, so any int32 input is a
request.
Each token follows from the request's state (the lab's "KV cache"), so a request that continues
another's state streams wrong tokens from that step on.

Token rule (mirrored, pure, in app/generation/engine/tokens.py):
  VOCAB = 64;  h = (p0 + 3 p1 + 5 p2 + 7 p3) mod VOCAB;  t_0 = (11 h + 5) mod VOCAB;
  t_k = (17 t_(k-1) + 13 h + 7 k + 3) mod VOCAB.

Two ways to run, chosen by the scheduler in the config:
  iterative   sequence_batching { iterative_sequence: true }: one step per execution for every
              request in the batch; a request that is not done is rescheduled
              (TRITONSERVER_REQUEST_RELEASE_RESCHEDULE) and joins a later execution, beside
              requests that arrived since (in-flight batching). Triton numbers each request
              itself (CORRID control) and sets START on its first execution only. Under
              `oldest` a step holds the requests that are ready; under `direct` (the config
              declares READY) each request keeps its slot's row, and a slot below the highest
              busy one with nothing ready comes as a padding row (READY 0), which gets no state.
  static      dynamic_batching: one execution generates the whole batch to its end; a request
              that finishes early leaves its row idle, and new arrivals wait for the execution.

Config parameters:
  state_key      corrid | row     which key names a request's state cell (row is the mistake)
  step_ms        milliseconds     a step costs step_ms * (1 + 0.05 (rows - 1)): the token arithmetic for
                                  the rows on the instance's device, then a wait for the rest
                                  (a decoder's per-step weight reads), so batching pays
  honour_cancel  true | false     true: the model asks each request whether it was cancelled
                                  before and after every step, answers a cancelled one with its
                                  final response and frees its cell. A cancellation that lands
                                  while the request waits in Triton's queue is answered by Triton
                                  itself, which drops the request without telling the model
                                  (sequence_batch_scheduler.cc, CompleteAndNext), so the model
                                  also sweeps cells no step has touched for SWEEP_STEPS steps
                                  (at least SWEEP_MIN_S). false: it never asks and never sweeps;
                                  a cancelled request's cell stays (the gauge shows it)

Outputs per token (each dims [1]): TOKEN, STEP (position read from the state), ROW, BATCH (requests
in this execution), EXECUTION (this instance's execution counter), INSTANCE, STATE_OWNER (TAG
of whoever last wrote the state this token continued; 0 for a cell found empty).

Custom metric on Triton's Prometheus endpoint, labelled by model, version and instance:
  gen_state_cells   gauge   state cells this instance holds now

A CPU instance computes with numpy through the backend's numpy bridge, numpy being imported in
the stub already (triton_python_backend_utils imports it), so its process does not pay for
importing torch (benchmarks/stub_memory.py measures it). A KIND_GPU instance, and any instance
under numpy 2 (whose numpy bridge returns empty outputs), imports torch and goes through DLPack;
a GPU instance runs the token arithmetic on its GPU.
"""
from __future__ import annotations

import json
import re
import threading
import time

import numpy as np
import triton_python_backend_utils as pb_utils

VOCAB = 64
MAX_TOKENS_LIMIT = 64
PROMPT_LENGTH = 4
STATE_KEYS = ("corrid", "row")
CELLS_METRIC = "gen_state_cells"
BATCH_COST = 0.05  # each row beyond the first adds this share of a step
SWEEP_STEPS = 50  # a running request is rescheduled every step; a cell idle this long is orphaned
SWEEP_MIN_S = 5.0  # room for a machine too busy to run a step on time
PROMPT_WEIGHTS = [1, 3, 5, 7]
# The backend's numpy bridge returns empty outputs under numpy 2; nvidia-pytriton pins numpy<2.
NUMPY_BRIDGE_WORKS = np.lib.NumpyVersion(np.__version__) < "2.0.0"


def _param(config: dict, name: str, default: str) -> str:
    value = config.get("parameters", {}).get(name, {}).get("string_value")
    return default if value in (None, "") else value


def _instance_index(instance_name: str) -> int:
    # Triton names instances "<model>_<group>_<index>"; the last number is the index.
    match = re.search(r"_(\d+)$", instance_name or "")
    return int(match.group(1)) if match else 0


def instance_device(args: dict) -> str:
    """Where this instance computes: the GPU Triton gave it (KIND_GPU), else "cpu". Only a GPU
    instance imports torch, to ask whether it sees that GPU."""
    if args.get("model_instance_kind") == "GPU":
        import torch

        if torch.cuda.is_available():
            return f"cuda:{int(args.get('model_instance_device_id', 0))}"
    return "cpu"


def _next_tokens(h, k, last):
    """The token rule on whole rows; the same expression for numpy arrays and torch tensors."""
    first = (h * 11 + 5) % VOCAB
    later = (last * 17 + h * 13 + k * 7 + 3) % VOCAB
    return first, later


class NumpyMath:
    """The instance's arithmetic in numpy, through the backend's numpy bridge (as_numpy,
    pb_utils.Tensor), which is sound under numpy 1 only."""

    def read(self, tensor):
        return tensor.as_numpy()

    def prompt_hash(self, prompt) -> int:
        return int((prompt.reshape(-1).astype(np.int64) * np.array(PROMPT_WEIGHTS, dtype=np.int64)).sum()) % VOCAB

    def tokens(self, h: list[int], k: list[int], last: list[int]) -> list[int]:
        hs, ks, lasts = (np.array(v, dtype=np.int64) for v in (h, k, last))
        first, later = _next_tokens(hs, ks, lasts)
        return np.where(ks == 0, first, later).tolist()

    def output(self, name: str, value: int, unsigned: bool = False):
        return pb_utils.Tensor(name, np.array([[value]], dtype=np.uint64 if unsigned else np.int32))


class TorchMath:
    """The same arithmetic in torch through DLPack, on the instance's GPU, or on the CPU under numpy 2."""

    def __init__(self, device: str):
        import torch
        import torch.utils.dlpack as dlpack

        self.torch, self.dlpack, self.device = torch, dlpack, torch.device(device)

    def read(self, tensor):
        return self.dlpack.from_dlpack(tensor.to_dlpack())

    def prompt_hash(self, prompt) -> int:
        weights = self.torch.tensor(PROMPT_WEIGHTS, dtype=self.torch.int64)
        return int((prompt.reshape(-1).to(self.torch.int64) * weights).sum().item()) % VOCAB

    def tokens(self, h: list[int], k: list[int], last: list[int]) -> list[int]:
        hs, ks, lasts = (self.torch.tensor(v, dtype=self.torch.int64, device=self.device) for v in (h, k, last))
        first, later = _next_tokens(hs, ks, lasts)
        return self.torch.where(ks == 0, first, later).cpu().tolist()

    def output(self, name: str, value: int, unsigned: bool = False):
        dtype = self.torch.uint64 if unsigned else self.torch.int32
        return pb_utils.Tensor.from_dlpack(name, self.dlpack.to_dlpack(self.torch.tensor([[value]], dtype=dtype)))


class Cell:
    """One request's state: its prompt hash, the next step, the last token and who wrote it."""

    __slots__ = ("h", "step", "last", "owner", "touched")

    def __init__(self, h: int, owner: int):
        self.h, self.step, self.last, self.owner = h, 0, 0, owner
        self.touched = time.monotonic()


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.state_key = _param(config, "state_key", "corrid")
        if self.state_key not in STATE_KEYS:
            raise pb_utils.TritonModelException(
                f"parameter state_key must be one of {', '.join(STATE_KEYS)}, got {self.state_key!r}")
        self.step_s = float(_param(config, "step_ms", "20")) / 1000.0
        self.honour_cancel = _param(config, "honour_cancel", "true").lower() == "true"
        self.iterative = bool(config.get("sequence_batching", {}).get("iterative_sequence", False))
        self.max_batch_size = max(1, int(config.get("max_batch_size", 1)))
        self.instance = _instance_index(args.get("model_instance_name", ""))
        device = instance_device(args)
        self.math = NumpyMath() if device == "cpu" and NUMPY_BRIDGE_WORKS else TorchMath(device)
        self.executions = 0
        self.cells: dict[tuple, Cell] = {}
        labels = {"model": args.get("model_name", ""), "version": str(args.get("model_version", "")),
                  "instance": str(self.instance)}
        self.cells_family = pb_utils.MetricFamily(
            name=CELLS_METRIC, description="State cells the generator instance holds now",
            kind=pb_utils.MetricFamily.GAUGE)
        self.cells_metric = self.cells_family.Metric(labels=labels)
        self.cells_metric.set(0)
        # execute and the sweeper take turns on the cells.
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.sweep_after_s = max(SWEEP_MIN_S, SWEEP_STEPS * self.step_s * (1 + BATCH_COST * (self.max_batch_size - 1)))
        self.sweeper = None
        if self.honour_cancel and self.iterative:
            self.sweeper = threading.Thread(target=self._sweep, name="gen-sweeper", daemon=True)
            self.sweeper.start()

    def _sweep(self) -> None:
        """Drop cells of requests Triton dropped without telling the model (cancelled in its queue)."""
        while not self.stopping.wait(self.sweep_after_s / 4):
            with self.lock:
                now = time.monotonic()
                stale = [key for key, cell in self.cells.items() if now - cell.touched > self.sweep_after_s]
                for key in stale:
                    del self.cells[key]
                if stale:
                    self.cells_metric.set(len(self.cells))

    # -- inputs ------------------------------------------------------------------------------
    def _input(self, request, name):
        tensor = pb_utils.get_input_tensor_by_name(request, name)
        return None if tensor is None else self.math.read(tensor)

    def _scalar(self, request, name, default):
        tensor = self._input(request, name)
        return default if tensor is None else int(tensor.reshape(-1)[0].item())

    def _read(self, request):
        """(prompt hash, max tokens, tag), or an error message for a malformed request."""
        prompt = self._input(request, "PROMPT")
        if prompt is None or prompt.reshape(-1).shape[0] != PROMPT_LENGTH:
            return f"PROMPT must hold exactly {PROMPT_LENGTH} token ids"
        # Any int32 is a request: ids wrap into the vocabulary (the hash is taken mod VOCAB) and the
        # length is clamped into 1..MAX_TOKENS_LIMIT, so a client that knows only the model's
        # metadata (the checker's generated inputs) gets streams, not refusals.
        max_tokens = min(max(self._scalar(request, "MAX_TOKENS", 1), 1), MAX_TOKENS_LIMIT)
        h = self.math.prompt_hash(prompt)
        return h, max_tokens, self._scalar(request, "TAG", 0)

    # -- the step ----------------------------------------------------------------------------
    def _tokens(self, cells: list[Cell]) -> list[int]:
        """One step for every row at once, on the instance's device."""
        return self.math.tokens([c.h for c in cells], [c.step for c in cells], [c.last for c in cells])

    def _pay_for_step(self, rows: int, began: float) -> None:
        cost = self.step_s * (1 + BATCH_COST * (rows - 1))
        rest = cost - (time.perf_counter() - began)
        if rest > 0:
            time.sleep(rest)

    def _respond(self, sender, token, step, row, batch, owner, final):
        ints = {"TOKEN": token, "STEP": step, "ROW": row, "BATCH": batch, "EXECUTION": self.executions,
                "INSTANCE": self.instance}
        tensors = [self.math.output(name, value) for name, value in ints.items()]
        tensors.append(self.math.output("STATE_OWNER", owner, unsigned=True))
        flags = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL if final else 0
        sender.send(pb_utils.InferenceResponse(output_tensors=tensors), flags=flags)

    def _refuse(self, sender, message):
        sender.send(pb_utils.InferenceResponse(error=pb_utils.TritonError(message)),
                    flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)

    def _cancelled(self, request) -> bool:
        # Only asked when the deployment honours cancellation: each ask is a round trip to Triton.
        return self.honour_cancel and request.is_cancelled()

    def execute(self, requests):
        with self.lock:
            self.executions += 1
            if self.iterative:
                self._iterate(requests)
            else:
                self._generate(requests)
            self.cells_metric.set(len(self.cells))
        return None

    def _key(self, row: int, corrid: int) -> tuple:
        return ("row", row) if self.state_key == "row" else ("corrid", corrid)

    def _iterate(self, requests):
        """One step for each request; a request not done is rescheduled for a later execution."""
        began = time.perf_counter()
        work = []  # (row, request, sender, key, cell, max tokens, tag)
        for row, request in enumerate(requests):
            sender = request.get_response_sender()
            if self._scalar(request, "READY", 1) == 0:
                # A padding row of `direct`: its inputs are uninitialised and its reply reaches no client,
                # so it must not touch any state; the final flag closes its sender.
                sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                continue
            corrid = self._scalar(request, "CORRID", 0) or _correlation_id(request)
            key = self._key(row, corrid)
            if self._cancelled(request):
                self._end_cancelled(sender, key)
                continue
            read = self._read(request)
            if isinstance(read, str):
                self._refuse(sender, read)
                continue
            h, max_tokens, tag = read
            start = self._scalar(request, "START", 0)
            cell = self.cells.get(key)
            if start or cell is None:
                cell = Cell(h, tag if start else 0)
                self.cells[key] = cell
            work.append((row, request, sender, key, cell, max_tokens, tag))
        if not work:
            return
        tokens = self._tokens([w[4] for w in work])
        self._pay_for_step(len(work), began)
        now = time.monotonic()
        for (row, request, sender, key, cell, max_tokens, tag), token in zip(work, tokens, strict=True):
            # Asked again after the step: a cancellation that arrived during it is answered now,
            # before the request goes back to Triton's queue, where Triton itself would drop it
            # without telling the model (sequence_batch_scheduler.cc, CompleteAndNext).
            if self._cancelled(request):
                self._end_cancelled(sender, key)
                continue
            step, owner = cell.step, cell.owner
            cell.step, cell.last, cell.owner, cell.touched = step + 1, token, tag, now
            done = cell.step >= max_tokens
            if done:
                self.cells.pop(key, None)
            else:
                # Before execute returns (python_backend's rule for decoupled models).
                request.set_release_flags(pb_utils.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE)
            self._respond(sender, token, step, row, len(requests), owner, final=done)

    def _end_cancelled(self, sender, key) -> None:
        """Free a cancelled request's cell and close its stream; releasing it (ALL, the default) ends it."""
        if self.state_key == "corrid":
            self.cells.pop(key, None)
        sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)

    def _generate(self, requests):
        """The whole batch to its end in this one execution, one step for all live rows at a time."""
        live = {}  # row -> (sender, cell, max tokens, request)
        for row, request in enumerate(requests):
            sender = request.get_response_sender()
            read = self._read(request)
            if isinstance(read, str):
                self._refuse(sender, read)
                continue
            h, max_tokens, tag = read
            cell = Cell(h, tag)
            self.cells[("row", row)] = cell
            live[row] = (sender, cell, max_tokens, request)
        self.cells_metric.set(len(self.cells))
        while live:
            began = time.perf_counter()
            for row in [r for r, (_, _, _, request) in live.items() if self._cancelled(request)]:
                live.pop(row)[0].send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                self.cells.pop(("row", row), None)
            if not live:
                break
            rows = sorted(live)
            tokens = self._tokens([live[r][1] for r in rows])
            self._pay_for_step(len(rows), began)
            for row, token in zip(rows, tokens, strict=True):
                sender, cell, max_tokens, _ = live[row]
                step, owner = cell.step, cell.owner
                cell.step, cell.last = step + 1, token
                done = cell.step >= max_tokens
                if done:
                    del live[row]
                    self.cells.pop(("row", row), None)
                self._respond(sender, token, step, row, len(requests), owner, final=done)

    def finalize(self):
        self.stopping.set()
        if self.sweeper is not None:
            self.sweeper.join()
        self.cells.clear()
        # A family may only go after its metrics (python_backend's custom-metrics rule).
        del self.cells_metric
        del self.cells_family


def _correlation_id(request) -> int:
    """Fallback when no CORRID control input is declared: ask the request itself."""
    value = request.correlation_id()
    if isinstance(value, str):
        return hash(value) & (2**63 - 1)
    return int(value)
