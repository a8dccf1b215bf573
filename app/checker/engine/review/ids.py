"""Rules that read the correlation ID: the CORRID control's type against the IDs the clients send,
the Python backend's and a warmup's trouble with a string CORRID, and oldest without one.

Each function finds one rule's pitfall (rules.RULES names its code): a Hit, an Unchecked naming
the figures it lacked, or None.
"""
from __future__ import annotations

from tritonclient.grpc import model_config_pb2 as mc

from app.checker.engine.review.expectations import CORRID_TYPE_CHECK_SINCE, Expectations, at_least
from app.checker.engine.review.facts import CORRID_TYPES, STRING_ID_MAX_BYTES, backend_of, control_input, iterative, slots_per_instance, strategy
from app.checker.engine.review.findings import Found, hit, unchecked

_CORRID = mc.ModelSequenceBatching.Control.CONTROL_SEQUENCE_CORRID


def _corrid(config: mc.ModelConfig) -> tuple[str, str, str] | None:
    """(control input name, its data type's name, the field a finding names) of the CORRID control;
    None when the model is given no ID (nothing to overflow)."""
    found = control_input(config, _CORRID)
    if found is None:
        return None
    name, control = found
    return name, mc.DataType.Name(control.data_type), f"sequence_batching.control_input[{name}].data_type"


def _integer_corrid(config: mc.ModelConfig) -> tuple[str, str, int, int] | None:
    """(data type, field, byte size, largest ID kept) of an integer CORRID; None for any other.
    Triton refuses a type outside CORRID_TYPES and TYPE_STRING at load (ValidateModelConfig) with its own message."""
    found = _corrid(config)
    if found is None or found[1] not in CORRID_TYPES:
        return None
    _, data_type, field = found
    size, largest = CORRID_TYPES[data_type]
    return data_type, field, size, largest


def corrid_truncated(config: mc.ModelConfig, expect: Expectations) -> Found:
    found = _corrid(config)
    if found is None:
        return None
    _, data_type, field = found
    # An iterative request sent without an ID gets Triton's own number, counted from 1 as an
    # integer (IterativeSequencer::SetupSequenceRequest, sequence_utils.h:L85-L87, L106 at r24.10): no
    # client ID to ask about, though IDs a client does state are still judged.
    if expect.max_corrid is None and expect.string_corrid_length is None and not iterative(config):
        return unchecked(field, "client_ids")
    integer = _integer_corrid(config)
    if integer is None or expect.max_corrid is None:
        return None
    size = integer[2]
    if expect.max_corrid >= 2 ** (8 * size):
        return hit(field, data_type=data_type, max_corrid=expect.max_corrid, largest=2 ** (8 * size) - 1)
    return None


def corrid_sign_wraps(config: mc.ModelConfig, expect: Expectations) -> Found:
    integer = _integer_corrid(config)
    if integer is None or expect.max_corrid is None:
        return None
    data_type, field, size, largest = integer
    if largest < expect.max_corrid < 2 ** (8 * size):  # beyond that the ID is cut short: corrid_truncated
        return hit(field, data_type=data_type, max_corrid=expect.max_corrid, largest=largest)
    return None


def corrid_string_ids_integer_type(config: mc.ModelConfig, expect: Expectations) -> Found:
    integer = _integer_corrid(config)
    if integer is None or expect.string_corrid_length is None:
        return None
    data_type, field, size, _ = integer
    return hit(field, data_type=data_type, bytes=size, fits=max(0, size - 4))


def corrid_integer_ids_string_type(config: mc.ModelConfig, expect: Expectations) -> Found:
    found = _corrid(config)
    if found is None or found[1] != "TYPE_STRING" or expect.max_corrid is None:
        return None
    return hit(found[2], data_type=found[1], buffer=4 + STRING_ID_MAX_BYTES)


def string_corrid_python(config: mc.ModelConfig, expect: Expectations) -> Found:
    found = _corrid(config)
    if found is None or found[1] != "TYPE_STRING" or backend_of(config, expect) != "python":
        return None
    # Before 2.54 the buffer stays 4 + 128 bytes whatever the ID: the Python backend reads the
    # rest as more strings and refuses every request whose ID is shorter (a claims test shows it).
    # 2.54 sizes it to the ID (SetControlTensors at r25.01); unstated, the lab's 2.51 is meant.
    if at_least(expect, CORRID_TYPE_CHECK_SINCE):
        return None
    return hit(found[2], buffer=4 + STRING_ID_MAX_BYTES, fails_below=STRING_ID_MAX_BYTES - 3)


def string_id_too_long(config: mc.ModelConfig, expect: Expectations) -> Found:
    # The C API refuses the request before any scheduler, whatever the CORRID type or whether the
    # model declares one (TRITONSERVER_InferenceRequestSetCorrelationIdString); HTTP, gRPC and BLS
    # all set a string ID through it.
    if expect.string_corrid_length is not None and expect.string_corrid_length > STRING_ID_MAX_BYTES:
        return hit("sequence_batching", length=expect.string_corrid_length, max_bytes=STRING_ID_MAX_BYTES)
    return None


def warmup_string_corrid(config: mc.ModelConfig, expect: Expectations) -> Found:
    found = _corrid(config)
    if found is None or found[1] != "TYPE_STRING":
        return None
    samples = [w.name for w in config.model_warmup if w.batch_size > 0]  # a batch-0 sample is skipped
    if not samples:
        return None
    newer = at_least(expect, CORRID_TYPE_CHECK_SINCE)
    if newer is None:
        return unchecked("model_warmup", "triton_version")
    if not newer:
        return None
    return hit("model_warmup", version=expect.triton_version, since=CORRID_TYPE_CHECK_SINCE, control=found[0], samples=len(samples))


def oldest_without_corrid(config: mc.ModelConfig, expect: Expectations) -> Found:
    # What mixes sessions is several open sequences per instance (max_candidate_sequences, which may
    # exceed max_batch_size), not wide batches: with max_batch_size 1 every request runs in row 0.
    if strategy(config) != "oldest" or slots_per_instance(config) < 2 or config.sequence_batching.state:
        return None
    if _corrid(config) is None:
        return hit("sequence_batching.control_input", candidates=slots_per_instance(config))
    return None
