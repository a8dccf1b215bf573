"""A held-out decoupled model in the shape of NVIDIA's square_int32 example (python_backend,
examples/decoupled): IN = n streams n responses of OUT = n, then closes the stream with the final
flag alone, which for IN = 0 is the whole stream. Each request is answered from its own thread,
as the example does, so requests overlap in flight. Negative or huge n is clamped to 0..64 so a
generated input cannot stream thousands of responses (the example trusts its client)."""
from __future__ import annotations

import threading

import numpy as np
import triton_python_backend_utils as pb_utils

MAX_RESPONSES = 64


class TritonPythonModel:
    def initialize(self, args):
        self.threads: list[threading.Thread] = []

    def execute(self, requests):
        for request in requests:
            n = int(pb_utils.get_input_tensor_by_name(request, "IN").as_numpy().reshape(-1)[0])
            thread = threading.Thread(target=self._answer, args=(request.get_response_sender(), n), daemon=True)
            self.threads.append(thread)
            thread.start()
        return None

    @staticmethod
    def _answer(sender, n: int) -> None:
        n = min(max(n, 0), MAX_RESPONSES)
        for _ in range(n):
            sender.send(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUT", np.array([n], dtype=np.int32))]))
        sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)  # the final flag alone: no more responses

    def finalize(self):
        for thread in self.threads:  # a stream still answering must end before the model goes
            thread.join(timeout=5)
