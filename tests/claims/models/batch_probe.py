"""Test-only Python-backend model: which batch and row each request ran in.

Stateless. Each execution sleeps `delay_ms` (so requests queue up behind it) and answers
every request with its own SEQ, the instance's running batch number, its row in the batch
and the batch size. Tensors go through numpy (`as_numpy`, `pb_utils.Tensor`), which needs
numpy 1 (the project pins numpy<2): no torch, so the stub loads in a fraction of the time.
"""
import json
import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.delay_s = float(config["parameters"]["delay_ms"]["string_value"]) / 1000.0
        self.batches = 0

    def execute(self, requests):
        self.batches += 1
        time.sleep(self.delay_s)
        responses = []
        for row, request in enumerate(requests):
            seq = pb_utils.get_input_tensor_by_name(request, "SEQ").as_numpy()
            values = {"SEQ_OUT": int(seq.reshape(-1)[0]), "BATCH_NO": self.batches, "ROW": row, "BATCH_SIZE": len(requests)}
            tensors = [pb_utils.Tensor(name, np.array([[value]], dtype=np.int32)) for name, value in values.items()]
            responses.append(pb_utils.InferenceResponse(output_tensors=tensors))
        return responses
