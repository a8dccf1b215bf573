"""Held out: a toy text generator with the interface of Triton's vLLM backend, served as an iterative sequence.

The names and types are the vLLM backend's (vllm_backend src/model.py at r24.10): `text_input`
(one string), the optional `stream` (BOOL) and `sampling_parameters` (a JSON string, of which
only "max_tokens" is read), and `text_output` (strings). The engine is a deterministic toy: the
prompt's bytes give a hash, and each execution makes one token, a word of VOCAB picked by the
running hash; Triton runs the request again (RESCHEDULE) until max_tokens tokens (1 + hash mod 6
when sampling_parameters does not say). Streaming, each token is one response; not streaming, the
whole text is one response at the end. Either way the stream then closes with a response that
carries only the FINAL flag, as the vLLM backend did up to r24.01 (from r24.03 its last response
carries the flag itself). A cancelled request (the client stopped its stream) ends the same way.

Unlike the vLLM backend, which answers an error to sampling_parameters that are not JSON, the toy
reads them as saying nothing: the checker's generated strings are not JSON, and the check should
still measure the streams. Each request's state (the running hash, the step, the tokens left, the
text so far) lives in a cell:

  state_key  corrid | row    the cell's key: the CORRID control (sound), or the request's row in
                             the execution (the mistake: the row changes as the batch changes)
  step_ms    float           what one execution costs, so requests overlap (default 20)

Tensors go through numpy (as_numpy, pb_utils.Tensor), which needs numpy 1 (the project pins numpy<2).
"""
from __future__ import annotations

import json
import time

import numpy as np
import triton_python_backend_utils as pb_utils

VOCAB = ("the", "a", "cat", "sat", "on", "mat", "dog", "ran", "far", "up", "hill", "sun", "rose", "and", "we", "slept")
MAX_TOKENS = 256  # a larger max_tokens is cut to this, so no request streams for ever
FNV_PRIME = 16777619
FNV_OFFSET = 2166136261


def _param(config: dict, name: str, default: str) -> str:
    value = config.get("parameters", {}).get(name, {}).get("string_value")
    return default if value in (None, "") else value


def _hash(data: bytes) -> int:
    h = FNV_OFFSET
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFF
    return h


def _max_tokens(text: bytes | None, default: int) -> int:
    try:
        params = json.loads(text) if text is not None else {}
        asked = int(params["max_tokens"]) if isinstance(params, dict) and "max_tokens" in params else default
    except (ValueError, TypeError):
        asked = default  # not JSON, or a max_tokens that is no number: the toy's own length
    return min(max(asked, 1), MAX_TOKENS)


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.key = _param(config, "state_key", "corrid")
        self.step_s = float(_param(config, "step_ms", "20")) / 1000
        self.cells: dict = {}

    def _first(self, request, name: str):
        """The request's one element of input `name`; None where the client left the optional input out."""
        tensor = pb_utils.get_input_tensor_by_name(request, name)
        return None if tensor is None else tensor.as_numpy().reshape(-1)[0]

    def _fresh(self, request) -> list:
        h = _hash(bytes(self._first(request, "text_input")))
        return [h, 0, _max_tokens(self._first(request, "sampling_parameters"), 1 + h % 6), []]  # hash, step, left, words

    def _key(self, request, row: int) -> tuple:
        return ("corrid", int(self._first(request, "CORRID"))) if self.key == "corrid" else ("row", row)

    def execute(self, requests):
        time.sleep(self.step_s)
        for row, request in enumerate(requests):
            sender = request.get_response_sender()
            key = self._key(request, row)
            if request.is_cancelled():
                self.cells.pop(key, None)
                sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                request.set_release_flags(pb_utils.TRITONSERVER_REQUEST_RELEASE_ALL)
                continue
            if int(self._first(request, "START")) or key not in self.cells:
                self.cells[key] = self._fresh(request)
            cell = self.cells[key]
            h, k, left, words = cell
            word = VOCAB[(h >> 16) % len(VOCAB)]  # high bits: a product's low bits depend on its factors' low bits alone
            cell[:3] = [((h ^ (k + 1)) * FNV_PRIME) & 0xFFFFFFFF, k + 1, left - 1]
            words.append(word)
            streaming = bool(self._first(request, "stream"))  # absent: False, as the vLLM backend reads it
            if streaming:
                sender.send(self._response(word))
            if cell[2] > 0:
                request.set_release_flags(pb_utils.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE)
                continue
            self.cells.pop(key, None)
            if not streaming:
                sender.send(self._response(" ".join(words)))
            sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
            request.set_release_flags(pb_utils.TRITONSERVER_REQUEST_RELEASE_ALL)
        return None

    def _response(self, text: str):
        return pb_utils.InferenceResponse(output_tensors=[
            pb_utils.Tensor("text_output", np.array([[text.encode()]], dtype=np.object_)),
        ])
