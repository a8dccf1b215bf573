"""The checker's streaming zoo: a toy generator served as an iterative sequence, sound or broken by its config.

One request is one stream: it asks for LENGTH tokens (1 + |LENGTH| mod 8 of them) from a four-number
PROMPT and gets one response per token, each made in its own execution; Triton runs the request
again (RESCHEDULE) until its last token, sent with the FINAL flag. Requests that arrive while
others are generating join their executions (in-flight batching). Each request's state (where
its generation stands: the running hash, the step, the tokens left) lives in a cell:

  state_key  corrid | row    the cell's key: the CORRID control (sound), or the request's row in
                             the execution (the mistake: the row changes as the batch changes, so a
                             request carries on from whichever request sat in that row before)
  step_ms    float           what one execution costs, so requests overlap (default 20)
  ending     normal | early_batched | stall_batched
                             early_batched: a request in an execution of more than one ends its
                             stream there (FINAL) before its last token; stall_batched: it stops
                             answering and is run again without a response until it is cancelled
                             (or MAX_STALLED executions have passed)

Tensors go through numpy (as_numpy, pb_utils.Tensor), which needs numpy 1 (the project pins numpy<2).
A cancelled request (the client stopped its stream) ends with an empty FINAL response.
"""
from __future__ import annotations

import json
import time

import numpy as np
import triton_python_backend_utils as pb_utils

VOCAB = 64
MAX_STALLED = 500  # executions a stalled request runs without answering before it ends


def _param(config: dict, name: str, default: str) -> str:
    value = config.get("parameters", {}).get(name, {}).get("string_value")
    return default if value in (None, "") else value


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.key = _param(config, "state_key", "corrid")
        self.step_s = float(_param(config, "step_ms", "20")) / 1000
        self.ending = _param(config, "ending", "normal")
        self.cells: dict = {}

    def _value(self, request, name: str) -> np.ndarray:
        return pb_utils.get_input_tensor_by_name(request, name).as_numpy().reshape(-1)

    def _fresh(self, request) -> list[int]:
        prompt = [int(v) % VOCAB for v in self._value(request, "PROMPT")]
        h = sum(p * w for p, w in zip(prompt, (1, 3, 5, 7), strict=False)) % VOCAB
        left = 1 + abs(int(self._value(request, "LENGTH")[0])) % 8
        return [h, 0, left]  # the running hash, the step, the tokens left

    def execute(self, requests):
        time.sleep(self.step_s)
        batch = len(requests)
        for row, request in enumerate(requests):
            sender = request.get_response_sender()
            if request.is_cancelled():
                self.cells.pop(("corrid", request.correlation_id()) if self.key == "corrid" else ("row", row), None)
                sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                request.set_release_flags(pb_utils.TRITONSERVER_REQUEST_RELEASE_ALL)
                continue
            start = int(self._value(request, "START")[0])
            key = ("corrid", int(self._value(request, "CORRID")[0])) if self.key == "corrid" else ("row", row)
            if start or key not in self.cells:
                self.cells[key] = self._fresh(request)
            cell = self.cells[key]
            if self.ending == "stall_batched" and (len(cell) > 3 or batch > 1 and cell[1] > 0):
                stalled = cell[3] + 1 if len(cell) > 3 else 1
                cell[3:] = [stalled]
                if stalled < MAX_STALLED:
                    request.set_release_flags(pb_utils.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE)
                    continue
                self.cells.pop(key, None)  # bounded, so an uncancelled stream still ends on the server
                sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                request.set_release_flags(pb_utils.TRITONSERVER_REQUEST_RELEASE_ALL)
                continue
            h, k, left = cell[:3]
            token = (h * 11 + 5) % VOCAB if k == 0 else (h * 13 + k * 7 + 3) % VOCAB
            cell[0], cell[1], cell[2] = (h * 17 + token) % VOCAB, k + 1, left - 1
            last = cell[2] <= 0 or (self.ending == "early_batched" and batch > 1 and k >= 1)
            response = pb_utils.InferenceResponse(output_tensors=[
                pb_utils.Tensor("TOKEN", np.array([[token]], dtype=np.int32)),
                pb_utils.Tensor("STEP", np.array([[k]], dtype=np.int32)),
            ])
            if last:
                self.cells.pop(key, None)
                sender.send(response, flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                request.set_release_flags(pb_utils.TRITONSERVER_REQUEST_RELEASE_ALL)
            else:
                sender.send(response)
                request.set_release_flags(pb_utils.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE)
        return None
