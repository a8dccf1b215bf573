"""A tiny streaming speech recogniser for Triton's Python backend.

This one file serves every `asr_*` deployment; the deployments differ only in their
config.pbtxt. Each 20 ms chunk (160 samples at 8 kHz) carries one tone whose FFT bin
encodes the change d from the previous letter, so the emitted letter is the running sum
s <- (s + d) mod 27 and every output depends on the state left by the chunks before it.

Config parameters:
  state_key     slot | corrid | session   which key names a state cell
  honour_ready  true | false              skip READY=0 padding rows, or fold them in
  idle_evict_s  seconds                   corrid/session cells unused this long are dropped

Custom metrics on Triton's Prometheus endpoint (Python backend metrics API), labelled by
model, version and instance, so learners can watch what the model holds, which Triton's own
metrics cannot show:
  asr_state_cells          gauge    state cells this instance holds now
  asr_state_cells_evicted  counter  cells this instance dropped by its own idle eviction

A CPU instance computes with numpy through the backend's numpy bridge, numpy being imported in
the stub already (triton_python_backend_utils imports it): importing torch would cost each
instance's process about 130 MB (torch's CPU build) to 270 MB (its CUDA build) for a 160-point
FFT (benchmarks/stub_memory.py measures it). A KIND_GPU instance, and any instance under numpy 2
(whose numpy bridge returns empty outputs), imports torch and goes through DLPack; a GPU
instance runs the FFT on its GPU.
"""
from __future__ import annotations

import json
import re
import time

import numpy as np
import triton_python_backend_utils as pb_utils

ALPHABET_SIZE = 27
CHUNK_SAMPLES = 160
# Tone for delta d sits at (4 + 2d) x 50 Hz: bin 4 + 2d of a 160-point FFT at 8 kHz.
CANDIDATE_BINS = [4 + 2 * d for d in range(ALPHABET_SIZE)]
# STATE_OWNER written by a padding row the model was told to process (honour_ready=false).
PADDING_OWNER = 2**64 - 1
STATE_KEYS = ("slot", "corrid", "session")
# The backend's numpy bridge returns empty outputs under numpy 2; nvidia-pytriton pins numpy<2.
NUMPY_BRIDGE_WORKS = np.lib.NumpyVersion(np.__version__) < "2.0.0"
CELLS_METRIC = "asr_state_cells"
EVICTED_METRIC = "asr_state_cells_evicted"


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


class NumpyMath:
    """The instance's arithmetic in numpy, through the backend's numpy bridge (as_numpy,
    pb_utils.Tensor), which is sound under numpy 1 only; numpy's own DLPack import is no way
    round it, as the stub renames a capsule it consumed to "used_dlpack", which numpy 1's
    capsule destructor rejects with an error per tensor."""

    def read(self, tensor):
        return tensor.as_numpy()

    def zeros(self, shape):
        return np.zeros(shape, dtype=np.float32)

    def decode(self, chunks: list) -> list[int]:
        """Strongest candidate bin per row -> delta d, computed in one batched pass."""
        spectrum = np.abs(np.fft.rfft(np.concatenate(chunks, axis=0).astype(np.float32), axis=1))
        return np.argmax(spectrum[:, CANDIDATE_BINS], axis=1).tolist()

    def output(self, name: str, value: int, unsigned: bool = False):
        return pb_utils.Tensor(name, np.array([[value]], dtype=np.uint64 if unsigned else np.int32))


class TorchMath:
    """The same arithmetic in torch through DLPack, on the instance's GPU, or on the CPU under numpy 2."""

    def __init__(self, device: str):
        import torch
        import torch.utils.dlpack as dlpack

        self.torch, self.dlpack, self.device = torch, dlpack, torch.device(device)
        self.bins = torch.tensor(CANDIDATE_BINS, device=self.device)

    def read(self, tensor):
        return self.dlpack.from_dlpack(tensor.to_dlpack())

    def zeros(self, shape):
        return self.torch.zeros(shape)

    def decode(self, chunks: list) -> list[int]:
        audio = self.torch.cat(chunks, dim=0).to(self.device, self.torch.float32)
        spectrum = self.torch.fft.rfft(audio, dim=1).abs()
        return self.torch.argmax(spectrum[:, self.bins], dim=1).cpu().tolist()

    def output(self, name: str, value: int, unsigned: bool = False):
        dtype = self.torch.uint64 if unsigned else self.torch.int32
        return pb_utils.Tensor.from_dlpack(name, self.dlpack.to_dlpack(self.torch.tensor([[value]], dtype=dtype)))


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.state_key = _param(config, "state_key", "slot")
        if self.state_key not in STATE_KEYS:
            raise pb_utils.TritonModelException(
                f"parameter state_key must be one of {', '.join(STATE_KEYS)}, got {self.state_key!r}"
            )
        self.honour_ready = _param(config, "honour_ready", "true").lower() == "true"
        self.idle_evict_s = float(_param(config, "idle_evict_s", "60"))
        self.instance = _instance_index(args.get("model_instance_name", ""))
        device = instance_device(args)
        self.math = NumpyMath() if device == "cpu" and NUMPY_BRIDGE_WORKS else TorchMath(device)
        # key -> [state, owner tag, last used (monotonic s)]
        self.cells: dict[tuple, list] = {}
        # Every deployment and instance registers the same families (Triton shares a family by
        # name); the labels tell the instances apart.
        labels = {"model": args.get("model_name", ""), "version": str(args.get("model_version", "")),
                  "instance": str(self.instance)}
        self.cells_family = pb_utils.MetricFamily(
            name=CELLS_METRIC, description="State cells the recogniser instance holds now", kind=pb_utils.MetricFamily.GAUGE)
        self.evicted_family = pb_utils.MetricFamily(
            name=EVICTED_METRIC, description="State cells the recogniser instance dropped by its own idle eviction",
            kind=pb_utils.MetricFamily.COUNTER)
        self.cells_metric = self.cells_family.Metric(labels=labels)
        self.evicted_metric = self.evicted_family.Metric(labels=labels)
        self.cells_metric.set(0)

    def _input(self, request, name):
        tensor = pb_utils.get_input_tensor_by_name(request, name)
        return None if tensor is None else self.math.read(tensor)

    def _scalar(self, request, name, default):
        tensor = self._input(request, name)
        return default if tensor is None else int(tensor.reshape(-1)[0].item())

    def _key(self, slot: int, corrid: int, session: int) -> tuple:
        if self.state_key == "slot":
            return ("slot", slot)
        if self.state_key == "corrid":
            return ("corrid", corrid)
        return ("session", session)

    def _evict_idle(self, now: float) -> None:
        # Triton's idle reaper never tells the model a sequence died, so the model must
        # drop cells nobody has touched for a while or its memory grows without bound.
        stale = [k for k, cell in self.cells.items() if k[0] != "slot" and now - cell[2] > self.idle_evict_s]
        for key in stale:
            del self.cells[key]
        if stale:
            self.evicted_metric.increment(len(stale))

    def execute(self, requests):
        now = time.monotonic()
        audio, bad = [], {}
        for i, request in enumerate(requests):
            chunk = self._input(request, "AUDIO")
            if chunk is None or chunk.shape[0] != 1:
                bad[i] = "the recogniser takes exactly one 160-sample chunk per request"
                chunk = self.math.zeros((1, CHUNK_SAMPLES))
            audio.append(chunk.reshape(1, CHUNK_SAMPLES))
        deltas = self.math.decode(audio)

        responses = []
        for slot, request in enumerate(requests):
            if slot in bad:
                responses.append(pb_utils.InferenceResponse(error=pb_utils.TritonError(bad[slot])))
                continue
            ready = self._scalar(request, "READY", 1)
            start = self._scalar(request, "START", 0)
            end = self._scalar(request, "END", 0)
            session = self._scalar(request, "SESSION", 0)
            corrid = self._scalar(request, "CORRID", 0)
            if corrid == 0 and self.state_key == "corrid":
                corrid = _correlation_id(request)
            symbol, state_in, owner = -1, -1, 0
            if ready or not self.honour_ready:
                key = self._key(slot, corrid, session)
                cell = self.cells.get(key)
                if start or cell is None:
                    cell = [0, 0, now]
                state_in, owner = cell[0], cell[1]
                symbol = (state_in + deltas[slot]) % ALPHABET_SIZE
                writer = session if ready else PADDING_OWNER
                if end and ready:
                    self.cells.pop(key, None)
                else:
                    self.cells[key] = [symbol, writer, now]
            responses.append(self._response(symbol, slot, len(requests), state_in, owner))
        self._evict_idle(now)
        self.cells_metric.set(len(self.cells))
        return responses

    def _response(self, symbol, slot, batch, state_in, owner):
        ints = {"SYMBOL": symbol, "INSTANCE": self.instance, "SLOT": slot, "BATCH": batch, "STATE_IN": state_in}
        tensors = [self.math.output(name, value) for name, value in ints.items()]
        tensors.append(self.math.output("STATE_OWNER", owner, unsigned=True))
        return pb_utils.InferenceResponse(output_tensors=tensors)

    def finalize(self):
        self.cells.clear()
        # A family may only go after its metrics (python_backend's custom-metrics rule).
        del self.cells_metric, self.evicted_metric
        del self.cells_family, self.evicted_family


def _correlation_id(request) -> int:
    """Fallback when no CORRID control input is declared: ask the request itself."""
    value = request.correlation_id()
    if isinstance(value, str):
        return hash(value) & (2**63 - 1)
    return int(value)
