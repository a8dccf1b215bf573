"""Placement from log lines and trace stamps, the JSON report, the JUnit XML and the printed summary (pure)."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from app.checker import words as text
from app.checker.engine import CheckOptions, CheckResult, compare, inputs
from app.checker.engine.reports import junit, report
from app.checker.engine.sequences import placement
from app.checker.engine.sequences.judge import judge
from app.checker.engine.verdicts import CheckVerdict
from app.i18n import languages, words
from tests.checker.tables import Rows, facts, tables
from tests.i18n.text_checks import reads_in


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


def test_a_placement_written_inside_another_line_is_still_read():
    # As the server writes under load (tests/lab/fixtures/triton_2_51_interleaved.log): one entry
    # inside another's line, its newline left alone after them.
    inside = line("HTTP request: 2 /v2/models/m/infer", "http_server.cc:4599") + LINES[0]
    assert placement.sequence_events([inside + "\n", "\n"], "m") == {"41": [("slot", "m_0_1", 0)]}


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
    assert (data["kind"], data["schema"], data["outcome"], data["exit_code"]) == ("check", report.SCHEMA, "broken", 1)
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
    return result_of(rows, model_facts=model, options=CheckOptions(only=("golden", "finite")), lengths=(2, 2), data_lengths=(2, 1))


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
        "slow_client": "reference", "golden": "golden", "finite": "finite"}
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


# -- the printed summary: the version, counted nouns in the language's plural, the inputs' shapes ------------
def counted_result(instances: int, slots: int, lengths: list[int], rows: Rows, used: inputs.InputsUsed | None = None) -> CheckResult:
    t = tables(rows, model_facts=facts(instances=instances, slots=slots))
    t.lengths = lengths
    return CheckResult(t.facts, t.options, t, judge(t), "external", "h:8000", 1.5, inputs=used or inputs.InputsUsed())


ONE = counted_result(1, 1, [1], Rows().add("reference", pass_="a"))
SEVERAL = counted_result(2, 4, [24] + [8] * 15, Rows().reference(sequences=2, steps=2))
SUMMARIES = {
    ("en", "one"): ["Checked m version 1 on h:8000 (an external server): scheduler direct, 1 instance; 1 request in 1.5 s",
                    "capacity 1 sequence (1 × 1 slot), idle timeout 1.0 s", "1 session of 1 step, inputs generated from the model's metadata"],
    ("en", "several"): ["Checked m version 1 on h:8000 (an external server): scheduler direct, 2 instances; 8 requests in 1.5 s",
                        "capacity 8 sequences (2 × 4 slots), idle timeout 1.0 s",
                        "16 sessions of 8 to 24 steps, inputs generated from the model's metadata"],
    ("zh", "one"): ["已在 h:8000（外部服务器）上检查 m 版本 1：调度器 direct，1 个实例；1.5 秒 内发送了 1 个请求",
                    "容量 1 个序列（1 × 1 个槽位），空闲超时 1.0 秒", "1 个会话，每个 1 步，输入由模型的元数据生成"],
    ("zh", "several"): ["已在 h:8000（外部服务器）上检查 m 版本 1：调度器 direct，2 个实例；1.5 秒 内发送了 8 个请求",
                        "容量 8 个序列（2 × 4 个槽位），空闲超时 1.0 秒", "16 个会话，每个 8 到 24 步，输入由模型的元数据生成"],
}


@pytest.mark.parametrize(("lang", "counts"), list(SUMMARIES))
def test_the_summary_names_the_version_and_counts_in_the_languages_singular_and_plural(lang, counts):
    result = ONE if counts == "one" else SEVERAL
    assert text.summary_lines(result, words(lang))[:3] == SUMMARIES[(lang, counts)]


@pytest.mark.parametrize(("lang", "one", "several"), [
    ("en", "1 step of 1 session matched their references; largest difference 0; 1 request refused; "
           "only 1 session in flight on 1 slot: the backlog was not reached (more --sessions reach it)",
     "96 steps of 16 sessions matched their references; largest difference 0; 3 requests refused; "
     "16 sessions in flight on 8 slots, so the backlog was used"),
    ("zh", "1 个会话的 1 步与参照结果一致；最大差值 0；1 个请求被拒绝；1 个槽位上同时只有 1 个会话：没有用到积压队列（用 --sessions 增加会话数才能用到）",
     "16 个会话的 96 步与参照结果一致；最大差值 0；3 个请求被拒绝；8 个槽位上同时有 16 个会话，因此用到了积压队列"),
])
def test_verdict_sentences_count_in_the_languages_singular_and_plural(lang, one, several):
    def held(compared, sessions, refusals, in_flight, capacity):
        return CheckVerdict("interleaved", "all_instances", "held", values={
            "compared": compared, "sessions": sessions, "largest_difference": 0.0, "refusals": refusals, "in_flight": in_flight,
            "capacity": capacity, "overflow": in_flight > capacity})
    assert text.verdict_sentence(held(1, 1, 1, 1, 1), words(lang)) == one
    assert text.verdict_sentence(held(96, 16, 3, 16, 8), words(lang)) == several


DRAWN = inputs.InputsUsed(inputs.DrawnSizes(1, 16, "request", 0), (
    inputs.ShapeUsed("TOKENS", (-1,), "drawn", (1,), (16,)), inputs.ShapeUsed("LABEL", (1,), "model", (1,), (1,))))
ONE_SIZE = inputs.InputsUsed(inputs.DrawnSizes(1, 16, "run", 0), (inputs.ShapeUsed("TOKENS", (-1,), "drawn", (7,), (7,)),))
GIVEN = inputs.InputsUsed(None, (inputs.ShapeUsed("TOKENS", (-1,), "shape", (5,), (5,)), inputs.ShapeUsed("IMAGE", (3, -1), "data_file", (3, 1), (3, 9))))


@pytest.mark.parametrize(("lang", "used", "said"), [
    ("en", DRAWN, ["input TOKENS [-1]: [1] to [16], drawn for each session and step, 1 to 16 elements per variable dimension (no --shape given)"]),
    ("en", ONE_SIZE, ["input TOKENS [-1]: [7], one size for every request, drawn from 1 to 16 elements per variable dimension (no --shape "
                      "given): the dynamic batcher batches requests together only when each variable input has the same shape in all of "
                      "them, unless allow_ragged_batch is set"]),
    ("en", GIVEN, ["input TOKENS [-1]: [5], from --shape", "input IMAGE [3, -1]: [3, 1] to [3, 9], from the data file"]),
    ("zh", DRAWN, ["输入 TOKENS [-1]：[1] 到 [16]，每个会话的每一步各自抽取，每个可变维度 1 到 16 个元素（未给出 --shape）"]),
    ("zh", GIVEN, ["输入 TOKENS [-1]：[5]，来自 --shape", "输入 IMAGE [3, -1]：[3, 1] 到 [3, 9]，来自数据文件"]),
])
def test_the_summary_says_how_each_variable_input_was_sized_and_the_shapes_sent(lang, used, said):
    lines = text.summary_lines(counted_result(1, 1, [1], Rows().add("reference", pass_="a"), used), words(lang))
    assert lines[3 : 3 + len(said)] == said and lines[3 + len(said)] == ""
    assert text.shape_lines(used, words(lang)) == said


def test_the_json_inputs_say_the_drawn_sizes_and_the_shapes_sent():
    data = json.loads(report.dumps(counted_result(1, 1, [1], Rows().add("reference", pass_="a"), DRAWN)))["inputs"]
    assert data == {"source": "generated", "sessions": 1, "lengths": [1], "streams": [], "golden": False,
                    "sizes": {"low": 1, "high": 16, "per": "request"},
                    "shapes": [{"name": "TOKENS", "dims": [-1], "sized_by": "drawn", "smallest": [1], "largest": [16]},
                               {"name": "LABEL", "dims": [1], "sized_by": "model", "smallest": [1], "largest": [1]}]}
    assert json.loads(report.dumps(ONE))["inputs"]["sizes"] is None


def test_every_diagnosed_class_reads_in_every_language_in_the_sentence_the_report_and_the_junit_failure():
    from app.checker.engine.sequences import diagnosis

    source = {"conversation": 11, "session": 1, "corrid": "8", "role": "interleaved", "instance": "m_0_0", "slot": 0, "ended_before": False}
    base = {"conversation": 10, "session": 0, "corrid": "7", "role": "interleaved", "step": 1, "instance": "m_0_0", "slot": 0,
            "matched": 1, "compared": 3, "tried": 4}
    entries = [{**base, "class": "lost"}, {**base, "class": "stale", "form": "last", "source": {**source, "corrid": "7", "ended_before": True}},
               {**base, "class": "foreign", "form": "replace", "source": source}, {**base, "class": "foreign", "form": "mix", "source": source},
               {**base, "class": "foreign", "step": 0, "form": "replace", "source": {**source, "ended_before": True}},
               {**base, "class": "other", "matched": 0}]
    result = broken_result()
    p = diagnosis.Plan(result.judgement.verdict("interleaved", "all_instances"), [], broken_sessions=9)
    result.judgement = diagnosis.attach(result.judgement, {p.verdict.id: diagnosis.summary(p, entries, 30, "direct")})
    broken = result.judgement.verdict("interleaved", "all_instances")
    english = text.diagnosis_lines(broken, words("en"))
    assert english[0] == f"replayed alone, 6 of 9 broken sessions (at most {diagnosis.MAX_SESSIONS} per check) show:"
    assert english[1:] == [
        "session 1 (ID 7) from step 2: state lost, it answered as a sequence starting over there (1 of 3 replayed steps matched)",
        "session 1 (ID 7) from step 2: stale state, it carried on from session 2, an earlier sequence of its ID (1 of 3 replayed steps matched)",
        "session 1 (ID 7) from step 2: another session's state, it answered as if it continued session 2 (ID 8) (1 of 3 replayed steps matched)",
        "session 1 (ID 7) from step 2: its state was mixed with that of session 2 (ID 8) (1 of 3 replayed steps matched)",
        "session 1 (ID 7) from step 1: it began with the state session 2 (ID 8) left when it stopped (1 of 3 replayed steps matched)",
        "session 1 (ID 7) from step 2: no replayed explanation (state lost, stale, another session's) gave the answers it got",
    ]
    # a session with another's state (under direct) is the strongest evidence of them all
    assert result.judgement.diagnoses == [{"code": "foreign_state_direct", "checks": ["interleaved/all_instances"]}]
    failure = ET.fromstring(junit.to_xml(result, describe=lambda v: text.junit_message(v, words("en")))).find("testsuite")
    message = next(c for c in failure.findall("testcase") if c.get("name") == "interleaved[all_instances]").find("failure").get("message")
    assert english[0] in message and english[-1] in message
    assert json.loads(report.dumps(result))["checks"][1]["values"]["diagnosis"]["sessions"][2]["source"]["session"] == 1
    for lang in languages():
        lines = text.diagnosis_lines(broken, words(lang))
        assert len(lines) == len(english) and all(reads_in(lang, line, en) for line, en in zip(lines, english, strict=True)), lang
        for code in diagnosis.ADVICE_CODES:
            assert reads_in(lang, words(lang)(text.DIAGNOSES[code]), text.DIAGNOSES[code]), (lang, code)
