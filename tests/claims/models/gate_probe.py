"""Test-only Python-backend model: what each request looked like to the model, and a gate.

Every request carries TAG (its name) and HOLD. A request with HOLD=1 stops at a gate: the
model writes `<gate_dir>/started-<tag>` and waits until the test writes `<gate_dir>/open-<tag>`,
then writes `<gate_dir>/done-<tag>` holding whether Triton had marked the request cancelled by
then. So a test knows, without timing anything, that a request is inside the backend (and
its instance busy) and decides when it leaves.

Each reply says how the model saw the request: its row and the batch size, the instance,
the model version, `request.correlation_id()` and `request.flags()`, the READY and CORRID
control inputs when the config declares them, and SEEN, how many requests of this
correlation ID the model has run since its START. ROWS lists (correlation ID, flags, READY,
CORRID) for every row of the batch, padding rows included, since a padding row's own
reply reaches no client. Tensors go through numpy (`as_numpy`, `pb_utils.Tensor`), which needs
numpy 1 (the project pins numpy<2): no torch, so the stub loads in a fraction of the time.
"""
import json
import os
import re
import time

import numpy as np
import triton_python_backend_utils as pb_utils

GATE_LIMIT_S = 300  # a test that died must not hold the instance (and server shutdown) for ever
NO_ROW = -1  # ROWS entries past the batch, and control inputs the config does not declare
STRING_ID = -2  # ROWS/CORRELATION_ID entry for a string correlation ID (see ID_TEXT)
ID_TEXT_BYTES = 128  # the longest string correlation ID Triton takes (tritonserver.cc)


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.gate_dir = config["parameters"]["gate_dir"]["string_value"]
        self.max_rows = max(1, int(config.get("max_batch_size", 0)))
        match = re.search(r"_(\d+)$", args.get("model_instance_name", ""))
        self.instance = int(match.group(1)) if match else 0
        self.version = int(args.get("model_version", 0))
        self.batches = 0
        self.seen = {}  # correlation ID -> requests run since its START
        controls = config.get("sequence_batching", {}).get("control_input", [])
        # A TYPE_STRING CORRID arrives as BYTES, not a number: the probe reads only numbers.
        self.read_corrid = not any(c.get("data_type") == "TYPE_STRING" for ci in controls for c in ci.get("control", []))
        # Under the sequence batcher a real request always has a correlation ID (0 and "" are refused),
        # so a row with ID 0 is padding even where the config declares no READY control.
        self.sequence = "sequence_batching" in config

    def _scalar(self, request, name):
        tensor = pb_utils.get_input_tensor_by_name(request, name)
        if tensor is None:
            return NO_ROW
        return int(tensor.as_numpy().reshape(-1)[0])

    def _gate(self, request, tag):
        with open(os.path.join(self.gate_dir, f"started-{tag}.tmp"), "w") as handle:
            handle.write("started")
        os.replace(os.path.join(self.gate_dir, f"started-{tag}.tmp"), os.path.join(self.gate_dir, f"started-{tag}"))
        deadline = time.monotonic() + GATE_LIMIT_S
        while not os.path.exists(os.path.join(self.gate_dir, f"open-{tag}")) and time.monotonic() < deadline:
            time.sleep(0.005)
        done = os.path.join(self.gate_dir, f"done-{tag}")
        with open(done + ".tmp", "w") as handle:
            json.dump({"cancelled": bool(request.is_cancelled())}, handle)
        os.replace(done + ".tmp", done)

    def execute(self, requests):
        self.batches += 1
        rows = []
        for request in requests:
            cid = request.correlation_id()
            rows.append([STRING_ID if isinstance(cid, str) else int(cid), int(request.flags()),
                         self._scalar(request, "READY"),
                         self._scalar(request, "CORRID") if self.read_corrid else NO_ROW])
        table = rows + [[NO_ROW] * 4] * (self.max_rows - len(rows))
        responses = []
        for row, request in enumerate(requests):
            tag = self._scalar(request, "TAG")
            cid, flags, ready = request.correlation_id(), int(request.flags()), rows[row][2]
            padding = ready == 0 or (self.sequence and cid in (0, ""))
            if not padding and self._scalar(request, "HOLD") == 1:  # a padding row's inputs are garbage
                self._gate(request, tag)
            seen = 0
            if not padding and cid not in (0, ""):  # a padding row (READY 0, or ID 0) is no request of a sequence
                if flags & pb_utils.TRITONSERVER_REQUEST_FLAG_SEQUENCE_START:
                    self.seen[cid] = 0
                seen = self.seen.get(cid, 0) + 1
                self.seen[cid] = seen
                if flags & pb_utils.TRITONSERVER_REQUEST_FLAG_SEQUENCE_END:
                    self.seen.pop(cid, None)
            text = cid.encode()[:ID_TEXT_BYTES] if isinstance(cid, str) else b""
            values = {
                "TAG_OUT": tag, "ROW": row, "BATCH_SIZE": len(requests), "BATCH_NO": self.batches,
                "INSTANCE": self.instance, "VERSION": self.version, "CORRELATION_ID": rows[row][0],
                "FLAGS": flags, "READY_IN": ready, "CORRID_IN": rows[row][3], "SEEN": seen,
            }
            tensors = [pb_utils.Tensor(k, np.array([[v]], dtype=np.int64)) for k, v in values.items()]
            tensors.append(pb_utils.Tensor("ROWS", np.array([table], dtype=np.int64)))
            padded = list(text) + [0] * (ID_TEXT_BYTES - len(text))
            tensors.append(pb_utils.Tensor("ID_TEXT", np.array([padded], dtype=np.uint8)))
            responses.append(pb_utils.InferenceResponse(output_tensors=tensors))
        return responses
