"""Facts read from a model config as Triton reads them (at r24.10), and the numbers Triton fixes
that the review's rules compare with."""
from __future__ import annotations

from tritonclient.grpc import model_config_pb2 as mc

from app.checker.engine.review.expectations import Expectations
from app.lab.deployment import scheduler_of

# core src/constants.h:L92-L93 at r24.10; the C API refuses a longer string ID (tritonserver.cc:L1848-L1853).
IDLE_DEFAULT_US = 1_000_000
STRING_ID_MAX_BYTES = 128
# The model's CORRID tensor gets the ID's low bytes (SetControlTensors copies GetDataTypeByteSize
# bytes of the uint64): (byte size, largest ID it keeps as the client's number).
CORRID_TYPES = {
    "TYPE_UINT64": (8, 2**64 - 1),
    "TYPE_INT64": (8, 2**63 - 1),
    "TYPE_UINT32": (4, 2**32 - 1),
    "TYPE_INT32": (4, 2**31 - 1),
}
# architecture.md:L299-L303: the backends that implement implicit state.
IMPLICIT_STATE_BACKENDS = ("onnxruntime", "tensorrt", "pytorch")
# core src/model_config_utils.cc GetBackendTypeFromPlatform: a platform names its backend.
PLATFORM_BACKENDS = {
    "tensorrt_plan": "tensorrt",
    "onnxruntime_onnx": "onnxruntime",
    "pytorch_libtorch": "pytorch",
    "tensorflow_graphdef": "tensorflow",
    "tensorflow_savedmodel": "tensorflow",
}
# SetDefaultInstanceCount: 2 CPU instances by default for these backends, 1 otherwise.
TWO_CPU_INSTANCE_BACKENDS = ("tensorflow", "onnxruntime")


def strategy(config: mc.ModelConfig) -> str | None:
    """'direct' or 'oldest' for a sequence model (direct when neither is named), else None."""
    found = scheduler_of(config)
    return found if found in ("direct", "oldest") else None


def iterative(config: mc.ModelConfig) -> bool:
    """An iterative sequence: each sequence is one request, rescheduled by the model until it completes."""
    return strategy(config) is not None and config.sequence_batching.iterative_sequence


def backend_of(config: mc.ModelConfig, expect: Expectations) -> str | None:
    return expect.backend or config.backend or PLATFORM_BACKENDS.get(config.platform) or None


def control_input(config: mc.ModelConfig, kind: int) -> tuple[str, mc.ModelSequenceBatching.Control] | None:
    """(input name, control) of the first control of this kind, as Triton's validation finds it."""
    for entry in config.sequence_batching.control_input:
        for control in entry.control:
            if control.kind == kind:
                return entry.name, control
    return None


def slots_per_instance(config: mc.ModelConfig) -> int:
    """Sequences one instance holds: max_batch_size under direct, max_candidate_sequences under
    oldest when set; never under 1 (SequenceBatchScheduler::Create)."""
    slots: int = max(1, config.max_batch_size)
    if strategy(config) == "oldest" and config.sequence_batching.oldest.max_candidate_sequences > 0:
        slots = config.sequence_batching.oldest.max_candidate_sequences
    return slots


def triton_instance_count(config: mc.ModelConfig, expect: Expectations) -> int | None:
    """Instances Triton creates (NormalizeInstanceGroup, SetDefaultInstanceCount); None when that
    depends on how many GPUs the server has and expect.gpus does not say."""
    groups = list(config.instance_group) or [mc.ModelInstanceGroup()]  # Triton adds one KIND_AUTO group
    backend = backend_of(config, expect)
    total = 0
    for group in groups:
        kind = group.kind
        if kind == mc.ModelInstanceGroup.KIND_AUTO:
            if expect.gpus is None:
                return None
            present = expect.gpus > 0 and all(g < expect.gpus for g in group.gpus)
            kind = mc.ModelInstanceGroup.KIND_GPU if present else mc.ModelInstanceGroup.KIND_CPU
        count = group.count
        if count < 1:
            two = kind == mc.ModelInstanceGroup.KIND_CPU and backend in TWO_CPU_INSTANCE_BACKENDS
            count = 2 if two else 1
        if kind == mc.ModelInstanceGroup.KIND_GPU:
            if group.gpus:
                devices = len(group.gpus)
            elif expect.gpus is None:
                return None
            else:
                devices = expect.gpus
            total += count * devices
        else:
            total += count
    return total


def idle_timeout_us(config: mc.ModelConfig) -> int:
    """The idle window in effect: 0 (unset) means Triton's 1 s default."""
    return config.sequence_batching.max_sequence_idle_microseconds or IDLE_DEFAULT_US
