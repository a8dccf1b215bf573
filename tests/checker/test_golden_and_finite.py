"""Golden outputs (a data file's validation_data) and the finite check, on the real server: right
golden values hold and wrong ones break naming the first mismatch; a model wrong everywhere but
sound is caught only by them; a sequence model's streams shorter than its sessions replay their
inputs and leave those steps uncompared; NaN and Inf are findings of their own.

The golden values are computed here from the zoo model's documented rule (tests/checker/zoo/
zoo_stateless/1/model.py: mode sum, x = the sum of every input element; with state, s <- s + x + 1
from 0 at START, and the answer is s), never from a run of the model.
"""
from __future__ import annotations

import copy

from app.checker import words as text
from app.i18n import words
from tests.checker.conftest import ABANDON_ROUND, verdicts, zoo_fixture

zoo = zoo_fixture("zoo_corrid_oldest", "zoo_stateless", "zoo_offset", "zoo_nan", "zoo_inf_when_batched")
SEQUENCE_STREAMS = [  # INPUT (INT32, dims [2]) per step, one list per stream
    [[1, 2], [0, 0], [-3, 5], [4, 4]],
    [[2, 2], [1, -1], [7, 0], [0, 3], [5, 5]],
    [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [-1, -2]],
]
REFERENCE_CHECKS = [f"{c}/{v}" for c in ("interleaved", "id_reuse", "abandoned", "cancelled") for v in ("all_instances", "one_instance")]


def _abandon_round(found: dict[str, str]) -> dict[str, str]:
    """`found` less the abandon round, which must be held or not exercised: its witness needs a later
    session on the reaped slot, which short sessions do not always wait for (never held without it)."""
    rest = dict(found)
    aborts = {k: rest.pop(k) for k in list(rest) if k.startswith(ABANDON_ROUND)}
    assert set(aborts.values()) <= {"held", "not_exercised", "skipped"}, aborts
    return rest


def running_state(stream: list[list[int]]) -> list[int]:
    """zoo_corrid_oldest's answers for one sequence: s <- s + x + 1 from 0, x the sum of INPUT."""
    out, s = [], 0
    for values in stream:
        s += sum(values) + 1
        out.append(s)
    return out


def sequence_document(streams: list[list[list[int]]]) -> dict:
    """perf_analyzer's --input-data JSON: one stream of entries per sequence, and validation_data aligned
    with it (OUTPUT as a flat list, SCORE as content with its shape)."""
    golden = [[{"OUTPUT": [s], "SCORE": {"content": [float(s)], "shape": [1]}} for s in running_state(stream)] for stream in streams]
    return {"data": [[{"INPUT": values} for values in stream] for stream in streams], "validation_data": golden}


def test_right_golden_outputs_hold_on_a_sound_sequence_model(zoo):
    # ten sessions on three streams: session i plays stream i % 3, and its golden outputs with it
    result = zoo.check("zoo_corrid_oldest", key="golden", input_data=sequence_document(SEQUENCE_STREAMS), sessions=10, steps=None)
    v = verdicts(result)
    assert _abandon_round(v) == {"reference/alone": "held", **{i: "held" for i in REFERENCE_CHECKS if not i.startswith(ABANDON_ROUND)},
                                 "golden/alone": "held", "golden/all_instances": "held", "golden/one_instance": "held",
                                 "finite/alone": "held", "finite/all_instances": "held", "finite/one_instance": "held",
                                 "slow_client/all_instances": "held"}, v
    assert result.exit_code == (3 if "not_exercised" in v.values() else 0) and result.judgement.notes == []
    assert result.tables.lengths == [4, 5, 6, 4, 5, 6, 4, 5, 6, 4] and result.tables.golden
    alone = result.judgement.verdict("golden", "alone")
    assert alone.values["compared"] == 2 * sum(result.tables.lengths)  # both lone runs, every step
    assert alone.values["tolerances"]["OUTPUT"] == 0.0 and alone.values["tolerances"]["SCORE"] > 0  # SCORE carries noise of 1e-6
    assert result.judgement.verdict("golden", "all_instances").values["compared"] > sum(result.tables.lengths)


def test_a_wrong_golden_file_breaks_naming_the_first_mismatch(zoo):
    document = sequence_document(SEQUENCE_STREAMS)
    wrong = copy.deepcopy(document)
    right_value = wrong["validation_data"][1][2]["OUTPUT"][0]
    wrong["validation_data"][1][2]["OUTPUT"] = [right_value + 1]  # stream 2, step 3 (as people count)
    result = zoo.check("zoo_corrid_oldest", key="wrong golden", input_data=wrong, sessions=10, steps=None, one_instance=False)
    assert result.exit_code == 1
    broken = result.judgement.verdict("golden", "alone")
    assert (broken.verdict, broken.reason) == ("broken", "differs_from_golden")
    first = broken.values["first"]
    # the lone runs go session by session: session 1 is the first to play stream 1
    assert (first["session"], first["stream"], first["step"], first["phase"], first["output"]) == (1, 1, 2, "reference", "OUTPUT")
    assert first["shown"] == {"expected": [right_value + 1], "got": [right_value]} and first["difference"] == 1.0
    # sessions 1, 4 and 7 play stream 1: each lone run and each traffic run of them misses at that step
    assert broken.values["wrong_steps"] == 6 and broken.values["wrong_sessions"] == 6
    assert result.judgement.verdict("golden", "all_instances").verdict == "broken"
    assert _abandon_round({k: x for k, x in verdicts(result).items() if not k.startswith("golden")}) == {
        "reference/alone": "held",
        **{i: "held" for i in REFERENCE_CHECKS if i.endswith("all_instances") and not i.startswith(ABANDON_ROUND)},
        **{i: "skipped" for i in REFERENCE_CHECKS if i.endswith("one_instance") and not i.startswith(ABANDON_ROUND)},
        "finite/alone": "held", "finite/all_instances": "held", "finite/one_instance": "skipped", "slow_client/all_instances": "held"}
    assert result.judgement.diagnoses == [{"code": "differs_from_golden", "checks": ["golden/alone", "golden/all_instances"]}]
    sentence = text.verdict_sentence(broken, words("en"))
    assert sentence.startswith("first differed from its golden output at session 2, step 3") and "stream 2" in sentence
    assert f"(expected [{right_value + 1}], got [{right_value}])" in sentence


def test_streams_shorter_than_their_sessions_replay_inputs_and_leave_golden_uncompared(zoo):
    streams = [SEQUENCE_STREAMS[2], SEQUENCE_STREAMS[0][:3]]  # 6 steps and 3 steps; every session sends 6
    result = zoo.check("zoo_corrid_oldest", key="short streams", input_data=sequence_document(streams), sessions=6, steps=6,
                       one_instance=False)
    # Compared, the replayed steps would differ: step 4 of stream 2 sends stream 2's first input again, onto
    # the state its first three steps built, so the model answers more than the file's first value.
    replayed = running_state(streams[1] + streams[1])
    assert replayed[3] != running_state(streams[1])[0]
    for variant in ("alone", "all_instances"):
        golden = result.judgement.verdict("golden", variant)
        assert golden.verdict == "held", (variant, golden.values)
        assert golden.values["wrapped_streams"] == [1] and golden.values["uncompared_steps"] > 0
    alone = result.judgement.verdict("golden", "alone")
    assert alone.values["uncompared_steps"] == 2 * 3 * 3  # two lone runs x three sessions on stream 1 x steps 4 to 6
    assert result.judgement.notes == [{"code": "streams_wrap", "values": {"streams": [1], "stream_lengths": [3], "steps": 6,
                                                                         "golden": True}}]
    # 6 sessions on 2 instances x 4 slots never fill the slots: the interleaved check is not exercised, not held
    interleaved = result.judgement.verdict("interleaved", "all_instances")
    assert (interleaved.verdict, interleaved.reason, interleaved.values["witness"]["capacity"]) == ("not_exercised", "no_backlog", 8)
    assert "checks" not in result.failed_by and result.exit_code == 3
    lines = "\n".join(text.summary_lines(result, words("en")))
    assert "Streams of the data file shorter than the 6 steps their sessions send: 2." in lines
    assert "not compared with golden outputs" in lines


STATELESS_ENTRIES = [  # (INPUT FP32 [4], COUNT INT32 [2]); each sums to a whole number, so ROUNDED is the sum
    ([0.5, -0.5, 1.0, -1.0], [0, 0]),
    ([1.5, 0.5, 2.0, -1.0], [2, 3]),
    ([0.25, 0.75, 0.0, 0.0], [-4, 1]),
    ([3.0, 3.0, 3.0, 3.0], [1, 1]),
    ([-2.5, -0.5, 1.0, 0.0], [0, 7]),
]


def stateless_document() -> dict:
    """One stream of entries (a stateless model sends each alone), its golden outputs the sums, in two forms."""
    golden = []
    for values, count in STATELESS_ENTRIES:
        x = sum(values) + sum(count)
        golden.append({"OUTPUT": [x], "ROUNDED": {"content": [int(x)], "shape": [1]}})
    return {"data": [{"INPUT": values, "COUNT": count} for values, count in STATELESS_ENTRIES], "validation_data": golden}


def test_right_golden_outputs_hold_on_a_pure_stateless_model_wrapping_its_entries(zoo):
    # 12 sessions of 8 requests on one stream of 5 entries: request k compares with golden entry k % 5
    result = zoo.check("zoo_stateless", key="golden", input_data=stateless_document(), sessions=12, steps=8)
    v = verdicts(result)
    assert v == {"repeat_alone/alone": "held", "batch_composition/all_instances": "held", "after_traffic/alone": "held",
                 "golden/alone": "held", "golden/all_instances": "held", "finite/alone": "held", "finite/all_instances": "held"}, v
    assert result.judgement.verdict("golden", "alone").values["compared"] == 2 * 12 * 8  # none left out
    assert result.judgement.verdict("golden", "all_instances").values["compared"] == 3 * 12 * 8  # two concurrent rounds, then alone again
    assert result.judgement.notes == []


def test_a_model_wrong_everywhere_is_caught_only_by_golden_outputs(zoo):
    result = zoo.check("zoo_offset", key="golden", input_data=stateless_document(), sessions=12, steps=8)
    v = verdicts(result)
    assert v == {"repeat_alone/alone": "held", "batch_composition/all_instances": "held", "after_traffic/alone": "held",
                 "golden/alone": "broken", "golden/all_instances": "broken", "finite/alone": "held", "finite/all_instances": "held"}, v
    first = result.judgement.verdict("golden", "alone").values["first"]
    # the first lone request sends entry 1, whose inputs sum to 0: the model answers 1
    assert (first["session"], first["step"], first["stream"], first["output"], first["difference"]) == (0, 0, 0, "OUTPUT", 1.0)
    assert first["shown"] == {"expected": [0.0], "got": [1.0]}
    assert result.judgement.verdict("golden", "alone").values["wrong_steps"] == 2 * 12 * 8  # every reply
    assert result.judgement.diagnoses == [{"code": "differs_from_golden", "checks": ["golden/alone", "golden/all_instances"]}]
    assert result.exit_code == 1
    # without the file the same model passes: nothing else can tell
    unchecked = zoo.check("zoo_offset", key="no golden")
    assert unchecked.exit_code == 0 and unchecked.judgement.verdict("golden", "alone").reason == "no_golden_data"


def test_an_all_nan_model_breaks_as_non_finite_not_as_irreproducible(zoo):
    result = zoo.check("zoo_nan")
    assert result.exit_code == 1
    reference = result.judgement.verdict("repeat_alone")
    assert (reference.verdict, reference.reason) == ("broken", "non_finite")
    assert reference.values["first"]["output"] == "OUTPUT"  # ROUNDED, an integer, repeats
    for check in ("batch_composition", "after_traffic"):
        assert result.judgement.verdict(check).reason == "reference_non_finite"
    finite = result.judgement.verdict("finite", "alone")
    assert (finite.verdict, finite.reason) == ("broken", "non_finite")
    first = finite.values["first"]
    assert (first["session"], first["step"], first["output"], first["shown"]) == (0, 0, "OUTPUT", {"got": ["nan"]})
    assert finite.values["wrong_steps"] == finite.values["compared"]  # every lone reply
    traffic = result.judgement.verdict("finite", "all_instances")
    assert traffic.verdict == "held" and traffic.values["non_finite_alone"] == traffic.values["compared"]  # nothing new under traffic
    assert result.judgement.diagnoses == [{"code": "non_finite", "checks": ["repeat_alone/alone", "finite/alone"]}]
    assert result.judgement.verdict("golden", "alone").reason == "no_golden_data"
    assert "NaN or Inf" in text.verdict_sentence(finite, words("en"))


def test_inf_appearing_only_when_batched_breaks_finite_under_traffic(zoo):
    result = zoo.check("zoo_inf_when_batched")
    v = verdicts(result)
    assert v["repeat_alone/alone"] == "held" and v["after_traffic/alone"] == "held" and v["finite/alone"] == "held"
    broken = result.judgement.verdict("finite", "all_instances")
    assert (broken.verdict, broken.reason, broken.values["non_finite_alone"]) == ("broken", "non_finite", 0)
    first = broken.values["first"]
    assert first["phase"] == "concurrent" and first["output"] == "OUTPUT" and first["shown"] == {"got": ["inf"]}
    assert first["execution"]["batch"] > 1  # the trace shows it ran with others
    assert result.judgement.verdict("batch_composition", "all_instances").verdict == "broken"
    assert {d["code"] for d in result.judgement.diagnoses} == {"batch_dependent", "non_finite"}
    assert result.exit_code == 1
