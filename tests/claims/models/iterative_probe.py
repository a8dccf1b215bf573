"""Test-only Python-backend model: what Triton's iterative sequence batcher hands a request.

Decoupled, under `sequence_batching { iterative_sequence: true }`. A request asks for STEPS
executions; each execution answers it once with the CORRID and START control values it carried,
the instance's execution counter and the steps left, then reschedules it
(TRITONSERVER_REQUEST_RELEASE_RESCHEDULE) until none are left, when the response is final.
Tensors go through numpy (`as_numpy`, `pb_utils.Tensor`), which needs numpy 1 (the project
pins numpy<2): no torch, so the stub loads in a fraction of the time.
"""
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.executions = 0
        self.left = {}  # CORRID -> steps still to run

    def _scalar(self, request, name):
        return int(pb_utils.get_input_tensor_by_name(request, name).as_numpy().reshape(-1)[0])

    def execute(self, requests):
        self.executions += 1
        for request in requests:
            corrid, start = self._scalar(request, "CORRID"), self._scalar(request, "START")
            if start:
                self.left[corrid] = self._scalar(request, "STEPS")
            left = self.left.get(corrid, 1) - 1
            values = {"CORRID_SEEN": (corrid, np.uint64), "START_SEEN": (start, np.int32),
                      "EXECUTION": (self.executions, np.int32), "LEFT": (left, np.int32)}
            tensors = [pb_utils.Tensor(name, np.array([[value]], dtype=dtype)) for name, (value, dtype) in values.items()]
            response = pb_utils.InferenceResponse(output_tensors=tensors)
            sender = request.get_response_sender()
            if left > 0:
                self.left[corrid] = left
                request.set_release_flags(pb_utils.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE)
                sender.send(response)
            else:
                self.left.pop(corrid, None)
                sender.send(response, flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
