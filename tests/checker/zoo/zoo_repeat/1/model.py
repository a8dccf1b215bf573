"""A held-out decoupled model in the shape of NVIDIA's repeat_int32 example (python_backend,
examples/decoupled): element i of IN comes back as response i (OUT = IN[i], IDX = i) after DELAY[i]
milliseconds (0 where DELAY is shorter), and the stream ends WAIT milliseconds after the last one
with the final flag alone. Each request is answered from its own thread. Delays are capped at
MAX_DELAY_MS so a generated input cannot hold a test for seconds (the example trusts its client)."""
from __future__ import annotations

import threading
import time

import numpy as np
import triton_python_backend_utils as pb_utils

MAX_DELAY_MS = 50


def _values(request, name):
    tensor = pb_utils.get_input_tensor_by_name(request, name)
    return [] if tensor is None else [int(v) for v in tensor.as_numpy().reshape(-1)]


class TritonPythonModel:
    def initialize(self, args):
        self.threads: list[threading.Thread] = []

    def execute(self, requests):
        for request in requests:
            plan = (_values(request, "IN"), _values(request, "DELAY"), (_values(request, "WAIT") or [0])[0])
            thread = threading.Thread(target=self._answer, args=(request.get_response_sender(), *plan), daemon=True)
            self.threads.append(thread)
            thread.start()
        return None

    @staticmethod
    def _answer(sender, values, delays, wait_ms) -> None:
        for i, value in enumerate(values):
            time.sleep(min(delays[i] if i < len(delays) else 0, MAX_DELAY_MS) / 1000)
            outputs = [pb_utils.Tensor("OUT", np.array([value], dtype=np.int32)), pb_utils.Tensor("IDX", np.array([i], dtype=np.uint32))]
            sender.send(pb_utils.InferenceResponse(output_tensors=outputs))
        time.sleep(min(wait_ms, MAX_DELAY_MS) / 1000)
        sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)  # the final flag alone

    def finalize(self):
        for thread in self.threads:  # a stream still answering must end before the model goes
            thread.join(timeout=5)
