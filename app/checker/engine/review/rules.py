"""Every review rule, declared once, as data: its code, its severity, the configs it is looked for
in, the function that finds it, the lesson section that teaches it and the Triton source behind it.
Pure: no server, no words (app/checker/words/review.py, keyed by code).

A rule is looked for in the configs of its scope: SEQUENCE (a sequence batcher), STATELESS (a
dynamic batcher or none) or ANY. Two rows have no function: the review itself gives
NO_CONFIG_FILE (FOLDER: a model folder without config.pbtxt) and NOT_CHECKED (in place of any
rule's finding when that rule lacks a figure only the user knows). SEVERITY, SOURCES, LESSONS and
review() read this tuple.

Sources are at r24.10 unless a citation names its release (`@r25.01`: read with
`git show <release>:<path>` in a clone of the repository; tests/checker/test_review.py checks each
citation where tests/mirrors.py finds one), beside the issue or pull request that reports it
(`server#8586`: github.com/triton-inference-server/server/issues/8586).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tritonclient.grpc import model_config_pb2 as mc

from app.checker.engine.review import ids, sequences, serving
from app.checker.engine.review.expectations import Expectations
from app.checker.engine.review.findings import Found, ReviewCode, Severity

SEQUENCE, STATELESS, ANY, FOLDER = "sequence", "stateless", "any", "folder"
ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
C = ReviewCode

_SEQ = "core src/sequence_batch_scheduler/sequence_batch_scheduler.cc"
_UTILS = "core src/model_config_utils.cc"
_PROTO = "common protobuf/model_config.proto"
_ARCH = "server docs/user_guide/architecture.md"
_MCDOC = "server docs/user_guide/model_configuration.md"
_STATE = "core src/sequence_state"
_WARMUP = "core src/backend_model_instance.cc"
_REQUEST = "core src/infer_request.cc"


@dataclass(frozen=True)
class Rule:
    code: ReviewCode
    severity: Severity
    scope: str  # SEQUENCE, STATELESS or ANY: the configs it is looked for in (FOLDER: see above)
    finds: Callable[[mc.ModelConfig, Expectations], Found] | None  # None: the review itself gives it
    lesson: str  # the lesson section that teaches it: 'lesson-id#anchor' (lessons/0N-*.md)
    source: str  # where Triton says so: 'repo path:lines' and issues, '; '-separated


# In the order findings of one severity are listed.
RULES: tuple[Rule, ...] = (
    Rule(C.IDLE_TIMEOUT_BELOW_THINK, ERROR, SEQUENCE, sequences.idle_timeout_below_think, "direct-vs-oldest#the-idle-timeout",
         f"{_PROTO}:L1557-L1567; {_SEQ}:L1059-L1093"),
    Rule(C.IDLE_TIMEOUT_DEFAULT, WARNING, SEQUENCE, sequences.idle_timeout_default, "direct-vs-oldest#the-idle-timeout",
         f"{_PROTO}:L1557-L1567; {_UTILS}:L748-L753; core src/constants.h:L92"),
    Rule(C.DIRECT_WITHOUT_READY, ERROR, SEQUENCE, sequences.direct_without_ready, "sequence-batcher#padding-rows",
         f"{_SEQ}:L1734-L1781; {_ARCH}:L239-L249; python_backend src/python_be.cc:L262-L278"),
    Rule(C.STRING_CORRID_PYTHON, ERROR, SEQUENCE, ids.string_corrid_python, "sequence-batcher#correlation-id-types",
         f"{_SEQ}:L1343-L1349, L1376-L1383; python_backend src/python_be.cc:L443-L449"),
    Rule(C.CORRID_INTEGER_IDS_STRING_TYPE, ERROR, SEQUENCE, ids.corrid_integer_ids_string_type, "sequence-batcher#correlation-id-types",
         f"{_SEQ}:L1344-L1349, L1384-L1388"),
    Rule(C.CORRID_STRING_IDS_INTEGER_TYPE, ERROR, SEQUENCE, ids.corrid_string_ids_integer_type, "sequence-batcher#correlation-id-types",
         f"{_SEQ}:L1342-L1344, L1376-L1383"),
    Rule(C.CORRID_TRUNCATED, ERROR, SEQUENCE, ids.corrid_truncated, "sequence-batcher#correlation-id-types",
         f"{_SEQ}:L1342-L1344, L1384-L1388; {_UTILS}:L1532-L1555"),
    Rule(C.CORRID_SIGN_WRAPS, WARNING, SEQUENCE, ids.corrid_sign_wraps, "sequence-batcher#correlation-id-types",
         f"{_SEQ}:L1342-L1344, L1384-L1388; {_UTILS}:L1532-L1555"),
    Rule(C.STRING_ID_TOO_LONG, ERROR, SEQUENCE, ids.string_id_too_long, "sequence-batcher#requests-it-refuses",
         "core src/tritonserver.cc:L1848-L1853; server src/http_server.cc:L2876-L2877; "
         "server src/grpc/infer_handler.cc:L223-L224; python_backend src/request_executor.cc:L363-L364"),
    Rule(C.IMPLICIT_STATE_UNSUPPORTED, ERROR, SEQUENCE, sequences.implicit_state_unsupported, "sequence-batcher#implicit-state-management",
         f"{_ARCH}:L299-L303"),
    # Both maps are std::map, ordered by name; OutputState() takes the output's position in one
    # and feeds the input at that position in the other. Still so at r26.06; core#506 (open) fixes it.
    Rule(C.IMPLICIT_STATE_ORDER, ERROR, SEQUENCE, sequences.implicit_state_order, "sequence-batcher#implicit-state-management",
         f"{_STATE}.h:L190-L191; {_STATE}.cc:L234-L239, L255-L260, L277-L278, L290-L310; "
         f"{_STATE}.cc:L301-L307 @r26.06; server#8586; core#506"),
    # From 25.01 Normalize() checks the request's ID type against the CORRID control; a warmup
    # request is made with no ID (SequenceId() is a UINT64 0) and prepared while the instance is
    # created, so the instance fails and the model does not load. build.py: release 25.01 is 2.54.0.
    Rule(C.WARMUP_STRING_CORRID, ERROR, SEQUENCE, ids.warmup_string_corrid, "sequence-batcher#correlation-id-types",
         f"{_WARMUP}:L315-L316, L355-L362, L436-L438, L530 @r25.01; "
         f"{_REQUEST}:L1232-L1234, L1413-L1460, L1805-L1809 @r25.01; "
         "server build.py:L73-L75 @r25.01; server#8110"),
    Rule(C.DIRECT_QUEUE_DELAY_IGNORED, WARNING, SEQUENCE, sequences.direct_queue_delay_ignored, "direct-vs-oldest#queue-delay-under-direct",
         f"{_PROTO}:L1457-L1470; {_SEQ}:L1696-L1699"),
    Rule(C.PREFERRED_ABOVE_MAX, ERROR, ANY, serving.preferred_above_max, "dynamic-batching#preferred-batch-sizes",
         f"{_UTILS}:L1422-L1437, L1557-L1576"),
    Rule(C.CAPACITY_BELOW_SESSIONS, WARNING, SEQUENCE, serving.capacity_below_sessions, "direct-vs-oldest#counting-capacity",
         f"{_SEQ}:L160-L170; {_ARCH}:L461-L472; {_PROTO}:L1486-L1493"),
    Rule(C.DIRECT_ONE_SLOT, INFO, SEQUENCE, serving.direct_one_slot, "instances-vs-batching#why-one-instance-is-not-enough",
         f"{_SEQ}:L160-L164, L1460"),
    Rule(C.DYNAMIC_NO_BATCHING, INFO, STATELESS, serving.dynamic_no_batching, "dynamic-batching#sizing-the-batch",
         f"core src/dynamic_batch_scheduler.cc:L92; {_MCDOC}:L112-L127"),
    Rule(C.OLDEST_WITHOUT_CORRID, WARNING, SEQUENCE, ids.oldest_without_corrid, "direct-vs-oldest#oldest-an-instance-but-no-fixed-slot",
         f"{_ARCH}:L533-L544; {_PROTO}:L1473-L1493"),
    Rule(C.DECOUPLED_PRESERVE_ORDERING, WARNING, SEQUENCE, sequences.decoupled_preserve_ordering,
         "dynamic-batching#arrival-order-and-what-is-free", f"{_PROTO}:L1513-L1534"),
    # An iterative sequence is one request, run again and again; decoupled, it streams as it goes.
    Rule(C.ITERATIVE_NOT_DECOUPLED, INFO, SEQUENCE, sequences.iterative_not_decoupled, "sequence-batcher#one-scheduler-per-model",
         f"{_MCDOC}:L1115-L1121, L1128-L1130; {_PROTO}:L1589-L1597"),
    # Under oldest a batch draws requests from the candidate sequences only, and an iterative
    # sequence has one request: an execution holds at most max_candidate_sequences of them.
    Rule(C.ITERATIVE_CANDIDATES_BELOW_BATCH, WARNING, SEQUENCE, sequences.iterative_candidates_below_batch,
         "sequence-batcher#one-scheduler-per-model", f"{_PROTO}:L1473-L1493; {_MCDOC}:L1115-L1121"),
    # A rescheduled request is enqueued again like a new one, after the execution that sent its
    # response; with no queue delay the next batch forms without it (seen: fragmented executions).
    Rule(C.ITERATIVE_ZERO_QUEUE_DELAY, INFO, SEQUENCE, sequences.iterative_zero_queue_delay, "sequence-batcher#one-scheduler-per-model",
         f"{_PROTO}:L1505-L1511; core src/sequence_batch_scheduler/sequence_utils.cc:L32-L38"),
    # Both schedulers that may cache (the default one is the dynamic one with batching off) look
    # the request's hash up before any instance runs it; a hit is answered from the cache.
    Rule(C.RESPONSE_CACHE_HIDES_STATE, INFO, STATELESS, serving.response_cache_hides_state, "dynamic-batching#why-it-is-safe-for-stateless-work",
         "server docs/user_guide/response_cache.md:L43-L50, L82-L93, L263-L265; "
         "core src/dynamic_batch_scheduler.cc:L101-L104, L214-L234; "
         "core src/backend_model.cc:L836-L840; core src/cache_manager.cc:L338-L346"),
    Rule(C.NO_ROLLBACK_VERSION, WARNING, ANY, serving.no_rollback_version, "choosing-and-rolling-out#versions-and-models-of-their-own",
         f"{_MCDOC}:L635-L660; {_UTILS}:L727-L732; core src/model_repository_manager/model_lifecycle.cc:L116-L141"),
    Rule(C.NO_CONFIG_FILE, WARNING, FOLDER, None, "choosing-and-rolling-out#check-the-configuration-on-the-target",
         f"{_MCDOC}:L270-L323"),
    # Not a Triton behaviour: a check that lacked the user's figure; the source of values["check"] applies.
    Rule(C.NOT_CHECKED, INFO, ANY, None, "choosing-and-rolling-out#check-the-configuration-on-the-target",
         "the lab: app/checker/engine/review (see the source of the code in values['check'])"),
)

SEVERITY: dict[ReviewCode, Severity] = {r.code: r.severity for r in RULES}
SOURCES: dict[ReviewCode, str] = {r.code: r.source for r in RULES}
LESSONS: dict[ReviewCode, str] = {r.code: r.lesson for r in RULES}  # 'lesson-id#anchor'


def for_config(sequence: bool) -> tuple[Rule, ...]:
    """The rules looked for in one config (whether it has a sequence batcher), in their order."""
    return tuple(r for r in RULES if r.finds is not None and r.scope in (ANY, SEQUENCE if sequence else STATELESS))
