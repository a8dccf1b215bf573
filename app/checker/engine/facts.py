"""What the checker needs to know about one model, read from the server's own config and metadata.

Pure: `ModelFacts.read(config, metadata)` takes the JSON the server returns for
`GET /v2/models/<m>/config` and `GET /v2/models/<m>` (tritonclient's get_model_config and
get_model_metadata), so the checker works from what the server runs, not from a file that may
differ. Defaults are Triton's own (model_config.proto at r24.10): a sequence batcher without a
strategy is `direct`; `max_sequence_idle_microseconds` 0 or unset means 1 s; a direct batcher
has max_batch_size slots per instance (1 when max_batch_size is 0); oldest has
max_candidate_sequences.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEFAULT_IDLE_US = 1_000_000  # model_config.proto: "If not specified, or 0, the default is 1 second"


@dataclass(frozen=True)
class TensorSpec:
    name: str
    datatype: str  # the wire's name: BOOL, UINT8 .. UINT64, INT8 .. INT64, FP16, BF16, FP32, FP64, BYTES
    dims: tuple[int, ...]  # without the batch dimension; -1 is variable
    optional: bool = False

    @property
    def variable(self) -> bool:
        return any(d < 0 for d in self.dims)


@dataclass(frozen=True)
class ModelFacts:
    name: str
    version: str
    scheduler: str  # "direct", "oldest", "dynamic" or "none"
    max_batch_size: int
    instances: int
    instance_kind: str
    slots_per_instance: int  # sequence slots of one instance (0 for the stateless path)
    idle_timeout_us: int  # the sequence batcher's; 0 for the stateless path
    decoupled: bool
    corrid_type: str | None  # data_type of a CONTROL_SEQUENCE_CORRID input, if the config declares one
    controls: tuple[str, ...]  # control kinds declared: START, END, READY, CORRID
    inputs: tuple[TensorSpec, ...] = field(default_factory=tuple)
    outputs: tuple[TensorSpec, ...] = field(default_factory=tuple)
    # As the server gave it: Any, since tritonclient's JSON is untyped and the review and the words read it by key.
    config: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def sequence(self) -> bool:
        return self.scheduler in ("direct", "oldest")

    @property
    def iterative(self) -> bool:
        """An iterative sequence: each request is a whole sequence, rescheduled by the model until it completes."""
        return self.sequence and bool((self.config.get("sequence_batching") or {}).get("iterative_sequence", False))

    @property
    def batched(self) -> bool:
        return self.max_batch_size > 0

    @property
    def capacity(self) -> int:
        """Sequences the server holds at once: instances x slots (the rest wait in the backlog)."""
        return self.instances * self.slots_per_instance

    @classmethod
    def read(cls, config: dict[str, Any], metadata: dict[str, Any]) -> ModelFacts:
        seq = config.get("sequence_batching")
        max_batch = int(config.get("max_batch_size", 0))
        if seq is not None:
            scheduler = "oldest" if "oldest" in seq else "direct"
        elif "dynamic_batching" in config:
            scheduler = "dynamic"
        else:
            scheduler = "none"
        groups = config.get("instance_group") or [{"count": 1}]
        instances = sum(int(g.get("count", 1) or 1) for g in groups)
        kinds = sorted({str(g.get("kind", "KIND_AUTO")) for g in groups})
        slots = 0
        idle = 0
        controls: list[str] = []
        corrid_type = None
        if seq is not None:
            slots = int(seq["oldest"].get("max_candidate_sequences", 0)) if scheduler == "oldest" else max(1, max_batch)
            idle = int(seq.get("max_sequence_idle_microseconds", 0) or 0) or DEFAULT_IDLE_US
            for control_input in seq.get("control_input", []):
                for control in control_input.get("control", []):
                    kind = str(control.get("kind", "")).removeprefix("CONTROL_SEQUENCE_")
                    controls.append(kind)
                    if kind == "CORRID":
                        corrid_type = str(control.get("data_type", "TYPE_UINT64")).removeprefix("TYPE_")
        optional = {i["name"]: bool(i.get("optional", False)) for i in config.get("input", [])}
        return cls(
            name=str(config.get("name") or metadata.get("name", "")),
            version=str((metadata.get("versions") or [""])[-1]),
            scheduler=scheduler,
            max_batch_size=max_batch,
            instances=instances,
            instance_kind=",".join(kinds),
            slots_per_instance=slots,
            idle_timeout_us=idle,
            decoupled=bool(config.get("model_transaction_policy", {}).get("decoupled", False)),
            corrid_type=corrid_type,
            controls=tuple(controls),
            inputs=tuple(_specs(metadata.get("inputs", []), max_batch, optional)),
            outputs=tuple(_specs(metadata.get("outputs", []), max_batch, {})),
            config=config,
        )

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name, "version": self.version, "scheduler": self.scheduler, "max_batch_size": self.max_batch_size,
            "instances": self.instances, "instance_kind": self.instance_kind, "slots_per_instance": self.slots_per_instance,
            "capacity": self.capacity, "idle_timeout_us": self.idle_timeout_us, "decoupled": self.decoupled,
            "corrid_type": self.corrid_type, "controls": list(self.controls),
            "inputs": [{"name": t.name, "datatype": t.datatype, "dims": list(t.dims)} for t in self.inputs],
            "outputs": [{"name": t.name, "datatype": t.datatype, "dims": list(t.dims)} for t in self.outputs],
        }


def _specs(tensors: list[dict[str, Any]], max_batch: int, optional: dict[str, bool]) -> list[TensorSpec]:
    out = []
    for tensor in tensors:
        shape = [int(d) for d in tensor.get("shape", [])]
        if max_batch > 0 and shape:
            shape = shape[1:]  # metadata puts the batch dimension (-1) first
        out.append(TensorSpec(tensor["name"], tensor["datatype"], tuple(shape), optional.get(tensor["name"], False)))
    return out
