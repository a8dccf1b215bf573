"""Test-only Python-backend model: a generation as an operator sees it, under iterative sequences.

Decoupled, under `sequence_batching { iterative_sequence: true }` with `direct` or `oldest`. A request
carries STEPS (how many executions it asks for), TAG (its name for the gate) and HOLD_AT (the step at
which it stops at the gate, 0 for never). Each step answers the request once with the CORRID it carries,
its row and the batch size, the instance's execution counter and the steps left, then reschedules it
(TRITONSERVER_REQUEST_RELEASE_RESCHEDULE) until none are left.

Padding rows (READY 0, sent by `direct` for a slot whose sequence has no request queued) get no state
and only a bare final flag, since their reply reaches no client.

Parameters (all optional):
- step_ms: how long each execution takes (a sleep), so steps have a cost and requests overlap;
- honour_cancel "true": a request Triton marked cancelled is answered with a bare final flag and
  released, as a careful generator does; otherwise the model never asks and reschedules it;
- final_apart "true": the last token goes out as a plain response and the final flag follows on its
  own, without a response, as some generators end a stream;
- gate_dir: the folder of the gate (tests/claims/helpers.py Gate): a request held at step HOLD_AT
  writes started-<TAG>, waits for open-<TAG>, then writes done-<TAG> saying whether Triton had
  marked it cancelled by then.
Tensors go through numpy (`as_numpy`, `pb_utils.Tensor`), which needs numpy 1 (the project pins
numpy<2): no torch, so the stub loads in a fraction of the time.
"""
import json
import os
import time

import numpy as np
import triton_python_backend_utils as pb_utils

GATE_LIMIT_S = 300  # a test that died must not hold the instance (and server shutdown) for ever


class TritonPythonModel:
    def initialize(self, args):
        parameters = json.loads(args["model_config"]).get("parameters", {})

        def parameter(key, default):
            return parameters.get(key, {}).get("string_value", default)

        self.step_s = float(parameter("step_ms", "0")) / 1000
        self.honour_cancel = parameter("honour_cancel", "false") == "true"
        self.final_apart = parameter("final_apart", "false") == "true"
        self.gate_dir = parameter("gate_dir", "")
        self.executions = 0
        self.left = {}  # CORRID -> steps still to run
        self.steps_done = {}  # CORRID -> steps run so far

    def _scalar(self, request, name, default=None):
        tensor = pb_utils.get_input_tensor_by_name(request, name)
        if tensor is None:
            return default
        return int(tensor.as_numpy().reshape(-1)[0])

    def _hold(self, request, tag):
        """Stop at the gate until the test opens it; record whether Triton cancelled the request meanwhile."""
        with open(os.path.join(self.gate_dir, f"started-{tag}"), "w") as marker:
            marker.write("started")
        opened = os.path.join(self.gate_dir, f"open-{tag}")
        deadline = time.monotonic() + GATE_LIMIT_S
        while not os.path.exists(opened) and time.monotonic() < deadline:
            time.sleep(0.01)
        with open(os.path.join(self.gate_dir, f"done-{tag}"), "w") as marker:
            json.dump({"cancelled": bool(request.is_cancelled())}, marker)

    def execute(self, requests):
        self.executions += 1
        live = []
        for row, request in enumerate(requests):
            if self._scalar(request, "READY", 1) == 0:  # a padding row of `direct`: nobody reads its reply
                request.get_response_sender().send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                continue
            corrid = self._scalar(request, "CORRID")
            if self._scalar(request, "START"):
                self.left[corrid] = self._scalar(request, "STEPS")
                self.steps_done[corrid] = 0
            self.steps_done[corrid] = self.steps_done.get(corrid, 0) + 1
            hold_at = self._scalar(request, "HOLD_AT", 0)
            if self.gate_dir and hold_at and hold_at == self.steps_done[corrid]:
                self._hold(request, self._scalar(request, "TAG"))
            live.append((row, request, corrid))
        if self.step_s:
            time.sleep(self.step_s)
        for row, request, corrid in live:
            sender = request.get_response_sender()
            if self.honour_cancel and request.is_cancelled():
                self.left.pop(corrid, None)
                sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                continue
            left = self.left.get(corrid, 1) - 1
            values = {"CORRID_SEEN": (corrid, np.uint64), "ROW": (row, np.int32), "BATCH": (len(requests), np.int32),
                      "EXECUTION": (self.executions, np.int32), "LEFT": (left, np.int32)}
            tensors = [pb_utils.Tensor(name, np.array([[value]], dtype=dtype)) for name, (value, dtype) in values.items()]
            response = pb_utils.InferenceResponse(output_tensors=tensors)
            if left > 0:
                self.left[corrid] = left
                request.set_release_flags(pb_utils.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE)
                sender.send(response)
            elif self.final_apart:
                self.left.pop(corrid, None)
                sender.send(response)
                sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
            else:
                self.left.pop(corrid, None)
                sender.send(response, flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
