"""Test-only Python-backend model: how many requests and how many rows each execution held.

Stateless. A request may carry several rows (its first dimension). Every row of every request
is answered with the execution's request count and row count. Tensors go through numpy, which
needs numpy 1 (the project pins numpy<2)."""
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        rows = [pb_utils.get_input_tensor_by_name(r, "SEQ").as_numpy().shape[0] for r in requests]
        total = int(sum(rows))
        responses = []
        for n in rows:
            out = [pb_utils.Tensor("REQUESTS_IN_BATCH", np.full((n, 1), len(requests), dtype=np.int32)),
                   pb_utils.Tensor("ROWS_IN_BATCH", np.full((n, 1), total, dtype=np.int32))]
            responses.append(pb_utils.InferenceResponse(output_tensors=out))
        return responses
