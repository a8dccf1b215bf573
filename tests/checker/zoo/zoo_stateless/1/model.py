"""The checker's zoo: one test-only Python-backend model, sound or broken by its config parameters.

Every zoo deployment links to this file; its config.pbtxt decides what it does. Tensors go
through numpy (`as_numpy`, `pb_utils.Tensor`), which needs numpy 1 (the project pins numpy<2),
so a zoo model loads without torch (seconds faster per instance). Only TYPE_BF16, which numpy has
no type for (the backend's `as_numpy` refuses it), goes through DLPack into torch: a config with a
BF16 input or output (zoo_all_types) imports torch when it loads, and no other does.

Config parameters (string values):
  mode            sum | echo | plus_start | accumulate | fail   what one request computes (default sum)
  state           none | corrid | slot | batch_stats   where a running state lives (default none)
  reset_on_start  true | false                         START begins a fresh state (default true)
  forget_on_end   true | false                         END drops the state (default true)
  honour_ready    true | false                         skip READY=0 padding rows (default true)
  cache_size      int                                  keep state for at most this many keys per instance,
                                                       evicting the least recently used (default 0: no limit)
  batch_mix       true | false                         add the batch size to the answer (default false)
  noise           float                                relative noise on float outputs (default 0)
  offset          float                                added to every answer: wrong everywhere, alike in every run (default 0)
  non_finite      none | nan | inf_batched             float outputs NaN always, or Inf in an execution of more than one
                                                       request (default none); other outputs keep the answer

mode sum: x = the sum of every element of every input. Without state the answer is x; with state
the model counts steps, s <- s + x + 1 (a fresh state starts at 0), and answers s, so a padding
row folded in changes the state even when its garbage input is zero. state batch_stats: the
model answers x - m, where m is 1000 plus the mean x of the last batch of more than one request
it ran (a batch of one has no spread to learn from, as batch normalisation in training mode
refuses one; the offset keeps what it learnt from ever being 0), so lone requests agree with each other and disagree once batched traffic has passed.
Every declared output gets the answer in its own datatype.
mode echo: each output OUT_<name> returns input <name> unchanged (every datatype).
mode plus_start: NVIDIA's simple_sequence (batching variant): READY ? INPUT + START : 0.
mode accumulate: the non-batching variant: acc <- START ? INPUT : acc + INPUT when READY; answers acc.
mode fail: every request gets an error response.
A decoupled config (model_transaction_policy.decoupled) answers through each request's sender.
"""
from __future__ import annotations

import importlib
import json

import numpy as np
import triton_python_backend_utils as pb_utils

NUMPY_TYPES = {
    "TYPE_BOOL": np.bool_, "TYPE_UINT8": np.uint8, "TYPE_UINT16": np.uint16, "TYPE_UINT32": np.uint32,
    "TYPE_UINT64": np.uint64, "TYPE_INT8": np.int8, "TYPE_INT16": np.int16, "TYPE_INT32": np.int32,
    "TYPE_INT64": np.int64, "TYPE_FP16": np.float16, "TYPE_FP32": np.float32, "TYPE_FP64": np.float64,
}
FLOATS = ("TYPE_FP16", "TYPE_BF16", "TYPE_FP32", "TYPE_FP64")
CONTROLS = ("START", "END", "READY")


def _bf16_input(tensor):
    """A BF16 input as a torch tensor, through DLPack (torch imported only here)."""
    import torch.utils.dlpack as dlpack

    return dlpack.from_dlpack(tensor.to_dlpack())


def _bf16_output(name: str, value) -> pb_utils.Tensor:
    """A BF16 output from `value`, a torch tensor (an echoed input) or a float64 numpy array."""
    import torch
    import torch.utils.dlpack as dlpack

    tensor = value if isinstance(value, torch.Tensor) else torch.from_numpy(value)
    return pb_utils.Tensor.from_dlpack(name, dlpack.to_dlpack(tensor.to(torch.bfloat16).contiguous()))


def _total(value) -> float:
    """The sum of every element as a float; for BYTES, the length of every element."""
    if not isinstance(value, np.ndarray):  # a BF16 torch tensor
        return float(value.double().sum().item())
    if value.dtype == np.object_:  # BYTES
        return float(sum(len(v) for v in value.reshape(-1)))
    return float(value.astype(np.float64).sum())


def _param(config: dict, name: str, default: str) -> str:
    value = config.get("parameters", {}).get(name, {}).get("string_value")
    return default if value in (None, "") else value


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.mode = _param(config, "mode", "sum")
        self.state = _param(config, "state", "none")
        self.reset_on_start = _param(config, "reset_on_start", "true") == "true"
        self.forget_on_end = _param(config, "forget_on_end", "true") == "true"
        self.honour_ready = _param(config, "honour_ready", "true") == "true"
        self.batch_mix = _param(config, "batch_mix", "false") == "true"
        self.noise = float(_param(config, "noise", "0"))
        self.cache_size = int(_param(config, "cache_size", "0"))
        self.offset = float(_param(config, "offset", "0"))
        self.non_finite = _param(config, "non_finite", "none")
        self.batched = int(config.get("max_batch_size", 0)) > 0
        self.inputs = [i["name"] for i in config["input"]]
        self.input_types = {i["name"]: i["data_type"] for i in config["input"]}
        self.outputs = [(o["name"], o["data_type"]) for o in config["output"]]
        self.decoupled = bool(config.get("model_transaction_policy", {}).get("decoupled", False))
        self.cells: dict = {}
        self.rng = np.random.default_rng(int(args.get("model_instance_device_id", 0) or 0) + 1)
        if "TYPE_BF16" in self.input_types.values() or any(t == "TYPE_BF16" for _, t in self.outputs):
            importlib.import_module("torch.utils.dlpack")  # at load, as before, not inside the first request

    def _tensor(self, request, name):
        tensor = pb_utils.get_input_tensor_by_name(request, name)
        if tensor is None:
            return None
        if self.input_types.get(name) == "TYPE_BF16":  # as_numpy refuses BF16: numpy has no such type
            return _bf16_input(tensor)
        return tensor.as_numpy()

    def _flag(self, request, name: str, default: int) -> int:
        tensor = self._tensor(request, name)
        return default if tensor is None else int(tensor.reshape(-1)[0].item())

    def _sum(self, request) -> float:
        total = 0.0
        for name in self.inputs:
            value = self._tensor(request, name)
            if value is not None:
                total += _total(value)
        return total

    def _key(self, request, row: int):
        if self.state == "corrid":
            return ("corrid", request.correlation_id())
        return ("slot", row)

    def _answer(self, request, row: int, batch: int) -> float:
        x = self._sum(request)
        if self.state == "batch_stats":
            return x - self.cells.get("mean", 0.0)
        if self.state == "none":
            return x + (batch if self.batch_mix else 0)
        ready = self._flag(request, "READY", 1)
        if not ready and self.honour_ready:
            return 0.0
        start, end = self._flag(request, "START", 0), self._flag(request, "END", 0)
        key = self._key(request, row)
        s = 0.0 if (start and self.reset_on_start) or key not in self.cells else self.cells[key]
        s = s + x + 1
        if end and ready and self.forget_on_end:
            self.cells.pop(key, None)
        elif self.cache_size:
            # an LRU cache smaller than the sessions the server holds at once: the least recently
            # used key is evicted, and its session carries on as if it had started over
            self.cells.pop(key, None)
            self.cells[key] = s
            while len(self.cells) > self.cache_size:
                self.cells.pop(next(iter(self.cells)))
        else:
            self.cells[key] = s
        return s

    def _out(self, name: str, data_type: str, value, batch: int = 1) -> pb_utils.Tensor:
        shape = (1, 1) if self.batched else (1,)
        if data_type == "TYPE_STRING":
            return pb_utils.Tensor(name, np.array([str(value).encode()], dtype=object).reshape(shape))
        floating = data_type in FLOATS
        array = np.full(shape, value, dtype=np.float64)
        if floating and self.noise:
            array = array * (1 + self.noise * self.rng.standard_normal(shape))
        if floating and (self.non_finite == "nan" or self.non_finite == "inf_batched" and batch > 1):
            array = np.full(shape, float("nan") if self.non_finite == "nan" else float("inf"), dtype=np.float64)
        if data_type == "TYPE_BF16":
            return _bf16_output(name, array)
        return pb_utils.Tensor(name, array.astype(NUMPY_TYPES[data_type]))

    def execute(self, requests):
        responses = []
        for row, request in enumerate(requests):
            if self.mode == "fail":
                responses.append(pb_utils.InferenceResponse(error=pb_utils.TritonError("the zoo's failing model refuses every request")))
                continue
            if self.mode == "echo":
                tensors = []
                for name in self.inputs:
                    value = self._tensor(request, name)
                    if isinstance(value, np.ndarray):
                        tensors.append(pb_utils.Tensor(f"OUT_{name}", value))
                    else:  # BF16, a torch tensor
                        tensors.append(_bf16_output(f"OUT_{name}", value))
                responses.append(pb_utils.InferenceResponse(output_tensors=tensors))
                continue
            if self.mode == "plus_start":
                ready, start = self._flag(request, "READY", 1), self._flag(request, "START", 0)
                answer = self._sum(request) + start if ready else 0
            elif self.mode == "accumulate":
                ready, start = self._flag(request, "READY", 1), self._flag(request, "START", 0)
                acc = self.cells.get(row, 0.0)
                if ready:
                    acc = self._sum(request) + (0.0 if start else acc)
                    self.cells[row] = acc
                answer = acc
            else:
                answer = self._answer(request, row, len(requests))
            if self.offset:
                answer += self.offset
            responses.append(pb_utils.InferenceResponse(output_tensors=[self._out(n, t, answer, len(requests)) for n, t in self.outputs]))
        if self.state == "batch_stats" and len(requests) > 1:
            # offset by 1000 so that what it learnt is never 0 (inputs sum to less than 100 in size)
            self.cells["mean"] = 1000.0 + round(sum(self._sum(r) for r in requests) / len(requests))
        if self.decoupled:
            for request, response in zip(requests, responses, strict=True):
                request.get_response_sender().send(response, flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
            return None
        return responses
