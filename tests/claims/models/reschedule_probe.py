"""Test-only Python-backend model that asks Triton to run every request again, whatever its scheduler.

Decoupled. Each execution answers each request once, non-final, with the instance's execution
counter (EXECUTION), then releases it with TRITONSERVER_REQUEST_RELEASE_RESCHEDULE. Served without
`iterative_sequence`, Triton must refuse that flag. No torch: numpy only, so the stub loads quickly.
"""
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.executions = 0

    def execute(self, requests):
        self.executions += 1
        for request in requests:
            out = pb_utils.Tensor("EXECUTION", np.array([[self.executions]], dtype=np.int32))
            request.set_release_flags(pb_utils.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE)
            request.get_response_sender().send(pb_utils.InferenceResponse(output_tensors=[out]))
        return None
