"""The config review: each code fires on one config and stays quiet on a near-identical one;
the shipped repository gives the findings the lab expects; the offline loader reads files,
repositories and broken files; a config read from the real Triton reviews like its file."""
from __future__ import annotations

import dataclasses
import re
import subprocess

import pytest
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2 as mc

from app.checker.engine.review import (
    LESSONS,
    SEVERITY,
    SOURCES,
    Expectations,
    ReviewCode,
    ReviewFinding,
    Severity,
    configs,
    parse_version,
    review,
    review_target,
)
from app.checker.engine.review.rules import ANY, FOLDER, RULES, SEQUENCE, STATELESS
from app.content.lessons import lessons_dir, load_lessons, resolve_link
from app.i18n import languages, words
from app.lab.deployment import deployments, instance_kind
from app.lab.paths import MODEL_REPOSITORY
from app.lab.problems import LabError
from app.lab.records import Traffic
from app.lab.scenario.ids import unique_ids
from app.recogniser.engine.setup import LIMITS
from app.text import problems as problems_text
from tests import mirrors
from tests.checker.conftest import REVIEW_CONFIGS
from tests.i18n.text_checks import reads_in
from tests.server_calls import ask

ENGLISH = words("en")  # problems are worded at the edge; str() of a LabError is its codes

C = ReviewCode

# A sound sequence model: 2 CPU instances x 4 direct slots, READY and a uint64 CORRID, 5 s idle
# window, two versions served. Every case below changes one thing in it.
DIRECT = """
name: "m"
backend: "onnxruntime"
max_batch_size: 4
input [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ]
sequence_batching {
  max_sequence_idle_microseconds: 5000000
  control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
    { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ] },
    { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] }
  ]
  direct { }
}
instance_group [ { count: 2 kind: KIND_CPU } ]
version_policy { latest { num_versions: 2 } }
"""
OLDEST = None  # built from DIRECT below
DYNAMIC = """
name: "d"
backend: "onnxruntime"
max_batch_size: 4
input [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ]
dynamic_batching { preferred_batch_size: [ 4 ] }
instance_group [ { count: 1 kind: KIND_CPU } ]
version_policy { all { } }
"""
STATE = """
  state [ { input_name: "S_IN" output_name: "S_OUT" data_type: TYPE_FP32 dims: [ 1 ] } ]
  direct { }"""
# Every figure stated: the sound configs give no finding at all under it.
FULL = Expectations(think_ms=500, sessions=8, max_corrid=2**40, gpus=0)
# Two implicit states whose output names sort as their input names do, and the pair of server
# issue 8586, whose do not (channel < channel_len, but channel_len_next < channel_next).
STATES_ALIGNED = """
  state [ { input_name: "A_IN" output_name: "A_OUT" data_type: TYPE_FP32 dims: [ 1 ] },
          { input_name: "B_IN" output_name: "B_OUT" data_type: TYPE_FP32 dims: [ 1 ] } ]
  direct { }"""
STATES_CROSSED = """
  state [ { input_name: "cache_last_channel" output_name: "cache_last_channel_next" data_type: TYPE_FP16 dims: [ 4 ] },
          { input_name: "cache_last_channel_len" output_name: "cache_last_channel_len_next" data_type: TYPE_INT64 dims: [ 1 ] } ]
  direct { }"""
WARMUP = """
model_warmup [ { name: "w" batch_size: 1 inputs { key: "X" value: { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true } } } ]"""
NEW = dataclasses.replace(FULL, max_corrid=None, string_corrid_length=36, triton_version="2.54.0")  # release 25.01
OLD = dataclasses.replace(NEW, triton_version="2.53.0")  # release 24.12


def variant(base: str, old: str, new: str) -> str:
    assert old in base, f"{old!r} not in the base config"
    return base.replace(old, new, 1)


OLDEST = variant(DIRECT, "direct { }", "oldest { max_candidate_sequences: 4 preferred_batch_size: [ 4 ] }")
# An iterative sequence (in-flight batching): decoupled, a small queue delay, as many candidates as rows.
ITERATIVE = variant(variant(OLDEST, "oldest {", "iterative_sequence: true\n  oldest { max_queue_delay_microseconds: 1000"),
                    'name: "m"', 'name: "m" model_transaction_policy { decoupled: true }')


def parse(text: str) -> mc.ModelConfig:
    return text_format.Parse(text, mc.ModelConfig())


def codes(text: str, expect: Expectations = FULL) -> list[ReviewCode]:
    return [f.code for f in review(parse(text), expect)]


def test_the_sound_configs_give_no_finding_when_every_figure_is_stated():
    assert codes(DIRECT) == [] and codes(OLDEST) == [] and codes(DYNAMIC) == [] and codes(ITERATIVE) == []


# (code, config that fires, near-identical config that does not, expectations for each)
CASES = [
    # unset, 0 and the server's normalised 1000000 are the same 1 s default
    (C.IDLE_TIMEOUT_DEFAULT, variant(DIRECT, "max_sequence_idle_microseconds: 5000000", ""), DIRECT, FULL, FULL),
    (C.IDLE_TIMEOUT_DEFAULT, variant(DIRECT, "5000000", "0"), DIRECT, FULL, FULL),
    (C.IDLE_TIMEOUT_DEFAULT, variant(DIRECT, "5000000", "1000000"), variant(DIRECT, "5000000", "1000001"), FULL, FULL),
    (C.IDLE_TIMEOUT_BELOW_THINK, DIRECT, DIRECT, dataclasses.replace(FULL, think_ms=5000), dataclasses.replace(FULL, think_ms=4999)),
    (C.DIRECT_WITHOUT_READY, variant(DIRECT, '{ name: "READY"', '{ name: "LIVE"').replace("CONTROL_SEQUENCE_READY", "CONTROL_SEQUENCE_END"),
     DIRECT, FULL, FULL),
    # one slot never gets a padding row: no READY needed
    (C.DIRECT_WITHOUT_READY, variant(DIRECT, "CONTROL_SEQUENCE_READY", "CONTROL_SEQUENCE_END"),
     variant(variant(DIRECT, "CONTROL_SEQUENCE_READY", "CONTROL_SEQUENCE_END"), "max_batch_size: 4", "max_batch_size: 1"), FULL, FULL),
    (C.CORRID_TRUNCATED, variant(DIRECT, "TYPE_UINT64", "TYPE_UINT32"), variant(DIRECT, "TYPE_UINT64", "TYPE_UINT32"),
     dataclasses.replace(FULL, max_corrid=2**32), dataclasses.replace(FULL, max_corrid=2**32 - 1)),
    (C.CORRID_TRUNCATED, variant(DIRECT, "TYPE_UINT64", "TYPE_INT32"), variant(DIRECT, "TYPE_UINT64", "TYPE_INT64"), FULL, FULL),
    (C.CORRID_SIGN_WRAPS, variant(DIRECT, "TYPE_UINT64", "TYPE_INT64"), variant(DIRECT, "TYPE_UINT64", "TYPE_INT64"),
     dataclasses.replace(FULL, max_corrid=2**63), dataclasses.replace(FULL, max_corrid=2**63 - 1)),
    (C.CORRID_SIGN_WRAPS, variant(DIRECT, "TYPE_UINT64", "TYPE_INT32"), variant(DIRECT, "TYPE_UINT64", "TYPE_UINT32"),
     dataclasses.replace(FULL, max_corrid=2**31), dataclasses.replace(FULL, max_corrid=2**31)),
    (C.CORRID_STRING_IDS_INTEGER_TYPE, DIRECT, variant(DIRECT, "TYPE_UINT64", "TYPE_STRING"),
     dataclasses.replace(FULL, max_corrid=None, string_corrid_length=36), dataclasses.replace(FULL, max_corrid=None, string_corrid_length=36)),
    (C.CORRID_INTEGER_IDS_STRING_TYPE, variant(DIRECT, "TYPE_UINT64", "TYPE_STRING"), variant(DIRECT, "TYPE_UINT64", "TYPE_STRING"),
     FULL, dataclasses.replace(FULL, max_corrid=None, string_corrid_length=36)),
    (C.STRING_ID_TOO_LONG, variant(DIRECT, "TYPE_UINT64", "TYPE_STRING"), variant(DIRECT, "TYPE_UINT64", "TYPE_STRING"),
     dataclasses.replace(FULL, max_corrid=None, string_corrid_length=129), dataclasses.replace(FULL, max_corrid=None, string_corrid_length=128)),
    # the C API refuses a long string ID whatever the CORRID type, and with no CORRID control at all
    (C.STRING_ID_TOO_LONG, variant(DIRECT, ',\n    { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] }', ""),
     variant(DIRECT, ',\n    { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] }', ""),
     dataclasses.replace(FULL, max_corrid=None, string_corrid_length=129), dataclasses.replace(FULL, max_corrid=None, string_corrid_length=128)),
    # the Python backend cannot take a TYPE_STRING CORRID on 2.51; another backend can
    (C.STRING_CORRID_PYTHON, variant(variant(DIRECT, "TYPE_UINT64", "TYPE_STRING"), '"onnxruntime"', '"python"'),
     variant(DIRECT, "TYPE_UINT64", "TYPE_STRING"), FULL, FULL),
    (C.IMPLICIT_STATE_UNSUPPORTED, variant(variant(DIRECT, "  direct { }", STATE), '"onnxruntime"', '"python"'),
     variant(DIRECT, "  direct { }", STATE), FULL, FULL),
    # a platform names its backend; an override names one the config does not
    (C.IMPLICIT_STATE_UNSUPPORTED, variant(variant(DIRECT, "  direct { }", STATE), 'backend: "onnxruntime"', 'platform: "tensorflow_savedmodel"'),
     variant(variant(DIRECT, "  direct { }", STATE), 'backend: "onnxruntime"', 'platform: "pytorch_libtorch"'), FULL, FULL),
    (C.IMPLICIT_STATE_UNSUPPORTED, variant(variant(DIRECT, "  direct { }", STATE), 'backend: "onnxruntime"', ""),
     variant(variant(DIRECT, "  direct { }", STATE), 'backend: "onnxruntime"', ""),
     dataclasses.replace(FULL, backend="python"), dataclasses.replace(FULL, backend="tensorrt")),
    (C.DIRECT_QUEUE_DELAY_IGNORED, variant(DIRECT, "direct { }", "direct { max_queue_delay_microseconds: 2000 }"),
     variant(DIRECT, "direct { }", "direct { max_queue_delay_microseconds: 2000 minimum_slot_utilization: 0.5 }"), FULL, FULL),
    (C.PREFERRED_ABOVE_MAX, variant(DYNAMIC, "[ 4 ]", "[ 2, 8 ]"), variant(DYNAMIC, "[ 4 ]", "[ 2, 4 ]"), FULL, FULL),
    (C.PREFERRED_ABOVE_MAX, variant(OLDEST, "preferred_batch_size: [ 4 ]", "preferred_batch_size: [ 5 ]"), OLDEST, FULL, FULL),
    (C.CAPACITY_BELOW_SESSIONS, DIRECT, DIRECT, dataclasses.replace(FULL, sessions=9), dataclasses.replace(FULL, sessions=8)),
    # oldest without max_candidate_sequences holds max_batch_size sequences per instance
    (C.CAPACITY_BELOW_SESSIONS, variant(OLDEST, "max_candidate_sequences: 4", ""), variant(OLDEST, "max_candidate_sequences: 4", "max_candidate_sequences: 5"),
     dataclasses.replace(FULL, sessions=9), dataclasses.replace(FULL, sessions=9)),
    # KIND_GPU without gpus: one group per GPU the server has
    (C.CAPACITY_BELOW_SESSIONS, variant(DIRECT, "kind: KIND_CPU", "kind: KIND_GPU"), variant(DIRECT, "kind: KIND_CPU", "kind: KIND_GPU"),
     dataclasses.replace(FULL, sessions=9, gpus=1), dataclasses.replace(FULL, sessions=9, gpus=2)),
    (C.DIRECT_ONE_SLOT, variant(DIRECT, "max_batch_size: 4", "max_batch_size: 0"), variant(DIRECT, "max_batch_size: 4", "max_batch_size: 2"),
     dataclasses.replace(FULL, sessions=2), dataclasses.replace(FULL, sessions=2)),
    (C.DYNAMIC_NO_BATCHING, variant(variant(DYNAMIC, "max_batch_size: 4", "max_batch_size: 0"), "preferred_batch_size: [ 4 ]", ""),
     variant(variant(DYNAMIC, "max_batch_size: 4", "max_batch_size: 2"), "preferred_batch_size: [ 4 ]", ""), FULL, FULL),
    (C.OLDEST_WITHOUT_CORRID, variant(OLDEST, "CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64", "CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ]"),
     OLDEST, FULL, FULL),
    # several open sequences per instance mix in row 0 even with max_batch_size 1; one candidate cannot
    (C.OLDEST_WITHOUT_CORRID,
     variant(variant(OLDEST, "CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64", "CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ]"),
             "max_batch_size: 4", "max_batch_size: 1").replace("preferred_batch_size: [ 4 ]", ""),
     variant(variant(variant(OLDEST, "CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64", "CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ]"),
                     "max_batch_size: 4", "max_batch_size: 1"), "max_candidate_sequences: 4 preferred_batch_size: [ 4 ]",
             "max_candidate_sequences: 1"),
     dataclasses.replace(FULL, sessions=2), dataclasses.replace(FULL, sessions=2)),
    # implicit state carries each sequence's state: no CORRID needed
    (C.OLDEST_WITHOUT_CORRID, variant(OLDEST, "CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64", "CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ]"),
     variant(variant(OLDEST, "CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64", "CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ]"),
             "  oldest {", STATE.replace("  direct { }", "  oldest {")), FULL, FULL),
    # Triton pairs states by their places in name order (server issue 8586)
    (C.IMPLICIT_STATE_ORDER, variant(DIRECT, "  direct { }", STATES_CROSSED), variant(DIRECT, "  direct { }", STATES_ALIGNED), FULL, FULL),
    # from 25.01 a warmup request's integer ID is refused for a string CORRID (server issue 8110)
    (C.WARMUP_STRING_CORRID, variant(DIRECT, "TYPE_UINT64", "TYPE_STRING") + WARMUP, variant(DIRECT, "TYPE_UINT64", "TYPE_STRING") + WARMUP,
     NEW, OLD),
    (C.WARMUP_STRING_CORRID, variant(DIRECT, "TYPE_UINT64", "TYPE_STRING") + WARMUP, DIRECT + WARMUP, NEW, NEW),
    (C.RESPONSE_CACHE_HIDES_STATE, DYNAMIC + "response_cache { enable: true }\n", DYNAMIC + "response_cache { enable: false }\n", FULL, FULL),
    (C.DECOUPLED_PRESERVE_ORDERING,
     variant(variant(OLDEST, "max_candidate_sequences: 4", "max_candidate_sequences: 4 preserve_ordering: true"), 'name: "m"',
             'name: "m" model_transaction_policy { decoupled: true }'),
     variant(OLDEST, "max_candidate_sequences: 4", "max_candidate_sequences: 4 preserve_ordering: true"), FULL, FULL),
    (C.NO_ROLLBACK_VERSION, variant(DIRECT, "version_policy { latest { num_versions: 2 } }", ""), DIRECT, FULL, FULL),
    (C.NO_ROLLBACK_VERSION, variant(DIRECT, "num_versions: 2", "num_versions: 1"), variant(DIRECT, "latest { num_versions: 2 }", "all { }"), FULL, FULL),
    (C.NO_ROLLBACK_VERSION, variant(DIRECT, "latest { num_versions: 2 }", "specific { versions: [ 3 ] }"),
     variant(DIRECT, "latest { num_versions: 2 }", "specific { versions: [ 2, 3 ] }"), FULL, FULL),
    (C.NOT_CHECKED, DIRECT, DIRECT, Expectations(), FULL),
    (C.ITERATIVE_NOT_DECOUPLED, variant(ITERATIVE, "model_transaction_policy { decoupled: true }", ""), ITERATIVE, FULL, FULL),
    (C.ITERATIVE_CANDIDATES_BELOW_BATCH, variant(ITERATIVE, "max_candidate_sequences: 4", "max_candidate_sequences: 2"), ITERATIVE,
     FULL, FULL),
    (C.ITERATIVE_ZERO_QUEUE_DELAY, variant(ITERATIVE, "max_queue_delay_microseconds: 1000", ""), ITERATIVE, FULL, FULL),
    (C.ITERATIVE_ZERO_QUEUE_DELAY, variant(ITERATIVE, "max_queue_delay_microseconds: 1000", ""), OLDEST, FULL, FULL),  # not iterative
]


@pytest.mark.parametrize("code, fires, quiet, fires_expect, quiet_expect", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_code_fires_on_one_config_and_not_on_its_neighbour(code, fires, quiet, fires_expect, quiet_expect):
    assert code in codes(fires, fires_expect)
    assert code not in codes(quiet, quiet_expect)


def test_every_code_has_a_firing_case():
    assert {case[0] for case in CASES} | {C.NO_CONFIG_FILE} == set(ReviewCode)


def test_each_code_is_declared_by_one_row_of_the_rule_table():
    """Its severity, source and lesson are read from the row, and the review runs the row's function;
    only the two codes the review gives itself have none."""
    assert sorted(r.code for r in RULES) == sorted(ReviewCode)
    assert {r.code for r in RULES if r.finds is None} == {C.NO_CONFIG_FILE, C.NOT_CHECKED}
    assert {r.scope for r in RULES} == {SEQUENCE, STATELESS, ANY, FOLDER}


def test_a_rule_is_looked_for_only_in_the_configs_of_its_scope():
    """The scope, not the function, keeps a sequence rule off a stateless config and a stateless one off a
    sequence config: both functions would find their pitfall there."""
    row = {r.code: r for r in RULES}
    idle, cache = row[C.IDLE_TIMEOUT_DEFAULT], row[C.RESPONSE_CACHE_HIDES_STATE]
    cached_direct = DIRECT + "response_cache { enable: true }\n"
    assert idle.scope == SEQUENCE and idle.finds(parse(DYNAMIC), FULL) is not None  # no sequence batcher: the 1 s default
    assert C.IDLE_TIMEOUT_DEFAULT not in codes(DYNAMIC)
    assert cache.scope == STATELESS and cache.finds(parse(cached_direct), FULL) is not None
    assert C.RESPONSE_CACHE_HIDES_STATE not in codes(cached_direct)


def test_findings_carry_the_numbers_their_sentences_need():
    [capacity] = review(parse(DIRECT), dataclasses.replace(FULL, sessions=11))
    assert capacity.to_json() == {
        "code": "capacity_below_sessions", "severity": "warning", "field": "max_batch_size",
        "values": {"instances": 2, "slots": 4, "capacity": 8, "sessions": 11},
    }
    assert ReviewFinding.from_json(capacity.to_json()) == capacity
    [idle] = review(parse(variant(DIRECT, "5000000", "0")), dataclasses.replace(FULL, think_ms=1500))
    assert (idle.code, idle.field, idle.values) == (C.IDLE_TIMEOUT_BELOW_THINK, "sequence_batching.max_sequence_idle_microseconds",
                                                   {"idle_ms": 1000.0, "think_ms": 1500})
    [narrow] = review(parse(variant(DIRECT, "TYPE_UINT64", "TYPE_UINT32")), FULL)
    assert narrow.field == "sequence_batching.control_input[CORRID].data_type"
    assert narrow.values == {"data_type": "TYPE_UINT32", "max_corrid": 2**40, "largest": 2**32 - 1}


def test_a_check_without_the_users_figure_says_what_it_needs_instead_of_guessing():
    found = review(parse(DIRECT), Expectations())
    assert {(f.values["check"], tuple(f.values["needs"])) for f in found} == {
        ("idle_timeout_below_think", ("think_ms",)),
        ("corrid_truncated", ("client_ids",)),
        ("capacity_below_sessions", ("sessions",)),  # the groups are KIND_CPU: no GPU count needed
    }
    assert all(f.code == C.NOT_CHECKED and f.severity == Severity.INFO for f in found)
    # KIND_AUTO (no kind) depends on the server's GPUs: the capacity check asks for that too.
    auto = variant(DIRECT, " kind: KIND_CPU", "")
    [capacity] = [f for f in review(parse(auto), dataclasses.replace(FULL, gpus=None)) if f.code == C.NOT_CHECKED]
    assert capacity.values == {"check": "capacity_below_sessions", "needs": ["gpus"]}
    # A state section on a config that names no backend: the backend is asked for.
    nameless = variant(variant(DIRECT, "  direct { }", STATE), 'backend: "onnxruntime"', "")
    assert [f.values for f in review(parse(nameless), FULL)] == [{"check": "implicit_state_unsupported", "needs": ["backend"]}]
    # The 1 s default needs no figure: it is reported as Triton documents it.
    assert codes(variant(DIRECT, "5000000", "0"), Expectations())[0] == C.IDLE_TIMEOUT_DEFAULT


# An iterative sequence is one request that Triton numbers and re-enqueues after every step: no client
# pause between requests, no client ID. Each silenced rule fires on the same config without iterative_sequence.
SILENCED_FOR_ITERATIVE = [
    # the 1 s default: Triton stamps the sequence again at every step, a client never pauses it
    (C.IDLE_TIMEOUT_DEFAULT, variant(ITERATIVE, "max_sequence_idle_microseconds: 5000000", ""), FULL),
    # a think time longer than the window: there is no second client request to wait for
    (C.IDLE_TIMEOUT_BELOW_THINK, ITERATIVE, dataclasses.replace(FULL, think_ms=60_000)),
    # the think time unstated: nothing to ask for
    (C.NOT_CHECKED, ITERATIVE, dataclasses.replace(FULL, think_ms=None)),
    # the clients' IDs unstated: Triton numbers each request itself
    (C.NOT_CHECKED, ITERATIVE, dataclasses.replace(FULL, max_corrid=None)),
]


def not_iterative(text: str) -> str:
    return variant(text, "iterative_sequence: true\n", "")


@pytest.mark.parametrize("code, config, expect", SILENCED_FOR_ITERATIVE,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(SILENCED_FOR_ITERATIVE)])
def test_rules_about_client_pauses_and_client_ids_are_silent_for_an_iterative_sequence(code, config, expect):
    assert code in codes(not_iterative(config), expect)
    assert code not in codes(config, expect)


def test_rules_about_slots_rows_and_stated_ids_still_apply_to_an_iterative_sequence():
    no_corrid = variant(ITERATIVE, "CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64", "CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ]")
    assert C.OLDEST_WITHOUT_CORRID in codes(no_corrid)
    assert C.CAPACITY_BELOW_SESSIONS in codes(ITERATIVE, dataclasses.replace(FULL, sessions=9))
    direct = variant(variant(variant(DIRECT, "CONTROL_SEQUENCE_READY", "CONTROL_SEQUENCE_END"), "  direct { }",
                             "  iterative_sequence: true\n  direct { }"),
                     'name: "m"', 'name: "m" model_transaction_policy { decoupled: true }')
    assert C.DIRECT_WITHOUT_READY in codes(direct)
    # IDs a client does send are kept by Triton, so stated ones are still judged
    assert C.CORRID_TRUNCATED in codes(variant(ITERATIVE, "TYPE_UINT64", "TYPE_UINT32"))


def test_errors_come_first():
    broken = variant(variant(DIRECT, "CONTROL_SEQUENCE_READY", "CONTROL_SEQUENCE_END"), "version_policy { latest { num_versions: 2 } }", "")
    severities = [f.severity for f in review(parse(broken), Expectations())]
    assert severities == sorted(severities, key=list(Severity).index) and severities[0] == Severity.ERROR


def test_impossible_figures_are_refused_with_codes():
    with pytest.raises(LabError) as err:
        review(parse(DIRECT), Expectations(sessions=0, max_corrid=2**64))
    assert [p.code for p in err.value.problems] == ["checker_expectation_low", "checker_corrid_above_uint64"]


# ---- oldest: what mixes sessions is open sequences per instance --------------------------------

ORPHAN = variant(OLDEST, "CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64", "CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ]")


@pytest.mark.parametrize("max_batch_size, candidates, fires", [
    (1, "max_candidate_sequences: 4", 4),  # one row per batch, four sequences open: they mix
    (4, "max_candidate_sequences: 1", None),  # four rows, but one sequence open per instance
    (1, "max_candidate_sequences: 1", None),
    (4, "", 4),  # unset: max_batch_size candidates
    (1, "", None),
])
def test_oldest_without_corrid_counts_the_candidates_of_one_instance(max_batch_size, candidates, fires):
    text = variant(variant(ORPHAN, "max_batch_size: 4", f"max_batch_size: {max_batch_size}"),
                   "max_candidate_sequences: 4 preferred_batch_size: [ 4 ]", candidates)
    found = [f.values for f in review(parse(text), dataclasses.replace(FULL, sessions=2)) if f.code == C.OLDEST_WITHOUT_CORRID]
    assert found == ([{"candidates": fires}] if fires else [])


# ---- implicit state: Triton pairs the states by name order (server issue 8586) -----------------

def test_states_whose_names_sort_differently_are_fed_into_each_others_inputs():
    found = review_target(REVIEW_CONFIGS / "state_order_crossed", FULL)["state_order_crossed"]
    [crossed] = [f for f in found if f.code == C.IMPLICIT_STATE_ORDER]
    assert (crossed.severity, crossed.field) == (Severity.ERROR, "sequence_batching.state")
    assert crossed.values == {
        "states": 2, "crossed": 2,
        "output": "cache_last_channel_len_next", "fed_into": "cache_last_channel", "declared": "cache_last_channel_len",
        "pairs": [{"output": "cache_last_channel_len_next", "fed_into": "cache_last_channel", "declared": "cache_last_channel_len"},
                  {"output": "cache_last_channel_next", "fed_into": "cache_last_channel_len", "declared": "cache_last_channel"}],
    }
    # the issue's workaround: cache_last_chan_len sorts first in both lists
    assert C.IMPLICIT_STATE_ORDER not in [f.code for f in review_target(REVIEW_CONFIGS / "state_order_renamed", FULL)["state_order_renamed"]]


def test_only_the_states_whose_places_differ_are_crossed_and_one_state_never_is():
    three = """
  state [ { input_name: "a" output_name: "z" data_type: TYPE_FP32 dims: [ 1 ] },
          { input_name: "b" output_name: "y" data_type: TYPE_FP32 dims: [ 1 ] },
          { input_name: "c" output_name: "x" data_type: TYPE_FP32 dims: [ 1 ] } ]
  direct { }"""
    [found] = [f for f in review(parse(variant(DIRECT, "  direct { }", three)), FULL) if f.code == C.IMPLICIT_STATE_ORDER]
    assert (found.values["crossed"], found.values["output"], found.values["fed_into"], found.values["declared"]) == (2, "x", "a", "c")
    assert [p["output"] for p in found.values["pairs"]] == ["x", "z"]  # y stays in b: second in both lists
    # bytes order, as std::string compares: "B" (0x42) sorts before "a" (0x61)
    upper = variant(DIRECT, "  direct { }", STATES_ALIGNED.replace('"A_OUT"', '"a_out"'))
    assert C.IMPLICIT_STATE_ORDER in codes(upper)
    assert C.IMPLICIT_STATE_ORDER not in codes(variant(DIRECT, "  direct { }", STATE))


# ---- pitfalls that depend on the release: the server's version ---------------------------------

@pytest.mark.parametrize("version, expected", [
    (None, [(C.NOT_CHECKED, {"check": "warmup_string_corrid", "needs": ["triton_version"]})]),
    ("2.51.0", []), ("2.53.0", []),  # 24.10 and 24.12 do not check the warmup request's ID type
    ("2.54.0", [(C.WARMUP_STRING_CORRID, {"version": "2.54.0", "since": "2.54.0", "control": "CORRID", "samples": 1})]),
    ("2.71.0", [(C.WARMUP_STRING_CORRID, {"version": "2.71.0", "since": "2.54.0", "control": "CORRID", "samples": 1})]),
])
def test_warmup_with_a_string_corrid_is_judged_for_the_stated_version_and_not_guessed_without_one(version, expected):
    expect = dataclasses.replace(NEW, triton_version=version, sessions=4)
    found = review_target(REVIEW_CONFIGS, expect)
    assert [(f.code, f.values) for f in found["warmup_string_corrid"]] == expected
    # the warmup request's integer ID passes an integer CORRID's check on every release
    assert all(f.values.get("check") != "warmup_string_corrid" and f.code != C.WARMUP_STRING_CORRID for f in found["warmup_integer_corrid"])


def test_a_warmup_sample_of_batch_size_0_is_skipped_so_it_cannot_keep_the_model_from_loading():
    text = variant(DIRECT, "TYPE_UINT64", "TYPE_STRING") + WARMUP.replace("batch_size: 1", "batch_size: 0")
    assert not {C.WARMUP_STRING_CORRID, C.NOT_CHECKED} & set(codes(text, NEW))


@pytest.mark.parametrize("version, fires", [(None, True), ("2.51.0", True), ("2.53.0", True), ("2.54.0", False)])
def test_the_python_backends_string_corrid_buffer_is_a_pitfall_before_2_54_only(version, fires):
    text = variant(variant(DIRECT, "TYPE_UINT64", "TYPE_STRING"), '"onnxruntime"', '"python"')
    assert (C.STRING_CORRID_PYTHON in codes(text, dataclasses.replace(NEW, triton_version=version))) == fires


@pytest.mark.parametrize("text", ["24.10", "r25.01", "2.54", "2.54.0-rc1", "latest", ""])
def test_a_version_that_is_not_a_server_version_is_refused_with_a_code(text):
    assert parse_version(text) is None
    with pytest.raises(LabError) as err:
        review(parse(DIRECT), Expectations(triton_version=text))
    assert [p.code for p in err.value.problems] == ["checker_triton_version_format"]
    assert problems_text.error(err.value, ENGLISH) == (
        f"the Triton version is the server's version as GET /v2 reports it, three numbers such as 2.51.0 (release 24.10) "
        f"or 2.54.0 (release 25.01): got '{text}'")


def test_server_versions_compare_as_numbers():
    assert parse_version("2.51.0") == (2, 51, 0) and parse_version(" 2.9.0 ") == (2, 9, 0)
    assert parse_version("2.9.0") < parse_version("2.54.0") < parse_version("2.100.0")


# ---- the response cache ------------------------------------------------------------------------

def test_the_response_cache_on_a_stateless_model_is_noted_and_refused_configs_are_not_called_stateless():
    cached = "response_cache { enable: true }\n"
    [note] = [f for f in review(parse(DYNAMIC + cached), FULL)]
    assert (note.code, note.severity, note.field) == (C.RESPONSE_CACHE_HIDES_STATE, Severity.INFO, "response_cache.enable")
    no_scheduler = variant(DYNAMIC, "dynamic_batching { preferred_batch_size: [ 4 ] }", "") + cached  # the default scheduler caches too
    assert codes(no_scheduler) == [C.RESPONSE_CACHE_HIDES_STATE]
    # Triton refuses the cache with the sequence batcher or a decoupled model (tests/claims/test_config_rules.py)
    assert C.RESPONSE_CACHE_HIDES_STATE not in codes(DIRECT + cached)
    assert C.RESPONSE_CACHE_HIDES_STATE not in codes(variant(DYNAMIC, 'name: "d"', 'name: "d" model_transaction_policy { decoupled: true }') + cached)


# ---- the shipped repository, reviewed with the lab's own figures ------------------------------

def lab_expectations() -> Expectations:
    """What the lab's own clients do: pauses up to the think time plus jitter its controls allow,
    the default 8 sessions, IDs from app/lab/scenario/ids.py (a 31-bit prefix + 1 above a 32-bit counter)."""
    gpus = 0
    if instance_kind() == "KIND_GPU":
        import torch

        gpus = torch.cuda.device_count()
    return Expectations(
        think_ms=LIMITS["think_ms"][1] + LIMITS["jitter_ms"][1],
        sessions=Traffic().sessions,
        max_corrid=((2**31) << 32) | (2**32 - 1),
        gpus=gpus,
    )


def test_the_lab_ids_stay_below_the_largest_id_it_states():
    assert max(unique_ids(3)) <= lab_expectations().max_corrid


def test_the_shipped_repository_reviews_as_the_lab_expects():
    """Every shipped model is found to serve a single version (no version_policy), so the lab's
    rollout advice cannot be taken with these configs as they are: nothing else is flagged.

    asr_dynamic is the course's mistake, a stateful recogniser under the dynamic batcher, and the
    offline review cannot see it: a config does not say that the model keeps state (the
    `state_key` parameter is the lab's own, not Triton's), and the config is a valid dynamic one.
    Finding it takes traffic: the checker's differential tests. The sequence models pass: 5 s idle
    window against 700 ms pauses, READY under direct, a uint64 CORRID for 64-bit IDs, 2 x 4 (direct)
    and 2 x 8 (oldest) slots for 8 sessions, oldest keyed by CORRID.
    """
    found = review_target(MODEL_REPOSITORY, lab_expectations())
    codes = {name: [f.code for f in findings] for name, findings in found.items()}
    assert set(codes) == {*deployments.SHIPPED, *deployments.GENERATOR_DEPLOYMENTS, *deployments.PAGED_ENGINE_DEPLOYMENTS}
    assert {name: codes[name] for name in deployments.SHIPPED} == {name: [C.NO_ROLLBACK_VERSION] for name in deployments.SHIPPED}
    shipped = [f for name in deployments.SHIPPED for f in found[name]]
    assert {str(f.values) for f in shipped} == {str({"policy": "latest", "served": 1})}
    # The generator's in-flight deployments hold 4 requests at once; under the recogniser's expectations
    # (8 sessions) the review says so. For them that is by design: further requests wait their turn.
    # Their oldest strategy has no queue delay, which lesson 8 shows fragmenting the steps: the review
    # notes it. Triton numbers their requests itself, so no idle or client-ID rule applies.
    assert {name: codes[name] for name in deployments.GENERATOR_DEPLOYMENTS} == {
        "gen_static": [C.NO_ROLLBACK_VERSION],
        "gen_inflight": [C.CAPACITY_BELOW_SESSIONS, C.NO_ROLLBACK_VERSION, C.ITERATIVE_ZERO_QUEUE_DELAY],
        "gen_inflight_by_row": [C.CAPACITY_BELOW_SESSIONS, C.NO_ROLLBACK_VERSION, C.ITERATIVE_ZERO_QUEUE_DELAY],
    }
    # The paged engine turns Triton's batcher off (max_batch_size 0, no scheduler section): nothing to
    # review there but its single served version; its batching is the engine's own.
    assert {name: codes[name] for name in deployments.PAGED_ENGINE_DEPLOYMENTS} == {"kv_engine": [C.NO_ROLLBACK_VERSION]}


def test_more_sessions_than_the_lab_allows_overflow_the_direct_deployment():
    many = dataclasses.replace(lab_expectations(), sessions=LIMITS["sessions"][1])
    found = review_target(MODEL_REPOSITORY / "asr_sequence_direct", many)
    [capacity] = [f for f in found["asr_sequence_direct"] if f.code == C.CAPACITY_BELOW_SESSIONS]
    assert capacity.values == {"instances": 2, "slots": 4, "capacity": 8, "sessions": 64}


# ---- the offline loader -----------------------------------------------------------------------

def test_load_config_reads_a_file(tmp_path):
    path = tmp_path / "config.pbtxt"
    path.write_text(DIRECT)
    assert configs.load_config(path) == parse(DIRECT)
    assert review_target(path, FULL) == {"m": []}


def test_load_repository_reads_every_model_folder_and_marks_one_without_config(tmp_path):
    for name, text in (("b_dyn", DYNAMIC), ("a_seq", DIRECT)):
        (tmp_path / name / "1").mkdir(parents=True)
        (tmp_path / name / "config.pbtxt").write_text(text)
    (tmp_path / "c_auto" / "1").mkdir(parents=True)  # Triton would auto-complete its config
    (tmp_path / ".git").mkdir()
    loaded = configs.load_repository(tmp_path)
    assert [(name, config is None) for name, config in loaded] == [("a_seq", False), ("b_dyn", False), ("c_auto", True)]
    found = review_target(tmp_path, FULL)
    assert {name: [f.code for f in fs] for name, fs in found.items()} == {"a_seq": [], "b_dyn": [], "c_auto": [C.NO_CONFIG_FILE]}
    # A model folder on its own, with or without its config.
    assert review_target(tmp_path / "c_auto", FULL) == {"c_auto": [ReviewFinding(C.NO_CONFIG_FILE, Severity.WARNING, "config.pbtxt", {})]}
    assert review_target(tmp_path / "a_seq", FULL) == {"a_seq": []}


@pytest.mark.parametrize(
    "text, line, column, words",
    [
        (variant(DIRECT, "max_batch_size: 4", "max_batch_sise: 4"), 4, 1, 'no field named "max_batch_sise"'),
        (variant(DIRECT, "data_type: TYPE_UINT64", "data_type: TYPE_UINT46"), 12, 75, "TYPE_UINT46"),
        # one scheduler per model: protobuf itself refuses the second (a oneof), so no ModelConfig
        # can hold both for the review to flag
        (DIRECT + "dynamic_batching { }\n", 18, 1, 'another member of oneof "scheduling_choice"'),
    ],
)
def test_a_broken_file_is_refused_with_its_line(tmp_path, text, line, column, words):
    path = tmp_path / "config.pbtxt"
    path.write_text(text)
    with pytest.raises(LabError) as err:
        review_target(tmp_path, FULL)
    assert err.value.code == "pbtxt_unreadable"
    assert (err.value.values["source"], err.value.values["line"], err.value.values["column"]) == (str(path), line, column)
    assert words in err.value.values["error"]
    assert problems_text.error(err.value, ENGLISH).startswith(f"{path}, line {line}, column {column}: ")


def test_a_missing_path_is_refused(tmp_path):
    with pytest.raises(LabError) as missing:
        configs.load_config(tmp_path / "nope.pbtxt")
    assert "no such file or folder" in problems_text.error(missing.value, ENGLISH)
    with pytest.raises(LabError) as err:
        review_target(tmp_path / "nope", FULL)
    assert err.value.code == "checker_path_missing"


def test_server_json_with_fields_this_client_does_not_know_is_read():
    config = configs.from_server_json({"name": "m", "max_batch_size": 4, "a_field_from_2030": {"x": 1},
                                       "sequence_batching": {"max_sequence_idle_microseconds": "5000000", "direct": {}}})
    assert config.sequence_batching.max_sequence_idle_microseconds == 5_000_000
    assert configs.from_server_json({"config": {"name": "m"}}).name == "m"  # the gRPC client's as_json form


# ---- the real server --------------------------------------------------------------------------

@pytest.mark.parametrize("name", deployments.SHIPPED)
def test_a_config_read_from_the_server_reviews_like_its_file(lab_server, name):
    """Triton normalises what it reports (the 1 s idle default, latest-1 version policy, preferred
    sizes and instance kinds written out): the review reads both forms to the same findings. The
    suite's servers preload the recogniser's deployments only: the others load here, as the app loads them."""
    lab_server.models.ensure(name)
    served = ask(lab_server, "get_model_config", name)
    assert served["name"] == name
    assert review_target(served, lab_expectations()) == review_target(MODEL_REPOSITORY / name, lab_expectations())


# ---- the registry: every code has a source at r24.10, a lesson section, and words -------------

_CITATION = re.compile(r"^(core|server|common|python_backend) (\S+):(L\d+(?:-L\d+)?(?:, L\d+(?:-L\d+)?)*)(?: @(r\d\d\.\d\d))?$")
_TRACKER = re.compile(r"^(core|server|common|python_backend)#\d+$")  # an issue or pull request: read there, not in a mirror
# A phrase each code's cited lines must contain, so a citation that drifts off its lines fails.
EVIDENCE = {
    C.IDLE_TIMEOUT_DEFAULT: ["1000000 (1 second)", "SEQUENCE_IDLE_DEFAULT_MICROSECONDS", "1000 * 1000"],
    C.IDLE_TIMEOUT_BELOW_THINK: ["free the sequence slot", "max sequence idle exceeded"],
    C.DIRECT_WITHOUT_READY: ["true /* not_ready */", "0 /* corrid */", "has an inference request ready",
                             "TRITONBACKEND_RequestCorrelationId(request, &correlation_id_uint)"],
    C.CORRID_TRUNCATED: ["memcpy(corrid_p_ptr, corrid_ptr, size_p)", "TYPE_INT32 and TYPE_STRING"],
    C.CORRID_SIGN_WRAPS: ["memcpy(corrid_p_ptr, corrid_ptr, size_p)", "TYPE_INT32 and TYPE_STRING"],
    C.CORRID_STRING_IDS_INTEGER_TYPE: ["GetDataTypeByteSize", "correlation_id_length);"],
    C.CORRID_INTEGER_IDS_STRING_TYPE: ["4 + triton::core::STRING_CORRELATION_ID_MAX_LENGTH_BYTES", "memcpy(corrid_p_ptr, corrid_ptr, size_p)"],
    C.STRING_ID_TOO_LONG: ["TRITONSERVER_ERROR_UNSUPPORTED", "string correlation ID cannot be longer than 128 characters",
                           "RETURN_IF_ERR(TRITONSERVER_InferenceRequestSetCorrelationIdString(",
                           "THROW_IF_TRITON_ERROR(TRITONSERVER_InferenceRequestSetCorrelationIdString("],
    C.STRING_CORRID_PYTHON: ["4 + triton::core::STRING_CORRELATION_ID_MAX_LENGTH_BYTES", "ValidateStringBuffer("],
    C.IMPLICIT_STATE_UNSUPPORTED: ["onnxruntime_backend", "tensorrt_backend", "pytorch_backend", "support implicit state"],
    C.DIRECT_QUEUE_DELAY_IGNORED: ["will be\n    //@@       ignored unless minimum_slot_utilization", "minimum_slot_utilization_ == 0.0"],
    C.PREFERRED_ABOVE_MAX: ["dynamic batching preferred size must be <= max batch size", "sequence batching preferred batch size must be <= max batch"],
    C.CAPACITY_BELOW_SESSIONS: ["std::max(1, config.max_batch_size())", "max_candidate_seqs > 0", "up to\nfour sequences"],
    C.DIRECT_ONE_SLOT: ["This is at least 1 even if the model doesn't support", "max_batch_size_ = ((size_t)std::max(1, config.max_batch_size()))"],
    C.DYNAMIC_NO_BATCHING: ["max_batch_size_((size_t)std::max(1, max_batch_size))", "*max_batch_size* must be set to\nzero"],
    C.OLDEST_WITHOUT_CORRID: ["must typically use\nthe CONTROL_SEQUENCE_CORRID control", "'max_candidate_sequences' can be greater"],
    C.DECOUPLED_PRESERVE_ORDERING: ["When using decoupled models, setting this to true may block"],
    C.ITERATIVE_NOT_DECOUPLED: ["single incoming request to initiate the sequence", "non-decoupled where",
                                "a single response is generated when the full response is complete", "bool iterative_sequence"],
    C.ITERATIVE_CANDIDATES_BELOW_BATCH: ["chooses from the candidate sequences up to 'max_batch_size'",
                                         "Excess sequences are kept in an ordered backlog", "single incoming request to initiate the sequence"],
    C.ITERATIVE_ZERO_QUEUE_DELAY: ["wait for additional requests for batching. Default is 0.", "set flags to be not START and not END",
                                   "return base_->Enqueue(request);"],
    C.IMPLICIT_STATE_ORDER: ["std::map<std::string, std::shared_ptr<SequenceState>> input_states_;",
                             "output_tensor->SetOtherState(input_tensor.get());",
                             "std::distance(output_states_.begin(), output_states_.find(name))",
                             "std::advance(input_states_itr, iter_advance);"],
    C.WARMUP_STRING_CORRID: ["RETURN_IF_ERROR(local_instance->GenerateWarmupData());", "if (warmup_setting.batch_size() == 0) {",
                             "new InferenceRequest(model_, model_->Version())", "RETURN_IF_ERROR(lrequest->PrepareForInference());",
                             "RETURN_IF_ERROR(ValidateCorrelationId());", "id_type_(InferenceRequest::SequenceId::DataType::UINT64)",
                             "\"', but model '\" + model_name", "\"release_version\": \"2.54.0\"", "\"triton_container_version\": \"25.01\""],
    C.RESPONSE_CACHE_HIDES_STATE: ["there is no need for Triton to execute", "By default, no model uses response caching",
                                   "Only requests going through the Default Scheduler or Dynamic Batch Scheduler",
                                   "model_->Server()->ResponseCacheEnabled()", "CacheLookUp(request, cached_response);",
                                   "Send cached response and release request", "disabled) as the default scheduler",
                                   "boost::hash_combine(seed, request.ModelName());"],
    C.NO_ROLLBACK_VERSION: ["*Latest* (with n=1) is used as\nthe default", "latest.set_num_versions(1)", "num_versions()"],
    C.NO_CONFIG_FILE: ["Auto-Generated Model Configuration", "curl localhost:8000/v2/models/<model name>/config"],
}
META = {C.NOT_CHECKED}  # the lab's own bookkeeping, not a Triton behaviour


def cited_text(citation: str) -> str:
    if _TRACKER.match(citation):
        return ""
    match = _CITATION.match(citation)
    assert match, f"{citation!r} is not '<core|server|common> <path>:L<a>-L<b>[, L<c>-L<d>][ @r<yy.mm>]' nor '<repo>#<n>'"
    repo, path, ranges, release = match.groups()
    mirror = mirrors.mirror(repo)
    if not mirror.is_dir():
        pytest.skip(f"no Triton mirror at {mirror}: set TRITON_LAB_MIRRORS (tests/mirrors.py) to check citations")
    show = ["git", "-C", str(mirror), "show", f"{release or 'r24.10'}:{path}"]
    lines = subprocess.run(show, capture_output=True, text=True, check=True).stdout.split("\n")
    parts = []
    for span in ranges.split(", "):
        first, _, last = span.partition("-")
        a, b = int(first[1:]), int((last or first)[1:])
        assert 1 <= a <= b <= len(lines), f"{repo} {path} has {len(lines)} lines, not {span}"
        parts.append("\n".join(lines[a - 1:b]))
    return "\n".join(parts)


def test_every_code_has_a_severity_a_source_a_lesson_and_words():
    from app.checker.words.review import REVIEW_WORDS

    for registry in (SEVERITY, SOURCES, LESSONS, REVIEW_WORDS):
        assert set(registry) == set(ReviewCode)
    assert set(EVIDENCE) | META == set(ReviewCode)


@pytest.mark.parametrize("code", sorted(set(ReviewCode) - META))
def test_each_source_is_read_at_its_release_and_says_what_the_code_claims(code):
    text = "\n".join(cited_text(part) for part in SOURCES[code].split("; "))
    for phrase in EVIDENCE[code]:
        assert phrase in text, f"{code}: {phrase!r} is not in {SOURCES[code]}"


def test_an_issue_is_cited_beside_the_source_lines_that_show_it():
    """A code taken from the issue tracker names the issue and the lines that show it; one that
    depends on a later release cites that release's lines."""
    for code in (C.IMPLICIT_STATE_ORDER, C.WARMUP_STRING_CORRID):
        parts = SOURCES[code].split("; ")
        assert any(_TRACKER.match(p) for p in parts) and any(_CITATION.match(p) for p in parts), code
    assert {"server#8586", "core#506"} <= set(SOURCES[C.IMPLICIT_STATE_ORDER].split("; "))
    assert "server#8110" in SOURCES[C.WARMUP_STRING_CORRID] and all(
        p.endswith("@r25.01") for p in SOURCES[C.WARMUP_STRING_CORRID].split("; ") if _CITATION.match(p))


def test_the_meta_code_says_it_is_the_labs_own():
    assert SOURCES[C.NOT_CHECKED].startswith("the lab: ")


@pytest.mark.parametrize("lang", languages())
def test_each_lesson_section_exists_in_every_language(lang):
    lessons = load_lessons(lessons_dir(lang))
    for code, link in LESSONS.items():
        lesson, anchor = resolve_link(link, lessons)
        assert anchor, f"{code}: {link!r} names no section"


@pytest.mark.parametrize("lang", languages())
def test_every_firing_finding_renders_in_every_language(lang):
    from app.checker.words.review import finding_words

    findings = [f for code, fires, _, expect, _ in CASES for f in review(parse(fires), expect) if f.code == code]
    findings.append(ReviewFinding(C.NO_CONFIG_FILE, SEVERITY[C.NO_CONFIG_FILE], "config.pbtxt", {}))
    assert {f.code for f in findings} == set(ReviewCode)
    for finding in findings:
        shown, english = finding_words(finding, words(lang)), finding_words(finding, words("en"))
        for part in ("title", "why", "fix"):
            assert reads_in(lang, getattr(shown, part), getattr(english, part)), (finding, part, shown)
        assert "{" not in shown.title + shown.why + shown.fix, (finding, shown)
        assert shown.lesson in LESSONS.values()


def test_a_check_left_undone_links_to_the_lesson_of_its_pitfall():
    from app.checker.words.review import finding_words

    [capacity] = [f for f in review(parse(DIRECT), Expectations()) if f.values["check"] == "capacity_below_sessions"]
    shown = finding_words(capacity, words("en"))
    assert shown.lesson == LESSONS[C.CAPACITY_BELOW_SESSIONS]
    assert shown.title == "Not checked: the sequence capacity against your sessions"
    assert "how many sessions are open at once at peak" in shown.why


@pytest.mark.parametrize("policy, fires", [("", True), ("version_policy { latest { num_versions: 2 } }", False),
                                           ("version_policy { specific { versions: [ 1, 2 ] } }", False), ("version_policy { all { } }", False)])
def test_no_rollback_version_fires_only_where_one_version_is_served(policy, fires):
    """The server side of this finding (the default policy unloads version 1 when 2 loads; num_versions 2
    keeps both) is proven in tests/claims/test_versions.py; here only the review's reading of the policy."""
    config = parse('name: "versions" backend: "python" max_batch_size: 0 '
                   'input [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ] output [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ] '
                   f'instance_group [ {{ count: 1 kind: KIND_CPU }} ] {policy}')
    assert (C.NO_ROLLBACK_VERSION in codes(text_format.MessageToString(config))) == fires
