"""Placement from log lines and trace stamps, the JSON report and the JUnit XML (pure)."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from app.i18n import languages, words
from app.lab.checker import compare, junit, placement, report
from app.lab.checker.engine import CheckResult
from app.lab.checker.judge import judge
from app.lab.checker.options import CheckOptions
from app.text import checker as text
from tests.i18n.text_checks import reads_in
from tests.lab.checker.tables import Rows, facts, tables


def line(message: str, source: str = "sequence_batch_scheduler.cc:857") -> str:
    """A verbosity-1 line as Triton 2.51 writes it (its message JSON-escaped)."""
    return f'I1201 09:27:43.577231 22215 {source}] {json.dumps(message)}'


LINES = [
    line("Enqueuing CORRID 41 into batcher m_0_1, sequence slot 0: m"),
    line("Enqueuing CORRID 99 into batcher other_0_0, sequence slot 0: other"),  # another model
    line("Enqueuing CORRID 41 into batcher m_0_1, sequence slot 0: m"),
    line("End sequence CORRID 41 in batcher m_0_1, slot 0", "sequence_batch_scheduler.cc:1812"),
    line("Enqueuing CORRID 41 into new backlog: m", "sequence_batch_scheduler.cc:816"),
    line("Enqueuing CORRID 41 into batcher m_0_0, sequence slot 1: m"),
    line("[request id: ab:3] end sequence CORRID 41 in batcher m_0_0, slot 1", "sequence_batch_scheduler.cc:2011"),
    line("Enqueuing CORRID 42 into batcher m_0_0, sequence slot 0: m"),
    line("Reaper: force-ending CORRID 42 in batcher m_0_0, slot 0", "sequence_batch_scheduler.cc:1121"),
    line("Releasing canceled sequence CORRID 42", "sequence_batch_scheduler.cc:894"),  # a second notice of the same end
]


def test_the_log_places_each_sequence_of_a_reused_id_and_says_how_it_ended():
    events = placement.sequence_events(LINES, "m")
    assert set(events) == {"41", "42"}
    steps = pd.DataFrame([
        {"corrid": "41", "conversation": 1, "t_send": 0.0, "request_id": "a"},
        {"corrid": "41", "conversation": 1, "t_send": 0.1, "request_id": "b"},
        {"corrid": "41", "conversation": 2, "t_send": 1.0, "request_id": "c"},
        {"corrid": "42", "conversation": 3, "t_send": 2.0, "request_id": "d"},
    ])
    placed = placement.place_sequences(steps, events)
    assert list(placed["instance"]) == ["m_0_1", "m_0_1", "m_0_0", "m_0_0"]
    assert list(placed["slot"]) == [0, 0, 1, 0]
    assert list(placed["ended_by"]) == ["end", "end", "end", "reaped"]


def test_requests_with_the_same_compute_stamps_ran_in_one_execution_and_lanes_pack_the_rest():
    steps = pd.DataFrame({
        "variant": ["v"] * 4, "t_send": [0.0, 0.0, 0.5, 0.6], "instance": [None, None, None, "m_0_1"],
        "request_start_ns": [10**9, 10**9, 15 * 10**8, 16 * 10**8],
        "compute_start_ns": [11 * 10**8, 11 * 10**8, 12 * 10**8, 30 * 10**8],
        "compute_end_ns": [13 * 10**8, 13 * 10**8, 14 * 10**8, 31 * 10**8],
    })
    out = placement.executions(steps)
    assert out["execution"].tolist() == [0, 0, 1, 2]
    assert out["exec_start"].tolist()[0] == pytest.approx(0.1)  # the earliest request start pinned to the earliest send
    assert out["lane"].tolist() == ["lane 0", "lane 0", "lane 1", "m_0_1"]  # executions 0 and 1 overlap


def test_a_follower_follows_the_victim_that_last_held_its_slot():
    steps = pd.DataFrame([
        {"phase": "abandon_round", "variant": "v", "conversation": 1, "role": "victim_abandon", "t_send": 0.0, "instance": "m_0_0", "slot": 0},
        {"phase": "abandon_round", "variant": "v", "conversation": 2, "role": "follower", "t_send": 1.0, "instance": "m_0_0", "slot": 0},
        {"phase": "abandon_round", "variant": "v", "conversation": 3, "role": "victim_cancel", "t_send": 2.0, "instance": "m_0_0", "slot": 0},
        {"phase": "abandon_round", "variant": "v", "conversation": 4, "role": "follower", "t_send": 3.0, "instance": "m_0_0", "slot": 0},
        {"phase": "abandon_round", "variant": "v", "conversation": 5, "role": "follower", "t_send": 3.0, "instance": "m_0_1", "slot": 0},
    ])
    assert placement.followers(steps).tolist() == ["", "victim_abandon", "", "victim_cancel", ""]


def result_of(rows: Rows, **kw) -> CheckResult:
    t = tables(rows, **kw)
    return CheckResult(t.facts, t.options, t, judge(t), "external", "h:8000", 1.5)


def broken_result() -> CheckResult:
    rows = Rows().reference()
    rows.add("interleaved", "interleaved", 10, 0, 0, 0.0, variant="all_instances", execution=0, exec_start=0.1, exec_end=0.2, lane="lane 0")
    rows.add("interleaved", "interleaved", 10, 0, 1, 3.0, variant="all_instances", execution=1, exec_start=0.3, exec_end=0.4, lane="lane 0")
    skipped = [{"check": c, "variant": "one_instance", "reason": "external_server", "values": {"url": "h:8000"}}
               for c in ("interleaved",)]
    return result_of(rows, skipped=skipped, options=CheckOptions(only=("interleaved",)))


def test_the_json_report_is_versioned_codes_and_values():
    data = json.loads(report.dumps(broken_result()))
    assert (data["kind"], data["schema"], data["outcome"], data["exit_code"]) == ("check", 1, "broken", 1)
    checks = {(c["check"], c["variant"]): c for c in data["checks"]}
    assert checks[("reference", "alone")]["verdict"] == "held"
    broken = checks[("interleaved", "all_instances")]
    assert broken["verdict"] == "broken" and broken["reason"] == "sessions_mix"
    assert broken["values"]["first"]["step"] == 1 and broken["values"]["first"]["difference"] == 3.0
    assert checks[("interleaved", "one_instance")] == {"check": "interleaved", "variant": "one_instance", "verdict": "skipped",
                                                       "reason": "external_server", "judged_by": "reference", "values": {"url": "h:8000"}}
    assert data["tolerances"] == [{"output": "OUTPUT", "datatype": "INT64", "value": 0.0, "source": "exact", "noise": 0.0, "reproducible": True}]
    assert data["diagnoses"] == [{"code": "sessions_mix", "checks": ["interleaved/all_instances"]}]


def test_the_junit_xml_has_one_test_case_per_check():
    result = broken_result()
    root = ET.fromstring(junit.to_xml(result, describe=lambda v: text.junit_message(v, words("en"))))
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "1")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"reference[alone]", "interleaved[all_instances]", "interleaved[one_instance]"}
    assert [child.tag for child in cases["reference[alone]"]] == ["properties"]  # held: no failure, no skipped
    assert cases["reference[alone]"].find("properties/property").attrib == {"name": "judged_by", "value": "reference"}
    failure = cases["interleaved[all_instances]"].find("failure")
    assert failure.get("type") == "sessions_mix" and "session 1, step 2" in failure.get("message")
    assert json.loads(failure.text)["values"]["first"]["difference"] == 3.0
    assert "is not the checker's own" in cases["interleaved[one_instance]"].find("skipped").get("message")


def test_the_figure_tables_mark_the_diverging_steps():
    result = broken_result()
    line_ = report.timeline(result)
    assert list(line_["diverged"]) == [False, True] and list(line_["lane"]) == ["lane 0", "lane 0"]
    errors = report.errors(result)
    assert list(errors["difference"]) == [0.0, 3.0] and set(errors["session"]) == {0}


def test_every_verdict_sentence_renders_in_every_language():
    result = broken_result()
    english = text.summary_lines(result, words("en"))
    assert len(english) > 5 and english[4].startswith("HELD") and english[6].startswith("BROKEN")
    for lang in languages():
        lines = text.summary_lines(result, words(lang))
        assert len(lines) == len(english)
        # Every line but the blank ones is prose, in the language's own words.
        assert all(reads_in(lang, line, en) for line, en in zip(lines, english, strict=True) if en.strip()), (lang, lines)


def golden_and_finite_result() -> CheckResult:
    """A sequence model whose SCORE is Inf once under traffic and whose OUTPUT misses its golden value
    once; stream 1 of its data file is shorter than its sessions."""
    rows = Rows(outputs=("OUTPUT", "SCORE"), golden=True).reference()
    rows.add("interleaved", "interleaved", 11, 1, 1, 0.0, variant="all_instances", gold={"OUTPUT": 2.0, "SCORE": 0.0})
    rows.rows[-1]["golden"] = {"OUTPUT": {"expected": [3], "got": [5]}}
    rows.add("interleaved", "interleaved", 10, 0, 1, {"OUTPUT": 0.0, "SCORE": compare.MISSING}, variant="all_instances",
             nonfinite={"SCORE": ["inf"]}, gold={"OUTPUT": 0.0, "SCORE": compare.MISSING})
    model = facts(outputs=(("OUTPUT", "INT64"), ("SCORE", "FP32")))
    return result_of(rows, model_facts=model, options=CheckOptions(only=("golden", "finite")), lengths=(2, 2), streams=(2, 1))


def test_golden_and_finite_verdicts_name_the_first_stream_step_and_value_in_every_language():
    result = golden_and_finite_result()
    english = text.summary_lines(result, words("en"))
    joined = "\n".join(english)
    assert "first differed from its golden output at session 2, step 2 (interleaved, ID 7), stream 2 (interleaved sessions): " \
           "OUTPUT off by 2, tolerance 0" in joined
    assert "(expected [3], got [5])" in joined and "float outputs within SCORE 1e-06" in joined
    assert "first NaN or Inf appearing under traffic at session 1, step 2 (interleaved, ID 7) (interleaved sessions): SCORE gave [inf]" in joined
    assert "Streams of the data file shorter than the 2 steps their sessions send: 2." in joined
    assert "not compared with golden outputs" in joined and "streams shorter than their sessions (2): 1 later replies" in joined
    data = json.loads(report.dumps(result))
    assert data["notes"] == [{"code": "streams_wrap", "values": {"streams": [1], "stream_lengths": [1], "steps": 2, "golden": True}}]
    assert {c["check"]: c["judged_by"] for c in data["declared"]} == {
        "reference": "reference", "interleaved": "reference", "id_reuse": "reference", "abandoned": "reference", "cancelled": "reference",
        "golden": "golden", "finite": "finite"}
    assert data["inputs"]["streams"] == [2, 1] and data["inputs"]["golden"] is True
    for lang in languages():
        lines = text.summary_lines(result, words(lang))
        assert len(lines) == len(english)
        assert all(reads_in(lang, line, en) for line, en in zip(lines, english, strict=True) if en.strip()), (lang, lines)


def test_skipped_golden_and_finite_say_why_in_every_language():
    rows = Rows().reference()
    result = result_of(rows)
    skipped = {v.id: text.verdict_sentence(v, words("en")) for v in result.verdicts if v.verdict == "skipped"}
    assert skipped["golden/alone"].startswith('not run: no golden outputs (give a data file with "validation_data"')
    assert skipped["finite/alone"] == "the model compares no float output, and only floats can be NaN or Inf"
    for lang in languages():
        for v in result.verdicts:
            assert reads_in(lang, text.verdict_sentence(v, words(lang)), text.verdict_sentence(v, words("en"))), (lang, v.id)
