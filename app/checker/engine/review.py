"""Config review: the scheduler pitfalls Triton 2.51 (release 24.10) documents, found in a model's
config with no traffic sent.

What the CLI (`batching-lab check --config PATH`), the checker's report and the page call:

    review_target(target, expect=Expectations()) -> dict[str, list[ReviewFinding]]
        target: a ModelConfig, the JSON dict Triton's get_model_config returns, or a path to a
        config.pbtxt, a model folder or a whole model repository. The result is keyed by model
        name, one entry per model (a model folder without config.pbtxt gets NO_CONFIG_FILE).
        Bad files raise LabError (app/checker/engine/configs.py) naming the file and line.

    review(config, expect=Expectations()) -> list[ReviewFinding]
        The pure review of one ModelConfig: no server, no files.

A finding is a code, a severity, the config field it concerns and the numbers its sentence needs;
ReviewFinding.to_json() is what the report stores. Words are in app/checker/words/review.py.
Every code names the Triton source behind it (SOURCES: repository path and lines at r24.10) and
the lesson section that teaches it (LESSONS: 'lesson-id#anchor').

Some pitfalls depend on the Triton release: the review takes the server's version (Expectations.
triton_version, e.g. "2.51.0" for release 24.10: what GET /v2 reports; the live check passes the
server's own, `check --config` the user's --triton-version). Without one, such a check reports
NOT_CHECKED naming the figure instead of assuming a release.

A check that needs a figure only the user knows (think time, sessions, the IDs their clients
send) and was not given one does not guess: it reports NOT_CHECKED naming the figure, except the
idle timeout, which falls back on Triton's documented 1 s default (IDLE_TIMEOUT_DEFAULT).

An iterative sequence is one request that Triton numbers and re-enqueues itself (iterative()): the
rules about a client's pauses between requests and the IDs it sends do not apply to it (see
_idle and _corrid); those about slots, rows and padding do.
"""
from __future__ import annotations

import dataclasses as dc
import re
import sys
from enum import Enum
from pathlib import Path
from typing import Any

from tritonclient.grpc import model_config_pb2 as mc

from app.checker.engine import configs
from app.lab.deployment import scheduler_of
from app.lab.problems import LabError, Problem

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # enum.StrEnum is new in 3.11: the same str-valued enum, printing as its value

    class StrEnum(str, Enum):
        def __str__(self) -> str:
            return str.__str__(self)

        def __format__(self, format_spec: str) -> str:
            return str.__format__(self, format_spec)


class Severity(StrEnum):
    ERROR = "error"  # Triton refuses the config, or answers will be wrong
    WARNING = "warning"  # works, but sessions are lost, waits grow or a plan will not work
    INFO = "info"  # worth knowing; nothing is wrong by itself


class ReviewCode(StrEnum):
    IDLE_TIMEOUT_DEFAULT = "idle_timeout_default"
    IDLE_TIMEOUT_BELOW_THINK = "idle_timeout_below_think"
    DIRECT_WITHOUT_READY = "direct_without_ready"
    CORRID_TRUNCATED = "corrid_truncated"
    CORRID_SIGN_WRAPS = "corrid_sign_wraps"
    CORRID_STRING_IDS_INTEGER_TYPE = "corrid_string_ids_integer_type"
    CORRID_INTEGER_IDS_STRING_TYPE = "corrid_integer_ids_string_type"
    STRING_ID_TOO_LONG = "string_id_too_long"
    STRING_CORRID_PYTHON = "string_corrid_python"
    IMPLICIT_STATE_UNSUPPORTED = "implicit_state_unsupported"
    IMPLICIT_STATE_ORDER = "implicit_state_order"
    WARMUP_STRING_CORRID = "warmup_string_corrid"
    DIRECT_QUEUE_DELAY_IGNORED = "direct_queue_delay_ignored"
    PREFERRED_ABOVE_MAX = "preferred_above_max"
    CAPACITY_BELOW_SESSIONS = "capacity_below_sessions"
    DIRECT_ONE_SLOT = "direct_one_slot"
    DYNAMIC_NO_BATCHING = "dynamic_no_batching"
    OLDEST_WITHOUT_CORRID = "oldest_without_corrid"
    DECOUPLED_PRESERVE_ORDERING = "decoupled_preserve_ordering"
    ITERATIVE_NOT_DECOUPLED = "iterative_not_decoupled"
    ITERATIVE_CANDIDATES_BELOW_BATCH = "iterative_candidates_below_batch"
    ITERATIVE_ZERO_QUEUE_DELAY = "iterative_zero_queue_delay"
    RESPONSE_CACHE_HIDES_STATE = "response_cache_hides_state"
    NO_ROLLBACK_VERSION = "no_rollback_version"
    NO_CONFIG_FILE = "no_config_file"
    NOT_CHECKED = "not_checked"


SEVERITY: dict[ReviewCode, Severity] = {
    ReviewCode.IDLE_TIMEOUT_DEFAULT: Severity.WARNING,
    ReviewCode.IDLE_TIMEOUT_BELOW_THINK: Severity.ERROR,
    ReviewCode.DIRECT_WITHOUT_READY: Severity.ERROR,
    ReviewCode.CORRID_TRUNCATED: Severity.ERROR,
    ReviewCode.CORRID_SIGN_WRAPS: Severity.WARNING,
    ReviewCode.CORRID_STRING_IDS_INTEGER_TYPE: Severity.ERROR,
    ReviewCode.CORRID_INTEGER_IDS_STRING_TYPE: Severity.ERROR,
    ReviewCode.STRING_ID_TOO_LONG: Severity.ERROR,
    ReviewCode.STRING_CORRID_PYTHON: Severity.ERROR,
    ReviewCode.IMPLICIT_STATE_UNSUPPORTED: Severity.ERROR,
    ReviewCode.IMPLICIT_STATE_ORDER: Severity.ERROR,
    ReviewCode.WARMUP_STRING_CORRID: Severity.ERROR,
    ReviewCode.DIRECT_QUEUE_DELAY_IGNORED: Severity.WARNING,
    ReviewCode.PREFERRED_ABOVE_MAX: Severity.ERROR,
    ReviewCode.CAPACITY_BELOW_SESSIONS: Severity.WARNING,
    ReviewCode.DIRECT_ONE_SLOT: Severity.INFO,
    ReviewCode.DYNAMIC_NO_BATCHING: Severity.INFO,
    ReviewCode.OLDEST_WITHOUT_CORRID: Severity.WARNING,
    ReviewCode.DECOUPLED_PRESERVE_ORDERING: Severity.WARNING,
    ReviewCode.ITERATIVE_NOT_DECOUPLED: Severity.INFO,
    ReviewCode.ITERATIVE_CANDIDATES_BELOW_BATCH: Severity.WARNING,
    ReviewCode.ITERATIVE_ZERO_QUEUE_DELAY: Severity.INFO,
    ReviewCode.RESPONSE_CACHE_HIDES_STATE: Severity.INFO,
    ReviewCode.NO_ROLLBACK_VERSION: Severity.WARNING,
    ReviewCode.NO_CONFIG_FILE: Severity.WARNING,
    ReviewCode.NOT_CHECKED: Severity.INFO,
}

_SEQ = "core src/sequence_batch_scheduler/sequence_batch_scheduler.cc"
_UTILS = "core src/model_config_utils.cc"
_PROTO = "common protobuf/model_config.proto"
_ARCH = "server docs/user_guide/architecture.md"
_MCDOC = "server docs/user_guide/model_configuration.md"
_STATE = "core src/sequence_state"
_WARMUP = "core src/backend_model_instance.cc"
_REQUEST = "core src/infer_request.cc"

# Where Triton says so, at r24.10 unless a citation names its release (`@r25.01`: read with
# `git show <release>:<path>` in a clone of the repository; tests/checker/test_review.py checks
# each citation where tests/mirrors.py finds one), and the issue or pull request that reports it
# (`server#8586`: github.com/triton-inference-server/server/issues/8586).
SOURCES: dict[ReviewCode, str] = {
    ReviewCode.IDLE_TIMEOUT_DEFAULT: f"{_PROTO}:L1557-L1567; {_UTILS}:L748-L753; core src/constants.h:L92",
    ReviewCode.IDLE_TIMEOUT_BELOW_THINK: f"{_PROTO}:L1557-L1567; {_SEQ}:L1059-L1093",
    ReviewCode.DIRECT_WITHOUT_READY: f"{_SEQ}:L1734-L1781; {_ARCH}:L239-L249; python_backend src/python_be.cc:L262-L278",
    ReviewCode.CORRID_TRUNCATED: f"{_SEQ}:L1342-L1344, L1384-L1388; {_UTILS}:L1532-L1555",
    ReviewCode.CORRID_SIGN_WRAPS: f"{_SEQ}:L1342-L1344, L1384-L1388; {_UTILS}:L1532-L1555",
    ReviewCode.CORRID_STRING_IDS_INTEGER_TYPE: f"{_SEQ}:L1342-L1344, L1376-L1383",
    ReviewCode.CORRID_INTEGER_IDS_STRING_TYPE: f"{_SEQ}:L1344-L1349, L1384-L1388",
    ReviewCode.STRING_ID_TOO_LONG: ("core src/tritonserver.cc:L1848-L1853; server src/http_server.cc:L2876-L2877; "
                                   "server src/grpc/infer_handler.cc:L223-L224; python_backend src/request_executor.cc:L363-L364"),
    ReviewCode.STRING_CORRID_PYTHON: f"{_SEQ}:L1343-L1349, L1376-L1383; python_backend src/python_be.cc:L443-L449",
    ReviewCode.IMPLICIT_STATE_UNSUPPORTED: f"{_ARCH}:L299-L303",
    # Both maps are std::map, ordered by name; OutputState() takes the output's position in one
    # and feeds the input at that position in the other. Still so at r26.06; core#506 (open) fixes it.
    ReviewCode.IMPLICIT_STATE_ORDER: (f"{_STATE}.h:L190-L191; {_STATE}.cc:L234-L239, L255-L260, L277-L278, L290-L310; "
                                      f"{_STATE}.cc:L301-L307 @r26.06; server#8586; core#506"),
    # From 25.01 Normalize() checks the request's ID type against the CORRID control; a warmup
    # request is made with no ID (SequenceId() is a UINT64 0) and prepared while the instance is
    # created, so the instance fails and the model does not load. build.py: release 25.01 is 2.54.0.
    ReviewCode.WARMUP_STRING_CORRID: (f"{_WARMUP}:L315-L316, L355-L362, L436-L438, L530 @r25.01; "
                                      f"{_REQUEST}:L1232-L1234, L1413-L1460, L1805-L1809 @r25.01; "
                                      "server build.py:L73-L75 @r25.01; server#8110"),
    ReviewCode.DIRECT_QUEUE_DELAY_IGNORED: f"{_PROTO}:L1457-L1470; {_SEQ}:L1696-L1699",
    ReviewCode.PREFERRED_ABOVE_MAX: f"{_UTILS}:L1422-L1437, L1557-L1576",
    ReviewCode.CAPACITY_BELOW_SESSIONS: f"{_SEQ}:L160-L170; {_ARCH}:L461-L472; {_PROTO}:L1486-L1493",
    ReviewCode.DIRECT_ONE_SLOT: f"{_SEQ}:L160-L164, L1460",
    ReviewCode.DYNAMIC_NO_BATCHING: f"core src/dynamic_batch_scheduler.cc:L92; {_MCDOC}:L112-L127",
    ReviewCode.OLDEST_WITHOUT_CORRID: f"{_ARCH}:L533-L544; {_PROTO}:L1473-L1493",
    ReviewCode.DECOUPLED_PRESERVE_ORDERING: f"{_PROTO}:L1513-L1534",
    # An iterative sequence is one request, run again and again; decoupled, it streams as it goes.
    ReviewCode.ITERATIVE_NOT_DECOUPLED: f"{_MCDOC}:L1115-L1121, L1128-L1130; {_PROTO}:L1589-L1597",
    # Under oldest a batch draws requests from the candidate sequences only, and an iterative
    # sequence has one request: an execution holds at most max_candidate_sequences of them.
    ReviewCode.ITERATIVE_CANDIDATES_BELOW_BATCH: f"{_PROTO}:L1473-L1493; {_MCDOC}:L1115-L1121",
    # A rescheduled request is enqueued again like a new one, after the execution that sent its
    # response; with no queue delay the next batch forms without it (seen: fragmented executions).
    ReviewCode.ITERATIVE_ZERO_QUEUE_DELAY: f"{_PROTO}:L1505-L1511; core src/sequence_batch_scheduler/sequence_utils.cc:L32-L38",
    # Both schedulers that may cache (the default one is the dynamic one with batching off) look
    # the request's hash up before any instance runs it; a hit is answered from the cache.
    ReviewCode.RESPONSE_CACHE_HIDES_STATE: ("server docs/user_guide/response_cache.md:L43-L50, L82-L93, L263-L265; "
                                            "core src/dynamic_batch_scheduler.cc:L101-L104, L214-L234; "
                                            "core src/backend_model.cc:L836-L840; core src/cache_manager.cc:L338-L346"),
    ReviewCode.NO_ROLLBACK_VERSION: f"{_MCDOC}:L635-L660; {_UTILS}:L727-L732; core src/model_repository_manager/model_lifecycle.cc:L116-L141",
    ReviewCode.NO_CONFIG_FILE: f"{_MCDOC}:L270-L323",
    # Not a Triton behaviour: a check that lacked the user's figure; the source of values["check"] applies.
    ReviewCode.NOT_CHECKED: "the lab: app/checker/engine/review.py (see the source of the code in values['check'])",
}

# The lesson section that teaches each code ('lesson-id#anchor', lessons/0N-*.md).
LESSONS: dict[ReviewCode, str] = {
    ReviewCode.IDLE_TIMEOUT_DEFAULT: "direct-vs-oldest#the-idle-timeout",
    ReviewCode.IDLE_TIMEOUT_BELOW_THINK: "direct-vs-oldest#the-idle-timeout",
    ReviewCode.DIRECT_WITHOUT_READY: "sequence-batcher#padding-rows",
    ReviewCode.CORRID_TRUNCATED: "sequence-batcher#correlation-id-types",
    ReviewCode.CORRID_SIGN_WRAPS: "sequence-batcher#correlation-id-types",
    ReviewCode.CORRID_STRING_IDS_INTEGER_TYPE: "sequence-batcher#correlation-id-types",
    ReviewCode.CORRID_INTEGER_IDS_STRING_TYPE: "sequence-batcher#correlation-id-types",
    ReviewCode.STRING_ID_TOO_LONG: "sequence-batcher#requests-it-refuses",
    ReviewCode.STRING_CORRID_PYTHON: "sequence-batcher#correlation-id-types",
    ReviewCode.IMPLICIT_STATE_UNSUPPORTED: "sequence-batcher#implicit-state-management",
    ReviewCode.IMPLICIT_STATE_ORDER: "sequence-batcher#implicit-state-management",
    ReviewCode.WARMUP_STRING_CORRID: "sequence-batcher#correlation-id-types",
    ReviewCode.DIRECT_QUEUE_DELAY_IGNORED: "direct-vs-oldest#queue-delay-under-direct",
    ReviewCode.PREFERRED_ABOVE_MAX: "dynamic-batching#preferred-batch-sizes",
    ReviewCode.CAPACITY_BELOW_SESSIONS: "direct-vs-oldest#counting-capacity",
    ReviewCode.DIRECT_ONE_SLOT: "instances-vs-batching#why-one-instance-is-not-enough",
    ReviewCode.DYNAMIC_NO_BATCHING: "dynamic-batching#sizing-the-batch",
    ReviewCode.OLDEST_WITHOUT_CORRID: "direct-vs-oldest#oldest-an-instance-but-no-fixed-slot",
    ReviewCode.DECOUPLED_PRESERVE_ORDERING: "dynamic-batching#arrival-order-and-what-is-free",
    ReviewCode.ITERATIVE_NOT_DECOUPLED: "sequence-batcher#one-scheduler-per-model",
    ReviewCode.ITERATIVE_CANDIDATES_BELOW_BATCH: "sequence-batcher#one-scheduler-per-model",
    ReviewCode.ITERATIVE_ZERO_QUEUE_DELAY: "sequence-batcher#one-scheduler-per-model",
    ReviewCode.RESPONSE_CACHE_HIDES_STATE: "dynamic-batching#why-it-is-safe-for-stateless-work",
    ReviewCode.NO_ROLLBACK_VERSION: "choosing-and-rolling-out#versions-and-models-of-their-own",
    ReviewCode.NO_CONFIG_FILE: "choosing-and-rolling-out#check-the-configuration-on-the-target",
    ReviewCode.NOT_CHECKED: "choosing-and-rolling-out#check-the-configuration-on-the-target",
}

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
MAX_CLIENT_ID = 2**64 - 1  # the client API's sequence_id is a uint64 (0: no sequence)
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
# The server version each release reports (server build.py's version map at the release): the lab's
# r24.10 is 2.51.0; r25.01, which checks a request's correlation ID type and sizes a string CORRID
# to its ID, is 2.54.0.
LAB_TRITON_VERSION = "2.51.0"
CORRID_TYPE_CHECK_SINCE = "2.54.0"
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


def parse_version(text: str | None) -> tuple[int, int, int] | None:
    """(major, minor, patch) of a server version such as "2.51.0"; None for anything else (a
    release name such as "24.10" is not a server version)."""
    match = _VERSION.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch)


@dc.dataclass(frozen=True)
class Expectations:
    """What the user knows about their clients and server; None means "not stated", never a guess.

    think_ms: longest pause between two requests of one session (client think time).
    sessions: sessions open at once at peak.
    max_corrid: largest integer correlation ID the clients send (so: they send integer IDs).
    string_corrid_length: longest string correlation ID the clients send, in UTF-8 bytes (so: they
        send string IDs). Both may be given when some clients send each kind.
    backend: the backend that serves the model; overrides the config's backend and platform (needed
        when the config names neither).
    gpus: GPUs the server's instances can use (0 on a CPU-only server); needed only when an
        instance group leaves its devices to Triton (KIND_AUTO, or KIND_GPU without `gpus`).
    triton_version: the server version the model runs on ("2.51.0"); needed by the checks whose
        pitfall depends on the release.
    """

    think_ms: float | None = None
    sessions: int | None = None
    max_corrid: int | None = None
    string_corrid_length: int | None = None
    backend: str | None = None
    gpus: int | None = None
    triton_version: str | None = None

    @property
    def version(self) -> tuple[int, int, int] | None:
        return parse_version(self.triton_version)

    def problems(self) -> list[Problem]:
        """Figures that cannot be right, as codes (words: app/text/problems.py)."""
        out = []
        lows = {"think_ms": 0, "sessions": 1, "max_corrid": 1, "string_corrid_length": 1, "gpus": 0}
        for name, low in lows.items():
            value = getattr(self, name)
            if value is not None and value < low:
                out.append(Problem("checker_expectation_low", {"name": name, "low": low, "value": value}))
        if self.max_corrid is not None and self.max_corrid > MAX_CLIENT_ID:
            out.append(Problem("checker_corrid_above_uint64", {"value": self.max_corrid, "high": MAX_CLIENT_ID}))
        if self.triton_version is not None and self.version is None:
            out.append(Problem("checker_triton_version_format", {"value": self.triton_version, "example": LAB_TRITON_VERSION,
                                                                 "later": CORRID_TYPE_CHECK_SINCE}))
        return out

    def check(self) -> None:
        problems = self.problems()
        if problems:
            raise LabError(problems)


@dc.dataclass(frozen=True)
class ReviewFinding:
    code: ReviewCode
    severity: Severity
    field: str  # the config field path it concerns, e.g. sequence_batching.max_sequence_idle_microseconds
    values: dict[str, Any] = dc.field(default_factory=dict, hash=False)  # what its sentence needs

    def to_json(self) -> dict[str, Any]:
        return {"code": str(self.code), "severity": str(self.severity), "field": self.field, "values": dict(self.values)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReviewFinding:
        return cls(ReviewCode(data["code"]), Severity(data["severity"]), data["field"], dict(data.get("values", {})))


def _finding(code: ReviewCode, field: str, **values: Any) -> ReviewFinding:
    return ReviewFinding(code, SEVERITY[code], field, values)


def _not_checked(check: ReviewCode, field: str, *needs: str) -> ReviewFinding:
    return _finding(ReviewCode.NOT_CHECKED, field, check=str(check), needs=list(needs))


# ---- facts read from a config, as Triton reads them ------------------------------------------

def strategy(config: mc.ModelConfig) -> str | None:
    """'direct' or 'oldest' for a sequence model (direct when neither is named), else None."""
    found = scheduler_of(config)
    return found if found in ("direct", "oldest") else None


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


def at_least(expect: Expectations, version: str) -> bool | None:
    """Whether the stated server version is `version` or later; None when none is stated."""
    stated, wanted = expect.version, parse_version(version)
    if wanted is None:
        raise ValueError(f"not a server version: {version!r}")
    return None if stated is None else stated >= wanted


def idle_timeout_us(config: mc.ModelConfig) -> int:
    """The idle window in effect: 0 (unset) means Triton's 1 s default."""
    return config.sequence_batching.max_sequence_idle_microseconds or IDLE_DEFAULT_US


# ---- the checks: each returns the findings of one pitfall --------------------------------------

_IDLE_FIELD = "sequence_batching.max_sequence_idle_microseconds"


def iterative(config: mc.ModelConfig) -> bool:
    """An iterative sequence: each sequence is one request, rescheduled by the model until it completes."""
    return strategy(config) is not None and config.sequence_batching.iterative_sequence


def _idle(config: mc.ModelConfig, expect: Expectations) -> list[ReviewFinding]:
    # An iterative sequence has no client pauses: its one request comes back to Enqueue after each
    # execution (IterativeSequencer::RescheduleRequest, sequence_utils.cc:L35-L38 at r24.10), which
    # stamps its correlation ID again (sequence_batch_scheduler.cc:L750-L751), and the reaper skips
    # a sequence waiting in the backlog (L1095-L1110). Only one step longer than the window could
    # be reaped, which neither the default nor a think time says anything about.
    if iterative(config):
        return []
    idle_us = idle_timeout_us(config)
    if expect.think_ms is not None and expect.think_ms * 1000 >= idle_us:
        return [_finding(ReviewCode.IDLE_TIMEOUT_BELOW_THINK, _IDLE_FIELD, idle_ms=idle_us / 1000, think_ms=expect.think_ms)]
    # A server-normalised config writes the default out (1000000), a file leaves it 0: the same 1 s.
    if idle_us == IDLE_DEFAULT_US:
        return [_finding(ReviewCode.IDLE_TIMEOUT_DEFAULT, _IDLE_FIELD, idle_ms=idle_us / 1000)]
    if expect.think_ms is None:
        return [_not_checked(ReviewCode.IDLE_TIMEOUT_BELOW_THINK, _IDLE_FIELD, "think_ms")]
    return []


def _ready(config: mc.ModelConfig, expect: Expectations) -> list[ReviewFinding]:
    # Padding rows exist only below the highest ready slot, so one slot never gets one; a model
    # whose only state is implicit is safe too: padding rows run on a dummy state.
    if strategy(config) != "direct" or config.max_batch_size < 2 or config.sequence_batching.state:
        return []
    if control_input(config, mc.ModelSequenceBatching.Control.CONTROL_SEQUENCE_READY) is None:
        return [_finding(ReviewCode.DIRECT_WITHOUT_READY, "sequence_batching.control_input", slots=config.max_batch_size)]
    return []


def _corrid(config: mc.ModelConfig, expect: Expectations) -> list[ReviewFinding]:
    found = control_input(config, mc.ModelSequenceBatching.Control.CONTROL_SEQUENCE_CORRID)
    if found is None:
        return []  # the model is given no ID: nothing to overflow
    name, control = found
    data_type = mc.DataType.Name(control.data_type)
    field = f"sequence_batching.control_input[{name}].data_type"
    out = []
    # An iterative request sent without an ID gets Triton's own number, counted from 1 as an
    # integer (IterativeSequencer::SetupSequenceRequest, sequence_utils.h:L85-L87, L106 at r24.10): no
    # client ID to ask about, though IDs a client does state are still judged below.
    if expect.max_corrid is None and expect.string_corrid_length is None and not iterative(config):
        out.append(_not_checked(ReviewCode.CORRID_TRUNCATED, field, "client_ids"))
    if data_type == "TYPE_STRING" and backend_of(config, expect) == "python" and not at_least(expect, CORRID_TYPE_CHECK_SINCE):
        # Before 2.54 the buffer stays 4 + 128 bytes whatever the ID: the Python backend reads the
        # rest as more strings and refuses every request whose ID is shorter (a claims test shows it).
        # 2.54 sizes it to the ID (SetControlTensors at r25.01); unstated, the lab's 2.51 is meant.
        out.append(_finding(ReviewCode.STRING_CORRID_PYTHON, field, buffer=4 + STRING_ID_MAX_BYTES, fails_below=STRING_ID_MAX_BYTES - 3))
    if data_type == "TYPE_STRING":
        if expect.max_corrid is not None:
            out.append(_finding(ReviewCode.CORRID_INTEGER_IDS_STRING_TYPE, field, data_type=data_type, buffer=4 + STRING_ID_MAX_BYTES))
        return out
    if data_type not in CORRID_TYPES:
        return out  # Triton refuses any other type at load (ValidateModelConfig) with its own message
    size, largest = CORRID_TYPES[data_type]
    if expect.string_corrid_length is not None:
        out.append(_finding(ReviewCode.CORRID_STRING_IDS_INTEGER_TYPE, field, data_type=data_type, bytes=size,
                            fits=max(0, size - 4)))
    if expect.max_corrid is not None and expect.max_corrid > largest:
        if expect.max_corrid >= 2 ** (8 * size):
            out.append(_finding(ReviewCode.CORRID_TRUNCATED, field, data_type=data_type, max_corrid=expect.max_corrid,
                                largest=2 ** (8 * size) - 1))
        else:
            out.append(_finding(ReviewCode.CORRID_SIGN_WRAPS, field, data_type=data_type, max_corrid=expect.max_corrid,
                                largest=largest))
    return out


def _string_id_length(config: mc.ModelConfig, expect: Expectations) -> list[ReviewFinding]:
    # The C API refuses the request before any scheduler, whatever the CORRID type or whether the
    # model declares one (TRITONSERVER_InferenceRequestSetCorrelationIdString); HTTP, gRPC and BLS
    # all set a string ID through it.
    if expect.string_corrid_length is not None and expect.string_corrid_length > STRING_ID_MAX_BYTES:
        return [_finding(ReviewCode.STRING_ID_TOO_LONG, "sequence_batching", length=expect.string_corrid_length,
                         max_bytes=STRING_ID_MAX_BYTES)]
    return []


def _state(config: mc.ModelConfig, expect: Expectations) -> list[ReviewFinding]:
    if not config.sequence_batching.state:
        return []
    backend = backend_of(config, expect)
    if backend is None:
        return [_not_checked(ReviewCode.IMPLICIT_STATE_UNSUPPORTED, "sequence_batching.state", "backend")]
    if backend not in IMPLICIT_STATE_BACKENDS:
        return [_finding(ReviewCode.IMPLICIT_STATE_UNSUPPORTED, "sequence_batching.state", backend=backend,
                         supported=list(IMPLICIT_STATE_BACKENDS))]
    return []


def _state_order(config: mc.ModelConfig, expect: Expectations) -> list[ReviewFinding]:
    """Triton feeds the k-th output state in name order into the k-th input state in name order
    (SequenceStates::OutputState, server#8586): states whose two names sort differently cross."""
    states = _distinct_states(config)
    by_input = sorted(states, key=lambda s: s.input_name.encode())
    by_output = sorted(states, key=lambda s: s.output_name.encode())  # std::string orders by bytes
    crossed = [{"output": o.output_name, "fed_into": i.input_name, "declared": o.input_name}
               for o, i in zip(by_output, by_input, strict=True) if o.input_name != i.input_name]
    if not crossed:
        return []
    first = crossed[0]
    return [_finding(ReviewCode.IMPLICIT_STATE_ORDER, "sequence_batching.state", states=len(states), crossed=len(crossed),
                     output=first["output"], fed_into=first["fed_into"], declared=first["declared"], pairs=crossed)]


def _distinct_states(config: mc.ModelConfig) -> list[mc.ModelSequenceBatching.State]:
    """The states Triton keeps: a repeated input or output name is ignored with a warning
    (SequenceStates::Initialize); the first of each is kept here."""
    inputs, outputs, kept = set(), set(), []
    for state in config.sequence_batching.state:
        if state.input_name in inputs or state.output_name in outputs:
            continue
        inputs.add(state.input_name)
        outputs.add(state.output_name)
        kept.append(state)
    return kept


def _warmup_corrid(config: mc.ModelConfig, expect: Expectations) -> list[ReviewFinding]:
    found = control_input(config, mc.ModelSequenceBatching.Control.CONTROL_SEQUENCE_CORRID)
    if found is None or found[1].data_type != mc.TYPE_STRING:
        return []
    samples = [w.name for w in config.model_warmup if w.batch_size > 0]  # a batch-0 sample is skipped
    if not samples:
        return []
    newer = at_least(expect, CORRID_TYPE_CHECK_SINCE)
    if newer is None:
        return [_not_checked(ReviewCode.WARMUP_STRING_CORRID, "model_warmup", "triton_version")]
    if not newer:
        return []
    return [_finding(ReviewCode.WARMUP_STRING_CORRID, "model_warmup", version=expect.triton_version, since=CORRID_TYPE_CHECK_SINCE,
                     control=found[0], samples=len(samples))]


def _direct_delay(config: mc.ModelConfig, expect: Expectations) -> list[ReviewFinding]:
    if strategy(config) != "direct":
        return []
    direct = config.sequence_batching.direct
    if direct.max_queue_delay_microseconds > 0 and direct.minimum_slot_utilization == 0:
        return [_finding(ReviewCode.DIRECT_QUEUE_DELAY_IGNORED, "sequence_batching.direct.max_queue_delay_microseconds",
                         delay_us=direct.max_queue_delay_microseconds)]
    return []


def _preferred(config: mc.ModelConfig, expect: Expectations) -> list[ReviewFinding]:
    if config.HasField("dynamic_batching"):
        field, sizes = "dynamic_batching.preferred_batch_size", config.dynamic_batching.preferred_batch_size
    elif strategy(config) == "oldest":
        field, sizes = "sequence_batching.oldest.preferred_batch_size", config.sequence_batching.oldest.preferred_batch_size
    else:
        return []
    above = [size for size in sizes if size > config.max_batch_size]
    if above:
        return [_finding(ReviewCode.PREFERRED_ABOVE_MAX, field, preferred=max(above), max_batch_size=config.max_batch_size)]
    return []


def _capacity(config: mc.ModelConfig, expect: Expectations) -> list[ReviewFinding]:
    kind = strategy(config)
    if kind is None:
        return []
    field = "max_batch_size" if kind == "direct" else "sequence_batching.oldest.max_candidate_sequences"
    instances = triton_instance_count(config, expect)
    needs = [name for name, known in (("sessions", expect.sessions is not None), ("gpus", instances is not None)) if not known]
    if needs:
        return [_not_checked(ReviewCode.CAPACITY_BELOW_SESSIONS, field, *needs)]
    assert instances is not None and expect.sessions is not None  # else `needs` named it
    slots = slots_per_instance(config)
    if instances * slots < expect.sessions:
        return [_finding(ReviewCode.CAPACITY_BELOW_SESSIONS, field, instances=instances, slots=slots,
                         capacity=instances * slots, sessions=expect.sessions)]
    return []


def _unbatched(config: mc.ModelConfig, expect: Expectations) -> list[ReviewFinding]:
    # max_batch_size 0 and 1 alike give one slot / one request per execution (both schedulers
    # take max(1, max_batch_size)).
    if config.max_batch_size > 1:
        return []
    if strategy(config) == "direct":
        return [_finding(ReviewCode.DIRECT_ONE_SLOT, "max_batch_size", max_batch_size=config.max_batch_size)]
    if config.HasField("dynamic_batching"):
        return [_finding(ReviewCode.DYNAMIC_NO_BATCHING, "max_batch_size", max_batch_size=config.max_batch_size)]
    return []


def _oldest_corrid(config: mc.ModelConfig, expect: Expectations) -> list[ReviewFinding]:
    # What mixes sessions is several open sequences per instance (max_candidate_sequences, which may
    # exceed max_batch_size), not wide batches: with max_batch_size 1 every request runs in row 0.
    if strategy(config) != "oldest" or slots_per_instance(config) < 2 or config.sequence_batching.state:
        return []
    if control_input(config, mc.ModelSequenceBatching.Control.CONTROL_SEQUENCE_CORRID) is None:
        return [_finding(ReviewCode.OLDEST_WITHOUT_CORRID, "sequence_batching.control_input", candidates=slots_per_instance(config))]
    return []


def _decoupled_order(config: mc.ModelConfig, expect: Expectations) -> list[ReviewFinding]:
    if strategy(config) == "oldest" and config.model_transaction_policy.decoupled and config.sequence_batching.oldest.preserve_ordering:
        return [_finding(ReviewCode.DECOUPLED_PRESERVE_ORDERING, "sequence_batching.oldest.preserve_ordering")]
    return []


def _iterative(config: mc.ModelConfig, expect: Expectations) -> list[ReviewFinding]:
    """An iterative sequence (one request, rescheduled until the model completes it): whether it
    streams, whether an execution can fill its rows, whether rescheduled requests can rejoin one."""
    if not iterative(config):
        return []
    found = []
    if not config.model_transaction_policy.decoupled:
        found.append(_finding(ReviewCode.ITERATIVE_NOT_DECOUPLED, "model_transaction_policy.decoupled"))
    if strategy(config) == "oldest" and config.max_batch_size > 1:
        candidates = slots_per_instance(config)
        if candidates < config.max_batch_size:
            found.append(_finding(ReviewCode.ITERATIVE_CANDIDATES_BELOW_BATCH, "sequence_batching.oldest.max_candidate_sequences",
                                  candidates=candidates, max_batch_size=config.max_batch_size))
        if candidates > 1 and config.sequence_batching.oldest.max_queue_delay_microseconds == 0:
            found.append(_finding(ReviewCode.ITERATIVE_ZERO_QUEUE_DELAY, "sequence_batching.oldest.max_queue_delay_microseconds",
                                  max_batch_size=config.max_batch_size))
    return found


def _response_cache(config: mc.ModelConfig, expect: Expectations) -> list[ReviewFinding]:
    # A sequence or decoupled model with the cache is refused at load (ValidateModelConfig): only
    # the stateless schedulers look requests up in the cache.
    if not config.response_cache.enable or strategy(config) is not None or config.model_transaction_policy.decoupled:
        return []
    return [_finding(ReviewCode.RESPONSE_CACHE_HIDES_STATE, "response_cache.enable")]


def _versions(config: mc.ModelConfig, expect: Expectations) -> list[ReviewFinding]:
    # No policy is latest { num_versions: 1 } (NormalizeModelConfig), which is what a server reports.
    policy = config.version_policy
    choice = policy.WhichOneof("policy_choice") or "latest"
    if choice == "latest":
        served = policy.latest.num_versions if policy.HasField("latest") else 1
    elif choice == "specific":
        served = len(set(policy.specific.versions))
    else:
        return []  # all: every version in the repository is served
    if served < 2:
        return [_finding(ReviewCode.NO_ROLLBACK_VERSION, "version_policy", policy=choice, served=served)]
    return []


_CHECKS = (_idle, _ready, _corrid, _string_id_length, _state, _state_order, _warmup_corrid, _direct_delay, _preferred, _capacity,
           _unbatched, _oldest_corrid, _decoupled_order, _iterative, _response_cache, _versions)
_SEQUENCE_ONLY = {_idle, _ready, _corrid, _string_id_length, _state, _state_order, _warmup_corrid}


def review(config: mc.ModelConfig, expect: Expectations = Expectations()) -> list[ReviewFinding]:
    """Every pitfall found in one config, errors first; pure (no server, no files)."""
    expect.check()
    sequence = strategy(config) is not None
    found = [f for check in _CHECKS if sequence or check not in _SEQUENCE_ONLY for f in check(config, expect)]
    order = list(Severity)
    return sorted(found, key=lambda f: order.index(f.severity))


def review_target(target: Any, expect: Expectations = Expectations()) -> dict[str, list[ReviewFinding]]:
    """Findings per model name for a ModelConfig, a server config dict, or a path (config.pbtxt,
    model folder, model repository). Files are read by app/checker/engine/configs.py."""
    if isinstance(target, mc.ModelConfig):
        return {target.name: review(target, expect)}
    if isinstance(target, dict):
        config = configs.from_server_json(target)
        return {config.name: review(config, expect)}
    path = Path(target)
    if path.is_file():
        config = configs.load_config(path)
        return {config.name or path.parent.name: review(config, expect)}
    models = [(path.name, configs.load_model_folder(path))] if configs.is_model_folder(path) else configs.load_repository(path)
    return {
        name: review(config, expect) if config is not None else [_finding(ReviewCode.NO_CONFIG_FILE, "config.pbtxt")]
        for name, config in models
    }
