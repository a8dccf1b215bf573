"""Witnesses, pure: a check holds only with the server's evidence that its situation happened, and
a held check without it is `not_exercised`, shown apart, with its own exit status (3 by default,
--not-exercised-exit 0 or 1), in the JSON report and its schema, the JUnit XML and the words."""
from __future__ import annotations

import copy
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from app.checker import words as check_words
from app.checker.engine import CheckOptions, CheckResult, report_schema, witness
from app.checker.engine.reports import junit
from app.checker.engine.sequences.judge import judge
from app.i18n import languages, words
from tests.checker.conftest import as_json
from tests.checker.tables import facts, tables
from tests.checker.test_judge import stateless_rows
from tests.i18n.text_checks import reads_in

BATCH = ("batch_composition", "all_instances")


def test_batch_sizes_that_ran_are_the_difference_between_two_readings_of_the_statistics():
    assert witness.ran_between({1: 4, 2: 1}, {1: 10, 2: 1, 3: 2}) == {1: 6, 3: 2}
    assert witness.ran_between(None, {1: 3}) is None
    seen = witness.batches({1: 6, 3: 2}, max_batch_size=8)
    assert (seen["exercised"], seen["largest_batch"], seen["executions"], seen["batch_sizes"]) == (True, 3, 8, {"1": 6, "3": 2})
    alone = witness.batches({1: 12}, max_batch_size=8)
    assert (alone["exercised"], alone["why"], alone["advice"]) == (False, "no_batch_formed", "more_load")
    assert witness.batches({1: 12}, max_batch_size=1)["advice"] == "cannot_batch"
    assert witness.batches(None, max_batch_size=8)["why"] == "no_statistics"


def test_streams_share_executions_in_a_batch_or_at_least_overlap_where_the_model_cannot_batch():
    assert witness.streams_shared({1: 30, 2: 5}, overlapping=8, max_batch_size=4)["exercised"]
    assert witness.streams_shared({1: 30}, overlapping=8, max_batch_size=4)["why"] == "no_batch_formed"
    assert witness.streams_shared({1: 30, 2: 5}, overlapping=0, max_batch_size=4)["why"] == "no_stream_overlap"
    assert witness.streams_shared({}, overlapping=6, max_batch_size=0)["exercised"]  # one thread per stream, no batching
    assert witness.streams_shared({}, overlapping=0, max_batch_size=0)["why"] == "no_stream_overlap"


def _result(evidence, options: CheckOptions | None = None, concurrent: float = 0.0) -> CheckResult:
    made = tables(stateless_rows(concurrent=concurrent), facts(sequence=False), options)
    made.witnesses = {BATCH: evidence}
    return CheckResult(made.facts, made.options, made, judge(made), "external", "h:8000", 0.5)


def test_a_check_whose_batches_never_formed_is_not_exercised_and_never_said_to_hold():
    result = _result(witness.batches({1: 4}, max_batch_size=8))
    v = result.judgement.verdict(*BATCH)
    assert (v.verdict, v.reason, v.values["witness"]["largest_batch"]) == ("not_exercised", "no_batch_formed", 1)
    assert (result.outcome, result.exit_code, result.failed_by, result.not_exercised) == ("not_exercised", 3, [], [
        "batch_composition/all_instances"])
    english = check_words.outcome_lines(result, words("en"))[0]
    assert "Every check held" not in english and "1 check(s) were not exercised" in english and "exit status 3" in english
    sentence = check_words.verdict_sentence(v, words("en"))
    assert "no execution ran more than one request (4 executions, batch sizes 1×4)" in sentence
    assert "--sessions" in sentence and "max_queue_delay_microseconds" in sentence
    for lang in languages():
        assert reads_in(lang, check_words.verdict_sentence(v, words(lang)), sentence), lang
    # the same situation seen: held, with its witness
    held = _result(witness.batches({1: 2, 2: 1}, max_batch_size=8))
    assert (held.judgement.verdict(*BATCH).verdict, held.exit_code, held.outcome) == ("held", 0, "held")
    assert "the server ran batches of up to 2 requests (1×2, 2×1)" in check_words.verdict_sentence(held.judgement.verdict(*BATCH),
                                                                                                   words("en"))


def test_a_broken_check_is_its_own_witness():
    result = _result(witness.batches({1: 4}, max_batch_size=8), concurrent=5.0)
    v = result.judgement.verdict(*BATCH)
    assert (v.verdict, v.reason, result.exit_code, result.outcome) == ("broken", "batch_dependent", 1, "broken")
    assert v.values["witness"]["exercised"] is False


@pytest.mark.parametrize("chosen, exit_code, failed_by", [(0, 0, []), (1, 1, ["not_exercised"]), (3, 3, [])])
def test_the_exit_status_of_not_exercised_is_selectable_and_the_report_validates(chosen, exit_code, failed_by):
    result = _result(witness.batches({1: 4}, max_batch_size=8), CheckOptions(not_exercised_exit=chosen))
    assert (result.exit_code, result.failed_by, result.outcome) == (exit_code, failed_by, "not_exercised")
    data = as_json(result)
    report_schema.validate(data)
    assert data["not_exercised"] == ["batch_composition/all_instances"] and data["options"]["not_exercised_exit"] == chosen
    suite = ET.fromstring(junit.to_xml(result)).find("testsuite")
    case = next(c for c in suite.findall("testcase") if c.get("name") == "batch_composition[all_instances]")
    assert (case.find("failure") is not None) == (chosen == 1) and (case.find("skipped") is not None) == (chosen != 1)


def test_the_schema_refuses_a_report_that_says_held_over_a_check_not_exercised_or_one_without_its_witness():
    data = as_json(_result(witness.batches({1: 4}, max_batch_size=8)))
    lying = copy.deepcopy(data)
    lying.update(outcome="held", exit_code=0)
    with pytest.raises(jsonschema.ValidationError):
        report_schema.validate(lying)
    bare = copy.deepcopy(data)
    del next(c for c in bare["checks"] if c["verdict"] == "not_exercised")["values"]["witness"]
    with pytest.raises(jsonschema.ValidationError):
        report_schema.validate(bare)
    assert CheckOptions(not_exercised_exit=2).problems()[0].code == "check_not_exercised_exit"


def test_the_backlog_witness_counts_the_most_sequences_open_at_once_against_the_slots():
    import pandas as pd

    # three sequences: 0 and 1 overlap, 2 starts exactly when 0 ends (its slot free again)
    rows = pd.DataFrame({"conversation": [0, 0, 1, 1, 2], "step": [0, 1, 0, 1, 0], "t_send": [0.0, 0.5, 0.2, 0.9, 1.0],
                         "t_recv": [0.1, 1.0, 0.6, 1.2, 1.1]})
    assert witness.backlog(rows, capacity=1)["max_open"] == 2 and witness.backlog(rows, capacity=1)["exercised"]
    held_back = witness.backlog(rows, capacity=2)
    assert (held_back["exercised"], held_back["why"], held_back["advice"]) == (False, "no_backlog", "more_sessions")
    assert held_back["longest_first_wait_s"] == 0.4
    # the server's count of pending requests (the gate's reading) is a witness of its own
    counted = witness.backlog(rows, capacity=2, pending_peak=3.0)
    assert (counted["exercised"], counted["source"], counted["pending_peak"]) == (True, "metrics", 3.0)
    assert not witness.backlog(rows, capacity=2, pending_peak=0.0)["exercised"]


def test_the_backlog_gate_holds_one_sequence_per_slot_that_can_hold_and_lets_the_rest_in_after():
    from types import SimpleNamespace

    from app.checker.engine.sequences.backlog_gate import BacklogGate

    def seqs(*sends: int) -> list[SimpleNamespace]:
        return [SimpleNamespace(number=i, sends=n) for i, n in enumerate(sends)]

    gate = BacklogGate.plan(seqs(1, 4, 4, 4, 2), capacity=2, idle_s=5.0, metrics_url=None, model="m")
    assert gate is not None and gate.holders == {1, 2} and gate.latecomers == {0, 3, 4}
    assert gate.hold_s == 1.25  # a quarter of the idle timeout: no holder's slot is reaped while it waits
    assert BacklogGate.plan(seqs(4, 4), capacity=2, idle_s=5.0, metrics_url=None, model="m") is None  # no one to wait
    assert BacklogGate.plan(seqs(1, 1, 4), capacity=2, idle_s=5.0, metrics_url=None, model="m") is None  # too few can hold


def test_a_reused_id_or_a_freed_slot_the_log_never_saw_taken_is_not_exercised_and_unknown_is_said_so():
    assert witness.reuse({"reused": 3, "same_instance": 2, "same_slot": 1})["exercised"]
    assert witness.reuse({"reused": 3, "same_instance": 2, "same_slot": 0})["why"] == "no_reuse_on_freed_slot"
    unplaced = witness.reuse({"reused": 3, "same_instance": None, "same_slot": None})
    assert unplaced["exercised"] and unplaced["source"] == "client"
    assert witness.freed_slot({"next_on_slot": False})["advice"] == "longer_sessions"
    assert witness.freed_slot({"next_on_slot": True, "victim_ended_by": "reaped"})["source"] == "log"
