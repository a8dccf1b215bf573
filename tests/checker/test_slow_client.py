"""The slow_client check on the real server: a client quiet past the idle timeout, reaped, refused on its
late step, then started over from START under the same ID beside neighbours. Each model is checked
once with only this check (and the reference it leans on); the tests read the cached result."""
from __future__ import annotations

from app.checker import words as check_text
from app.checker.engine import report_schema
from app.i18n import words
from tests.checker.conftest import as_json, verdicts, zoo_fixture

zoo = zoo_fixture("zoo_corrid_oldest", "zoo_reaped_no_reset", "zoo_long_idle")
ONLY = ("slow_client",)


def test_a_sound_model_refuses_the_late_step_and_answers_the_restarted_session_as_alone(zoo):
    result = zoo.check("zoo_corrid_oldest", only=ONLY, one_instance=False)
    assert verdicts(result) == {"reference/alone": "held", "slow_client/all_instances": "held"}, verdicts(result)
    v = result.judgement.verdict("slow_client", "all_instances")
    w = v.values["witness"]
    assert w["exercised"] is True and w["late_refused"] is True and w["restarted_matched"] is True, w
    assert w["source"] == "log" and w["reaped_logged"] is True  # the log showed the reaper end the victim's sequence
    assert "must specify the START flag" in w["refusal"]
    assert w["quiet_s"] > w["idle_timeout_s"] == 1.0 and w["neighbours"] == 3
    assert w["pending_after"] == 0 and w["settled_s"] is not None
    # the deliberately late step is no refusal of the model's
    assert v.values["refusals"] == 0 and result.judgement.refusals.empty and result.exit_code == 0
    steps = result.tables.steps
    mine = steps[steps["phase"] == "slow_client"]
    assert set(mine["role"]) == {"victim_slow", "neighbour", "restart"}
    late = mine[mine["outcome"] == "late_step"]
    assert len(late) == 1 and not late.iloc[0]["judged"] and not late.iloc[0]["start"]
    data = as_json(result)
    report_schema.validate(data)
    checks = {(c["check"], c["variant"]): c for c in data["checks"]}
    assert checks[("slow_client", "all_instances")]["values"]["witness"]["late_refused"] is True
    sentence = check_text.verdict_sentence(v, words("en"))
    assert "its late step was refused as a sequence the server no longer knew: yes" in sentence


def test_a_model_that_keeps_state_across_start_carries_the_reaped_sequence_into_the_restarted_one(zoo):
    result = zoo.check("zoo_reaped_no_reset", only=ONLY, one_instance=False)
    assert result.judgement.verdict("reference").verdict == "held"
    v = result.judgement.verdict("slow_client", "all_instances")
    assert (v.verdict, v.reason) == ("broken", "slow_client_keeps_state"), v
    assert v.values["first"]["role"] == "restart" and v.values["first"]["step"] == 0
    w = v.values["witness"]
    assert w["late_refused"] is True and w["restarted_matched"] is False
    assert result.judgement.diagnoses == [{"code": "slow_client_keeps_state", "checks": ["slow_client/all_instances"]}]
    assert "diagnosis" not in v.values  # its own diagnosis names the fault: no replay
    assert result.exit_code == 1
    report_schema.validate(as_json(result))
    summary = "\n".join(check_text.summary_lines(result, words("en")))
    assert "After a client was quiet longer than the idle timeout" in summary


def test_a_long_idle_timeout_is_not_waited_for_and_no_faults_leaves_the_check_out(zoo):
    result = zoo.check("zoo_long_idle", only=ONLY, one_instance=False)
    v = result.judgement.verdict("slow_client", "all_instances")
    assert (v.verdict, v.reason) == ("skipped", "idle_timeout_long") and v.values == {"idle_timeout_s": 20.0, "limit_s": 10.0}
    assert "slow_client" not in set(result.tables.steps["phase"])
    assert "20.0 s" in check_text.verdict_sentence(v, words("en"))
    report_schema.validate(as_json(result))
    quiet = zoo.check("zoo_corrid_oldest", key="no_faults", only=ONLY, one_instance=False, faults=False)
    assert verdicts(quiet) == {"reference/alone": "held"}
