"""The pure judge on small hand-made tables: every verdict, reason and value it can give."""
from __future__ import annotations

import dataclasses

import pytest

from app.checker.engine import CheckOptions, compare
from app.checker.engine.sequences.judge import judge
from app.checker.engine.sequences.refusals import refusal_cause
from tests.checker.tables import Rows, facts, tables

START_REFUSAL = "inference request for sequence 7 to model 'm' must specify the START flag on the first request of the sequence"


def sequence_rows(diff=0.0, phase="interleaved", variant="all_instances", **kw) -> Rows:
    rows = Rows().reference()
    for c in range(2):
        for k in range(2):
            rows.add(phase, "interleaved", 10 + c, c, k, diff if (c, k) == (1, 1) else 0.0, variant=variant, **kw)
    return rows


def test_every_sequence_check_held_when_every_reply_matches_its_reference():
    rows = Rows().reference()
    for phase, role in (("interleaved", "interleaved"), ("id_reuse", "reuse"), ("abandon_round", "holder")):
        for variant in ("all_instances", "one_instance"):
            rows.add(phase, role, 20, 0, 0, variant=variant).add(phase, role, 20, 0, 1, variant=variant)
    result = judge(tables(rows))
    assert [(v.check, v.variant, v.verdict) for v in result.verdicts] == [
        ("reference", "alone", "held"),
        ("interleaved", "all_instances", "held"), ("interleaved", "one_instance", "held"),
        ("id_reuse", "all_instances", "held"), ("id_reuse", "one_instance", "held"),
        ("abandoned", "all_instances", "held"), ("abandoned", "one_instance", "held"),
        ("cancelled", "all_instances", "held"), ("cancelled", "one_instance", "held"),
        # no data file: golden is not run; an INT64 output cannot be NaN
        ("golden", "alone", "skipped"), ("golden", "all_instances", "skipped"), ("golden", "one_instance", "skipped"),
        ("finite", "alone", "skipped"), ("finite", "all_instances", "skipped"), ("finite", "one_instance", "skipped"),
    ]
    assert {v.reason for v in result.verdicts if v.check == "golden"} == {"no_golden_data"}
    assert {v.reason for v in result.verdicts if v.check == "finite"} == {"no_float_outputs"}
    assert result.exit_code == 0 and result.diagnoses == []
    reference = result.verdict("reference")
    assert reference.values == {"compared": 4, "sessions": 2, "refusals": 0, "largest_difference": 0.0, "largest_output": "OUTPUT"}


def test_a_reference_that_does_not_repeat_breaks_and_nothing_else_is_judged():
    rows = Rows().reference(diff=3.0)
    rows.add("interleaved", "interleaved", 20, 0, 0, 0.0, variant="all_instances")
    result = judge(tables(rows))
    reference = result.verdict("reference")
    assert (reference.verdict, reference.reason) == ("broken", "not_reproducible")
    assert reference.values["first"]["difference"] == 3.0 and reference.values["first"]["step"] == 0
    assert result.verdict("interleaved", "all_instances").verdict == "skipped"
    assert result.verdict("interleaved", "all_instances").reason == "not_reproducible"
    assert result.exit_code == 1
    assert result.diagnoses == [{"code": "not_reproducible", "checks": ["reference/alone"]}]


def test_the_first_divergence_is_the_earliest_wrong_step_with_its_size_and_execution():
    rows = Rows().reference()
    rows.add("interleaved", "interleaved", 10, 0, 0, 0.0, variant="all_instances", execution=5, lane="m_0_1", exec_start=1.0, exec_end=1.1)
    rows.add("interleaved", "interleaved", 11, 1, 0, 0.0, variant="all_instances", execution=5, lane="m_0_1", exec_start=1.0, exec_end=1.1)
    rows.add("interleaved", "interleaved", 11, 1, 1, 4.0, variant="all_instances", t=30.0)
    rows.add("interleaved", "interleaved", 10, 0, 1, 2.0, variant="all_instances", t=20.0, execution=6, lane="m_0_0",
             exec_start=2.0, exec_end=2.1, instance="m_0_0", slot=1)
    rows.add("interleaved", "interleaved", 12, 2, 1, 0.0, variant="all_instances", execution=6, lane="m_0_0", exec_start=2.0, exec_end=2.1)
    verdict = judge(tables(rows)).verdict("interleaved", "all_instances")
    assert (verdict.verdict, verdict.reason) == ("broken", "sessions_mix")
    first = verdict.values["first"]
    assert (first["session"], first["step"], first["difference"], first["output"]) == (0, 1, 2.0, "OUTPUT")
    assert (first["instance"], first["slot"]) == ("m_0_0", 1)
    assert first["execution"]["batch"] == 2 and first["execution"]["lane"] == "m_0_0"
    assert first["execution"]["shared_with"] == [{"session": 2, "step": 1, "role": "interleaved", "corrid": "7"}]
    assert verdict.values["wrong_steps"] == 2 and verdict.values["wrong_sessions"] == 2 and verdict.values["compared"] == 5


def test_float_tolerance_is_derived_from_the_noise_of_the_lone_runs():
    rows = Rows(outputs=("SCORE",)).reference(diff=2e-6)
    rows.add("interleaved", "interleaved", 10, 0, 0, 7e-6, variant="all_instances")
    rows.add("interleaved", "interleaved", 10, 0, 1, 3e-5, variant="one_instance")
    result = judge(tables(rows, facts(outputs=(("SCORE", "FP32"),))))
    tolerance = result.tolerances[0]
    assert (tolerance.source, tolerance.noise, tolerance.value) == ("derived", 2e-6, pytest.approx(8e-6))
    held = result.verdict("interleaved", "all_instances")
    assert held.verdict == "held" and held.values["largest_difference"] == 7e-6
    assert result.verdict("interleaved", "one_instance").verdict == "broken"


def test_a_tolerance_below_the_models_float_noise_is_said_to_be_noise_not_state():
    rows = Rows(outputs=("SCORE",)).reference(diff=2e-6)
    result = judge(tables(rows, facts(outputs=(("SCORE", "FP32"),)), CheckOptions(tolerance=0.0)))
    assert (result.tolerances[0].source, result.tolerances[0].reproducible) == ("user", False)
    assert result.verdict("reference").reason == "noise_above_tolerance"


def test_noise_beyond_the_datatypes_ceiling_is_not_reproducible():
    rows = Rows(outputs=("SCORE",)).reference(diff=0.5)
    result = judge(tables(rows, facts(outputs=(("SCORE", "FP32"),))))
    assert result.tolerances[0].reproducible is False
    assert (result.verdict("reference").verdict, result.verdict("reference").reason) == ("broken", "not_reproducible")


def test_integer_bool_and_string_outputs_compare_exactly():
    rows = Rows(outputs=("N", "B", "S")).reference()
    rows.add("interleaved", "interleaved", 10, 0, 0, {"N": 0.0, "B": 1.0, "S": 0.0}, variant="all_instances")
    result = judge(tables(rows, facts(outputs=(("N", "INT64"), ("B", "BOOL"), ("S", "BYTES")))))
    assert [t.value for t in result.tolerances] == [0.0, 0.0, 0.0]
    assert result.verdict("interleaved", "all_instances").values["first"]["output"] == "B"


def test_refused_requests_are_refusals_with_a_cause_not_wrong_outputs_and_never_held_sessions():
    rows = Rows().reference()
    rows.add("interleaved", "interleaved", 10, 0, 0, 0.0, variant="all_instances", t=1.0, recv=3.5)  # waited 2.5 s in the backlog
    rows.add("interleaved", "interleaved", 10, 0, 1, error=START_REFUSAL, variant="all_instances", t=3.6)
    rows.add("interleaved", "interleaved", 11, 1, 0, 0.0, variant="all_instances", t=5.0)
    result = judge(tables(rows))
    verdict = result.verdict("interleaved", "all_instances")
    assert (verdict.verdict, verdict.reason) == ("broken", "reaped")  # every compared reply matched: the refusal breaks it
    assert verdict.values["refusals"] == 1 and verdict.values["refusal_causes"] == {"reaped_after_backlog": 1}
    assert verdict.values["first_refusal"] == {"session": 0, "step": 1, "corrid": "7", "role": "interleaved", "phase": "interleaved",
                                               "cause": "reaped_after_backlog", "error": START_REFUSAL}
    assert result.exit_code == 1 and {"code": "reaped", "checks": ["interleaved/all_instances"]} in result.diagnoses
    refusal = result.refusals.iloc[0]
    assert (refusal["session"], refusal["step"], refusal["error"]) == (0, 1, START_REFUSAL)


def test_a_sequence_refused_at_its_second_request_with_no_wait_is_a_split_sequence_not_a_held_one():
    # Through a round-robin balancer: step 0 answered by one replica, step 1 refused by the other.
    rows = Rows().reference()
    for c in range(4):
        rows.add("interleaved", "interleaved", 10 + c, c % 2, 0, 0.0, variant="all_instances", t=1.0 + c)
        rows.add("interleaved", "interleaved", 10 + c, c % 2, 1, error=START_REFUSAL, variant="all_instances", t=1.1 + c)
    result = judge(tables(rows))
    verdict = result.verdict("interleaved", "all_instances")
    assert (verdict.verdict, verdict.reason) == ("broken", "sequence_split")
    assert verdict.values["refusal_causes"] == {"sequence_ended": 4} and verdict.values["compared"] == 4
    assert result.verdict("reference").verdict == "held" and result.exit_code == 1


def test_a_check_broken_on_its_outputs_and_refused_besides_names_both():
    rows = Rows().reference()
    rows.add("interleaved", "interleaved", 10, 0, 0, 5.0, variant="all_instances", t=1.0)
    rows.add("interleaved", "interleaved", 11, 1, 0, 0.0, variant="all_instances", t=1.1)
    rows.add("interleaved", "interleaved", 11, 1, 1, error=START_REFUSAL, variant="all_instances", t=1.2)
    result = judge(tables(rows))
    verdict = result.verdict("interleaved", "all_instances")
    assert (verdict.verdict, verdict.reason, verdict.values["refusal_diagnosis"]) == ("broken", "sessions_mix", "sequence_split")
    assert [d["code"] for d in result.diagnoses] == ["sequence_split", "sessions_mix"]


def test_a_reference_broken_only_by_refusals_still_serves_as_the_reference():
    rows = Rows().reference()
    rows.add("reference", "alone", 200, 0, 2, error="no answer from the server (timeout)", pass_="b", t=0.5)
    rows.add("interleaved", "interleaved", 10, 0, 0, 0.0, variant="all_instances", t=1.0)
    result = judge(tables(rows))
    assert (result.verdict("reference").verdict, result.verdict("reference").reason) == ("broken", "requests_refused")
    assert result.verdict("interleaved", "all_instances").verdict == "held"


def test_a_check_whose_every_request_was_refused_is_broken_not_held_nor_skipped():
    rows = Rows().reference()
    rows.add("interleaved", "interleaved", 10, 0, 0, error="server is busy", variant="all_instances")
    verdict = judge(tables(rows)).verdict("interleaved", "all_instances")
    assert (verdict.verdict, verdict.reason, verdict.values["compared"]) == ("broken", "requests_refused", 0)


@pytest.mark.parametrize(("error", "first_wait", "gap", "cause"), [
    (START_REFUSAL, 2.0, 0.1, "reaped_after_backlog"),
    (START_REFUSAL, 0.01, 1.5, "idle_gap"),
    (START_REFUSAL, 0.01, 0.1, "sequence_ended"),
    ("Deadline Exceeded", 0.0, 0.0, "timed_out"),
    ("no answer from the server (ConnectionResetError: reset)", 0.0, 0.0, "no_answer"),
    ("unexpected shape for input 'X'", 0.0, 0.0, "server_error"),
])
def test_refusal_causes(error, first_wait, gap, cause):
    assert refusal_cause(error, first_wait, gap, idle_s=1.0) == cause


def test_variants_the_measurement_skipped_are_skipped_with_its_reason():
    rows = sequence_rows()
    skipped = [{"check": c, "variant": "one_instance", "reason": "external_server", "values": {"url": "h:8000"}}
               for c in ("interleaved", "id_reuse", "abandoned", "cancelled")]
    result = judge(tables(rows, skipped=skipped))
    verdict = result.verdict("interleaved", "one_instance")
    assert (verdict.verdict, verdict.reason, verdict.values) == ("skipped", "external_server", {"url": "h:8000"})
    assert result.exit_code == 0


def test_id_reuse_judges_the_reused_sequences_and_counts_where_they_landed():
    rows = Rows().reference()
    # the first wave breaks (padding garbage, say): that is not inheritance
    rows.add("id_reuse", "first_use", 10, 0, 0, 5.0, variant="all_instances", corrid="41", instance="m_0_0", slot=0)
    rows.add("id_reuse", "first_use", 11, 1, 0, 0.0, variant="all_instances", corrid="42", instance="m_0_1", slot=0)
    rows.add("id_reuse", "reuse", 12, 1, 0, 0.0, variant="all_instances", corrid="41", instance="m_0_0", slot=0)
    rows.add("id_reuse", "reuse", 13, 0, 0, 0.0, variant="all_instances", corrid="42", instance="m_0_0", slot=1)
    held = judge(tables(rows)).verdict("id_reuse", "all_instances")
    assert held.verdict == "held" and held.values["compared"] == 2
    assert (held.values["reused"], held.values["same_instance"], held.values["same_slot"]) == (2, 1, 1)
    rows.add("id_reuse", "chain", 14, 0, 1, 9.0, variant="all_instances", corrid="41", instance="m_0_0", slot=0)
    broken = judge(tables(rows)).verdict("id_reuse", "all_instances")
    assert (broken.verdict, broken.reason, broken.values["first"]["role"]) == ("broken", "inherits_after_end", "chain")


def test_a_reused_id_counts_as_landing_where_any_earlier_sequence_of_it_ran():
    # One ID on instances A, B, then A again: the third lands where the first left its state, though
    # never where the sequence just before it ran (the pattern two instances alternating give).
    rows = Rows().reference()
    rows.add("id_reuse", "first_use", 10, 0, 0, 0.0, variant="all_instances", corrid="41", instance="m_0_0", slot=0)
    rows.add("id_reuse", "reuse", 11, 0, 0, 0.0, variant="all_instances", corrid="41", instance="m_0_1", slot=0)
    rows.add("id_reuse", "chain", 12, 0, 0, 0.0, variant="all_instances", corrid="41", instance="m_0_0", slot=0)
    held = judge(tables(rows)).verdict("id_reuse", "all_instances")
    assert (held.values["reused"], held.values["same_instance"], held.values["same_slot"]) == (2, 1, 1)


def test_a_follower_breaks_the_check_of_the_victim_whose_slot_it_took():
    rows = Rows().reference()
    rows.add("abandon_round", "holder", 10, 0, 0, variant="all_instances", instance="m_0_0", slot=0)
    rows.add("abandon_round", "victim_abandon", 11, 1, 0, variant="all_instances", instance="m_0_0", slot=1, ended_by="reaped")
    rows.add("abandon_round", "victim_cancel", 12, 0, 0, variant="all_instances", instance="m_0_1", slot=0)
    rows.add("abandon_round", "victim_cancel", 12, 0, 1, variant="all_instances", judged=False, outcome="cancel_target",
             error="no answer from the server (timeout: timed out)", instance="m_0_1", slot=0)
    rows.add("abandon_round", "follower", 13, 1, 0, 6.0, variant="all_instances", instance="m_0_1", slot=0, follows="victim_cancel")
    rows.add("abandon_round", "follower", 14, 0, 0, 0.0, variant="all_instances", instance="m_0_0", slot=1, follows="victim_abandon")
    result = judge(tables(rows))
    abandoned, cancelled = result.verdict("abandoned", "all_instances"), result.verdict("cancelled", "all_instances")
    assert abandoned.verdict == "held" and abandoned.values["next_on_slot"] is True
    assert abandoned.values["victim_ended_by"] == "reaped"
    assert (cancelled.verdict, cancelled.reason) == ("broken", "aborted_pollutes")
    assert cancelled.values["first"]["role"] == "follower"
    assert cancelled.values["cancel_outcome"] == "gave_up"
    assert cancelled.values["refusals"] == 0  # the checker's own cancellation is not a refusal


def _cancel_round(**target) -> Rows:
    rows = Rows().reference()
    rows.add("abandon_round", "holder", 10, 0, 0, variant="all_instances", instance="m_0_0", slot=0, request_start_ns=1)
    rows.add("abandon_round", "victim_cancel", 12, 0, 0, variant="all_instances", instance="m_0_1", slot=0, request_start_ns=2)
    rows.add("abandon_round", "victim_cancel", 12, 0, 1, variant="all_instances", judged=False, outcome="cancel_target",
             error="no answer from the server (timeout: timed out)", instance="m_0_1", slot=0, **target)
    rows.add("abandon_round", "follower", 13, 1, 0, variant="all_instances", instance="m_0_1", slot=0, follows="victim_cancel",
             request_start_ns=4)
    return rows


@pytest.mark.parametrize(("target", "traced", "verdict", "reached"), [
    ({"request_start_ns": 3}, True, "held", True),  # the server has its record: it arrived, and nothing leaked
    ({"request_start_ns": None}, True, "skipped", False),  # traced, but never arrived: nothing was cancelled
    ({"request_start_ns": None}, False, "held", None),  # no trace: the report cannot say, and does not guess
])
def test_a_given_up_request_that_never_reached_the_server_proves_nothing(target, traced, verdict, reached):
    t = dataclasses.replace(tables(_cancel_round(**target)), traced=traced)
    cancelled = judge(t).verdict("cancelled", "all_instances")
    assert (cancelled.verdict, cancelled.values["cancel_reached"]) == (verdict, reached)
    if verdict == "skipped":
        assert cancelled.reason == "cancel_not_delivered"


def test_checks_broken_only_because_sessions_already_mix_add_no_diagnosis_of_their_own():
    rows = sequence_rows(diff=1.0)
    rows.add("id_reuse", "reuse", 30, 0, 0, 1.0, variant="all_instances")
    result = judge(tables(rows))
    assert result.verdict("id_reuse", "all_instances").verdict == "broken"
    assert result.diagnoses == [{"code": "sessions_mix", "checks": ["interleaved/all_instances"]}]


def test_only_the_checks_asked_for_and_measured_are_judged():
    result = judge(tables(sequence_rows(), options=CheckOptions(only=("interleaved",))))
    assert [v.id for v in result.verdicts] == ["reference/alone", "interleaved/all_instances"]  # no one-instance rows, no skip either


def stateless_rows(repeat=0.0, concurrent=0.0, after=0.0) -> Rows:
    rows = Rows()
    for pass_, diff in (("a", None), ("b", repeat)):
        for s in range(2):
            rows.add("reference", "alone", len(rows.rows), s, 0, diff, pass_=pass_, corrid="")
    for s in range(2):
        rows.add("concurrent", "c1", len(rows.rows), s, 0, concurrent if s else 0.0, variant="all_instances", corrid="")
        rows.add("after_traffic", "alone", len(rows.rows), s, 0, after if s else 0.0, corrid="")
    return rows


def test_stateless_checks_held():
    result = judge(tables(stateless_rows(), facts(sequence=False)))
    assert [(v.check, v.variant, v.verdict) for v in result.verdicts] == [
        ("repeat_alone", "alone", "held"), ("batch_composition", "all_instances", "held"), ("after_traffic", "alone", "held"),
        ("golden", "alone", "skipped"), ("golden", "all_instances", "skipped"),
        ("finite", "alone", "skipped"), ("finite", "all_instances", "skipped")]
    assert result.verdict("batch_composition").values["sessions"] == 2


def test_a_lone_request_answered_differently_the_second_time_means_the_model_keeps_state():
    result = judge(tables(stateless_rows(repeat=9.0), facts(sequence=False)))
    assert (result.verdict("repeat_alone").verdict, result.verdict("repeat_alone").reason) == ("broken", "keeps_state")
    assert [(v.id, v.reason) for v in result.verdicts[1:3]] == [("batch_composition/all_instances", "not_reproducible"),
                                                                 ("after_traffic/alone", "not_reproducible")]
    assert result.diagnoses == [{"code": "keeps_state", "checks": ["repeat_alone/alone"]}]


def test_batch_composition_and_history_break_apart():
    batch = judge(tables(stateless_rows(concurrent=1.0), facts(sequence=False)))
    assert batch.diagnoses == [{"code": "batch_dependent", "checks": ["batch_composition/all_instances"]}]
    assert batch.verdict("after_traffic").verdict == "held"
    history = judge(tables(stateless_rows(after=1.0), facts(sequence=False)))
    assert history.diagnoses == [{"code": "keeps_state", "checks": ["after_traffic/alone"]}]
    assert history.verdict("batch_composition").verdict == "held"


def test_broken_steps_give_each_broken_sessions_error_over_its_steps():
    rows = Rows().reference()
    for k, diff in enumerate((0.0, 2.0, 5.0)):
        rows.add("interleaved", "interleaved", 10, 0, k, diff, variant="all_instances")
    rows.add("interleaved", "interleaved", 11, 1, 0, 0.0, variant="all_instances")  # intact: not in the table
    steps = judge(tables(rows)).broken_steps
    assert list(steps["step"]) == [0, 1, 2] and list(steps["difference"]) == [0.0, 2.0, 5.0]
    assert set(steps["conversation"]) == {10} and set(steps["check"]) == {"interleaved"}


# -- golden outputs --------------------------------------------------------------------------------
def golden_rows(gold_at=None, outputs=("OUTPUT",), **kw) -> Rows:
    """Both lone runs and an interleaved run on all instances; gold_at = (session, step, diff) puts a
    difference from the golden output on that step of the interleaved run."""
    rows = Rows(outputs=outputs, golden=True).reference(**kw)
    for c in range(2):
        for k in range(2):
            gold = gold_at[2] if gold_at and (c, k) == gold_at[:2] else 0.0
            rows.add("interleaved", "interleaved", 10 + c, c, k, 0.0, variant="all_instances", gold=gold)
    return rows


def test_golden_holds_on_every_run_and_says_its_tolerances():
    t = tables(golden_rows(outputs=("OUTPUT", "SCORE")), facts(outputs=(("OUTPUT", "INT64"), ("SCORE", "FP32"))),
               options=CheckOptions(only=("golden",)), data_lengths=(2, 2))
    result = judge(t)
    golden = {v.variant: v for v in result.verdicts if v.check == "golden"}
    assert [(v, g.verdict) for v, g in golden.items()] == [("alone", "held"), ("all_instances", "held")]  # one_instance did not run
    assert golden["alone"].values["compared"] == 8 and golden["all_instances"].values["compared"] == 4
    assert golden["alone"].values["tolerances"] == {"OUTPUT": 0.0, "SCORE": compare.FLOOR["FP32"]}
    assert result.exit_code == 0 and result.notes == []


def test_golden_breaks_at_the_first_mismatch_naming_its_stream_step_and_phase():
    rows = golden_rows(gold_at=(1, 1, 3.0))
    rows.rows[-1]["golden"] = {"OUTPUT": {"expected": [4], "got": [7]}}
    t = tables(rows, options=CheckOptions(only=("golden",)), lengths=(2, 2, 2), data_lengths=(2, 2))
    result = judge(t)
    broken = result.verdict("golden", "all_instances")
    assert (broken.verdict, broken.reason) == ("broken", "differs_from_golden")
    first = broken.values["first"]
    assert (first["session"], first["stream"], first["step"], first["phase"], first["output"], first["difference"]) == (
        1, 1, 1, "interleaved", "OUTPUT", 3.0)
    assert first["shown"] == {"expected": [4], "got": [7]} and broken.values["wrong_steps"] == 1
    assert result.verdict("golden", "alone").verdict == "held"
    assert result.diagnoses == [{"code": "differs_from_golden", "checks": ["golden/all_instances"]}]
    assert result.exit_code == 1


def test_golden_is_judged_even_where_the_reference_broke():
    result = judge(tables(golden_rows(diff=5.0), options=CheckOptions(only=("golden",))))
    assert result.verdict("reference").verdict == "broken"
    assert result.verdict("golden", "alone").verdict == "held"  # the file, not the reference, says what is right


def test_golden_without_a_golden_step_to_compare_is_skipped():
    rows = Rows(golden=True).reference(gold=None)
    verdict = judge(tables(rows, options=CheckOptions(only=("golden",)))).verdict("golden", "alone")
    assert (verdict.verdict, verdict.reason) == ("skipped", "no_golden_steps")


def test_streams_shorter_than_their_sessions_are_a_note_and_their_wrapped_steps_go_uncompared():
    rows = Rows(golden=True)
    for pass_ in ("a", "b"):
        for s, length in ((0, 3), (1, 3)):
            for k in range(length):
                # stream 1 has 1 step: the session's steps 1 and 2 replay it, with no golden output
                rows.add("reference", "alone", 100 * (pass_ == "b") + s, s, k, None if pass_ == "a" else 0.0, pass_=pass_,
                         gold=None if (s == 1 and k > 0) else 0.0)
    result = judge(tables(rows, options=CheckOptions(only=("golden",)), lengths=(3, 3), data_lengths=(3, 1)))
    assert result.notes == [{"code": "streams_wrap", "values": {"streams": [1], "stream_lengths": [1], "steps": 3, "golden": True}}]
    golden = result.verdict("golden", "alone")
    assert golden.verdict == "held" and golden.values["wrapped_streams"] == [1] and golden.values["uncompared_steps"] == 4
    assert golden.values["compared"] == 8
    stateless = judge(tables(stateless_rows(), facts(sequence=False), lengths=(3, 3), data_lengths=(3, 1)))
    assert stateless.notes == []  # a stateless answer depends on its inputs alone: step k compares with entry k % length


def test_stateless_golden_under_traffic_covers_the_concurrent_and_after_traffic_replies():
    rows = Rows(golden=True)
    for pass_ in ("a", "b"):
        rows.add("reference", "alone", len(rows.rows), 0, 0, None if pass_ == "a" else 0.0, pass_=pass_, corrid="")
    rows.add("concurrent", "c1", 5, 0, 0, variant="all_instances", corrid="")
    rows.add("after_traffic", "alone", 6, 0, 0, corrid="", gold=2.0)
    result = judge(tables(rows, facts(sequence=False)))
    traffic = result.verdict("golden", "all_instances")
    assert traffic.verdict == "broken" and traffic.values["compared"] == 2 and traffic.values["first"]["phase"] == "after_traffic"
    assert result.verdict("golden", "alone").verdict == "held"


# -- NaN and Inf ----------------------------------------------------------------------------------------
NAN = {"SCORE": ["nan"]}


def test_a_reference_broken_only_by_nan_says_non_finite_not_irreproducible():
    rows = Rows(outputs=("SCORE",))
    for pass_ in ("a", "b"):
        for s in range(2):
            rows.add("reference", "alone", 100 * (pass_ == "b") + s, s, 0, None if pass_ == "a" else compare.MISSING, pass_=pass_,
                     nonfinite=NAN)
    rows.add("interleaved", "interleaved", 10, 0, 0, compare.MISSING, variant="all_instances", nonfinite=NAN)
    result = judge(tables(rows, facts(outputs=(("SCORE", "FP32"),))))
    assert (result.verdict("reference").verdict, result.verdict("reference").reason) == ("broken", "non_finite")
    assert result.verdict("interleaved", "all_instances").reason == "reference_non_finite"
    finite = result.verdict("finite", "alone")
    assert (finite.verdict, finite.reason) == ("broken", "non_finite")
    assert (finite.values["first"]["session"], finite.values["first"]["step"], finite.values["first"]["output"]) == (0, 0, "SCORE")
    assert finite.values["first"]["shown"] == {"got": ["nan"]} and finite.values["wrong_steps"] == 4
    # under traffic the same steps were NaN alone already: nothing new appeared there
    traffic = result.verdict("finite", "all_instances")
    assert traffic.verdict == "held" and traffic.values["non_finite_alone"] == 1
    assert result.diagnoses == [{"code": "non_finite", "checks": ["reference/alone", "finite/alone"]}]
    assert result.exit_code == 1


def test_a_reference_that_differs_beside_its_nan_is_not_reproducible():
    rows = Rows(outputs=("SCORE", "N"))
    for pass_ in ("a", "b"):
        rows.add("reference", "alone", 100 * (pass_ == "b"), 0, 0, None if pass_ == "a" else {"SCORE": compare.MISSING, "N": 2.0},
                 pass_=pass_, nonfinite=NAN)
    result = judge(tables(rows, facts(outputs=(("SCORE", "FP32"), ("N", "INT64")))))
    assert result.verdict("reference").reason == "not_reproducible"


def test_inf_appearing_under_traffic_breaks_finite_there_and_the_lone_runs_hold():
    rows = Rows(outputs=("SCORE",)).reference()
    rows.add("interleaved", "interleaved", 10, 0, 0, 0.0, variant="all_instances")
    rows.add("interleaved", "interleaved", 10, 0, 1, compare.MISSING, variant="all_instances", nonfinite={"SCORE": ["inf"]},
             execution=3, lane="m_0_0", exec_start=1.0, exec_end=1.1)
    rows.add("interleaved", "interleaved", 11, 1, 1, 0.0, variant="all_instances", execution=3, lane="m_0_0", exec_start=1.0, exec_end=1.1)
    result = judge(tables(rows, facts(outputs=(("SCORE", "FP32"),))))
    assert result.verdict("finite", "alone").verdict == "held"
    broken = result.verdict("finite", "all_instances")
    assert (broken.verdict, broken.reason, broken.values["non_finite_alone"]) == ("broken", "non_finite", 0)
    first = broken.values["first"]
    assert (first["session"], first["step"], first["phase"], first["shown"], first["difference"]) == (0, 1, "interleaved", {"got": ["inf"]}, None)
    assert first["execution"]["batch"] == 2
    assert {d["code"] for d in result.diagnoses} == {"sessions_mix", "non_finite"}


def test_lone_repeats_answered_from_the_response_cache_are_skipped_not_held():
    """The measurement ran both lone passes but the server answered the second from its cache
    (stateless_rounds._answered_from_cache): equal answers prove nothing, so nothing is judged held."""
    rows = Rows()
    for pass_, diff in (("a", None), ("b", 0.0)):
        for s in range(2):
            rows.add("reference", "alone", len(rows.rows), s, 0, diff, pass_=pass_, corrid="")
    values = {"cache_hits": 2, "requests": 2}
    skipped = [{"check": c, "variant": v, "reason": "response_cache", "values": values}
               for c, v in (("repeat_alone", "alone"), ("batch_composition", "all_instances"), ("after_traffic", "alone"))]
    result = judge(tables(rows, facts(sequence=False), skipped=skipped))
    assert [(v.id, v.verdict, v.reason, v.values) for v in result.verdicts if v.check not in ("golden", "finite")] == [
        ("repeat_alone/alone", "skipped", "response_cache", values), ("batch_composition/all_instances", "skipped", "response_cache", values),
        ("after_traffic/alone", "skipped", "response_cache", values)]
    assert result.exit_code == 0 and result.diagnoses == []


def _result(options: CheckOptions, findings) -> object:
    from app.checker.engine import CheckResult

    held = tables(sequence_rows(), options=options)
    return CheckResult(held.facts, options, held, judge(held), "external", "h:8000", 0.1, findings)


def test_an_error_in_the_config_review_fails_a_check_whose_every_verdict_held_unless_allowed():
    from app.checker.engine import ReviewCode, ReviewFinding
    from app.checker.engine.reports.junit import to_xml
    from app.checker.engine.reports.report import to_json
    from app.checker.engine.review import Severity

    error = ReviewFinding(ReviewCode.IDLE_TIMEOUT_BELOW_THINK, Severity.ERROR, "sequence_batching.max_sequence_idle_microseconds",
                          {"idle_ms": 1000, "think_ms": 1500})
    warning = ReviewFinding(ReviewCode.IDLE_TIMEOUT_DEFAULT, Severity.WARNING, "sequence_batching.max_sequence_idle_microseconds", {})
    strict = _result(CheckOptions(), [error, warning])
    assert strict.judgement.exit_code == 0 and (strict.failed_by, strict.exit_code) == (["review"], 1)
    report = to_json(strict)
    assert (report["outcome"], report["exit_code"], report["failed_by"]) == ("broken", 1, ["review"])
    assert 'name="config_review"' in to_xml(strict) and 'type="review_error"' in to_xml(strict)
    allowed = _result(CheckOptions(allow_review_errors=True), [error])
    assert (allowed.failed_by, allowed.exit_code) == ([], 0) and to_json(allowed)["options"]["allow_review_errors"] is True
    assert "<skipped" in to_xml(allowed)
    assert _result(CheckOptions(), [warning]).exit_code == 0  # a warning never fails it


def test_the_outcome_says_when_the_review_fails_the_check_in_every_language():
    from app.checker import words as check_text
    from app.checker.engine import ReviewCode, ReviewFinding
    from app.checker.engine.review import Severity
    from app.i18n import languages, words

    error = ReviewFinding(ReviewCode.IDLE_TIMEOUT_BELOW_THINK, Severity.ERROR, "sequence_batching.max_sequence_idle_microseconds", {})
    for lang in languages():
        _ = words(lang)
        strict = check_text.outcome_lines(_result(CheckOptions(), [error]), _)
        allowed = check_text.outcome_lines(_result(CheckOptions(allow_review_errors=True), [error]), _)
        assert strict[0] == _(check_text.OUTCOME[0]) and "--allow-review-errors" in strict[1] and len(strict) == 2
        assert allowed[1] != strict[1] and "--allow-review-errors" in allowed[1]


def slow_client_tables(pending_after=0.0, state_before=None, state_after=None, late_error=START_REFUSAL, restart_diff=0.0):
    """The slow client's rows (its victim's first step, its late step, its restart, a neighbour) and its witness."""
    from app.checker.engine.sequences import slow_client

    rows = Rows().reference()
    rows.add("slow_client", "victim_slow", 30, 0, 0, variant="all_instances", corrid="9")
    rows.add("slow_client", "victim_slow", 30, 0, 1, variant="all_instances", corrid="9", judged=False, outcome="late_step",
             error=late_error, t=5.0)
    rows.add("slow_client", "restart", 31, 0, 0, variant="all_instances", corrid="9", t=6.0)
    rows.add("slow_client", "restart", 31, 0, 1, restart_diff, variant="all_instances", corrid="9", t=6.1)
    rows.add("slow_client", "neighbour", 32, 1, 0, variant="all_instances", corrid="8", t=0.5)
    run = slow_client.SlowRun(1.0, 1, "gauge" if state_before is not None else None, quiet_s=3.0, reaped_logged=True,
                              late_error=late_error, pending_before=0.0, pending_after=pending_after, state_before=state_before,
                              state_after=state_after)
    t = tables(rows)
    t.witnesses = {("slow_client", "all_instances"): run.witness()}
    return t


def test_the_slow_clients_late_step_is_no_refusal_and_what_it_leaves_behind_breaks_it():
    held = judge(slow_client_tables())
    v = held.verdict("slow_client", "all_instances")
    assert v.verdict == "held" and v.values["refusals"] == 0 and held.refusals.empty  # refused on purpose: not the model's refusal
    assert v.values["witness"]["late_refused"] is True and v.values["witness"]["restarted_matched"] is True
    pending = judge(slow_client_tables(pending_after=1.0)).verdict("slow_client", "all_instances")
    assert (pending.verdict, pending.reason) == ("broken", "slow_client_leaves_pending")
    leaked = judge(slow_client_tables(state_before=2.0, state_after=3.0))
    assert (leaked.verdict("slow_client", "all_instances").reason, leaked.diagnoses) == (
        "slow_client_leaks_state", [{"code": "slow_client_leaks_state", "checks": ["slow_client/all_instances"]}])
    carried = judge(slow_client_tables(restart_diff=4.0)).verdict("slow_client", "all_instances")
    assert (carried.verdict, carried.reason, carried.values["first"]["role"]) == ("broken", "slow_client_keeps_state", "restart")
    assert carried.values["witness"]["restarted_matched"] is False
    answered = judge(slow_client_tables(late_error="")).verdict("slow_client", "all_instances")
    assert (answered.verdict, answered.reason, answered.values["witness"]["advice"]) == ("not_exercised", "not_reaped", "reaper_late")
    from app.checker import words as check_text
    from app.i18n import languages, words

    for lang in languages():  # every verdict of the fault has its sentence in every language
        for verdict in (v, pending, carried, answered):
            assert check_text.verdict_sentence(verdict, words(lang)), (lang, verdict.id)
    assert "Triton's pending requests afterwards: 1" in check_text.verdict_sentence(pending, words("en"))
