"""Streaming (decoupled) models on the real server: every request's stream alone, then the same
requests staggered so they share executions in flight, compared response by response; a broken
stream is diagnosed (whose state it continued, ended early, never ended) and exported as a reproducer."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from app.checker import figures as charts
from app.checker import words as text
from app.checker.engine import CheckOptions, check_stream_timeline, failing_input_data, junit_xml, run
from app.checker.engine import target as targets
from app.checker.engine.facts import ModelFacts
from app.checker.engine.streaming import faults
from app.checker.words import error as problem_text
from app.i18n import SOURCE_LANGUAGE, languages, words
from app.lab.problems import LabError
from tests.checker.conftest import as_json, verdicts, zoo_files, zoo_fixture
from tests.i18n.text_checks import reads_in
from tests.server_calls import ask

zoo = zoo_fixture("zoo_stream_corrid", "zoo_stream_by_row", "zoo_stream_ends_early", "zoo_stream_stalls")
REQUESTS = 12


def check(zoo, name: str, **options):
    # a stream check takes no steps: the model decides how many responses each request gets
    return zoo.check(name, sessions=options.pop("sessions", REQUESTS), steps=None, **options)


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def drawn_streams(result):
    """The stream timeline's rows, checked against the streams they come from: each stream's send
    and every response at the time the client heard it, the final flag on the last response of an
    ended stream; and the page's figure draws them (not the empty figure of an untraced check)."""
    rows = check_stream_timeline(result)
    measured = result.streams
    for s in [*measured.alone["a"], *measured.alone["b"], *measured.staggered]:
        mine = rows[(rows["phase"] == s.phase) & (rows["pass"] == s.pass_) & (rows["request"] == s.request)]
        assert list(mine.loc[mine["event"] == "sent", "time_s"]) == [s.sent_s]
        heard = mine[mine["event"] == "response"]
        assert list(heard["time_s"]) == s.times and list(heard["response"]) == list(range(len(s.times)))
        assert list(heard["final"]) == [s.ended and r == len(s.times) - 1 for r in range(len(s.times))]
        assert (mine["event"] == "given_up").sum() == bool(s.given_up)
    figure = charts.timeline(result, words("en"))
    assert figure.layout.title.text.startswith("Response streams over time")
    assert sum(len(trace.x) for trace in figure.data if trace.mode == "markers" and trace.x is not None) >= (rows["event"] == "response").sum()
    return rows


def test_a_generator_keyed_by_corrid_streams_alike_alone_and_staggered_and_its_requests_did_share_executions(zoo):
    result = check(zoo, "zoo_stream_corrid")
    assert result.exit_code == 0, result.verdicts
    assert verdicts(result) == {"stream_reference/alone": "held", "stream_staggered/all_instances": "held",
                                "stream_cancelled/all_instances": "held", "stream_disconnected/all_instances": "held",
                                "stream_golden/alone": "skipped", "stream_golden/all_instances": "skipped",
                                "stream_finite/alone": "skipped", "stream_finite/all_instances": "skipped"}
    staggered = result.judgement.verdict("stream_staggered").values
    assert staggered["shared"] >= REQUESTS // 2  # most streams generated beside another: the run tested in-flight batching
    lone = [len(s.responses) for s in result.streams.alone["a"]]
    assert max(lone) > 1 and all(s.ended for s in result.streams.staggered)
    report = as_json(result)
    assert report["outcome"] == "held" and report["streams"]["requests"] == REQUESTS
    # each request alone twice, then staggered; then the client fault: its victim and neighbours
    assert report["requests"] == result.requests == 3 * REQUESTS + len(faults.FAULTS) * (1 + faults.NEIGHBOURS)
    assert [c["judged_by"] for c in report["checks"]][:2] == ["reference", "reference"]
    assert failing_input_data(result) is None
    rows = drawn_streams(result)
    assert not rows["diverged"].any() and not rows["event"].isin(["given_up", "error"]).any()
    # alone, each request is sent only after the one before has ended; staggered, later ones are sent while earlier ones stream
    lone = rows[(rows["phase"] == "stream_alone") & (rows["pass"] == "a")]
    assert (lone.groupby("request")["time_s"].min().diff().dropna() > 0).all()
    ends = rows[rows["phase"] == "staggered"].groupby("request")["time_s"].agg(["min", "max"])
    assert sum(ends["min"].iloc[k + 1] < ends["max"].iloc[k] for k in range(len(ends) - 1)) >= REQUESTS // 2
    assert "responses that differed from their lone stream: 0" in charts.timeline_summary(result, words("en"))


def test_a_generator_keyed_by_batch_row_breaks_when_staggered_and_names_whose_state_a_stream_continued(zoo):
    result = check(zoo, "zoo_stream_by_row")
    assert result.exit_code == 1
    assert verdicts(result)["stream_reference/alone"] == "held"  # alone, the row is always 0: nothing shows
    broken = result.judgement.verdict("stream_staggered")
    assert broken.verdict == "broken"
    entries = broken.values["stream_diagnosis"]["streams"]
    lone = result.streams.alone["a"]
    staggered = {s.request: s for s in result.streams.staggered}
    named = [(e, o) for e in entries for o in e.get("origins", []) if "request" in o and o["request"] != e["request"]]
    named += [(e, {"response": e["step"], **e["source"]}) for e in entries if e["class"] == "foreign"]
    assert named, entries  # some broken stream carried on with another request's lone stream
    for entry, origin in named:  # and the claim holds: that response IS the other request's lone response at that step
        got = staggered[entry["request"]].responses[origin["response"]]
        assert same(got, lone[origin["request"]].responses[origin["step"]])
        assert not same(got, lone[entry["request"]].responses[origin["response"]]) if origin["response"] < len(
            lone[entry["request"]].responses) else True
    codes = {d["code"] for d in result.judgement.diagnoses}
    assert codes & {"stream_foreign_state", "stream_lost_state"}
    sentence = text.verdict_sentence(broken, words("en"))
    assert "request" in sentence and ("carried on with request" in sentence or "state lost" in sentence)
    # the figure marks exactly the staggered responses the judgement found beyond tolerance
    rows = drawn_streams(result)
    wrong = result.judgement.broken_steps
    beyond = wrong[(wrong["check"] == "stream_staggered") & (wrong["difference"] > wrong["tolerance"])]
    heard = {(s.request, r) for s in result.streams.staggered for r in range(len(s.times))}
    expected = {(int(c), int(s)) for c, s in zip(beyond["conversation"], beyond["step"], strict=True)} & heard
    marked = rows[rows["diverged"]]
    assert expected and set(marked["phase"]) == {"staggered"}
    assert set(zip(marked["request"], marked["response"], strict=True)) == expected


def test_a_broken_streams_reproducer_is_perf_analyzer_input_data_whose_golden_streams_the_sound_model_matches(zoo):
    broken = check(zoo, "zoo_stream_by_row")
    document = failing_input_data(broken)
    assert document is not None and len(document["data"]) == len(document["validation_data"]) >= 2
    assert set(document["data"][0]) == {"PROMPT", "LENGTH"} and len(document["data"][0]["PROMPT"]) == 4
    token = document["validation_data"][0]["TOKEN"]
    assert token["shape"][1:] == [1] and len(token["content"]) == token["shape"][0]
    # the lone streams are the same model's answers: the sound deployment matches them, alone and staggered
    replay = run.run_check(targets.on_server(zoo.server, "zoo_stream_corrid", files=zoo_files("zoo_stream_corrid")),
                              CheckOptions(input_data=json.loads(json.dumps(document))))
    assert verdicts(replay)["stream_golden/alone"] == "held" and verdicts(replay)["stream_golden/all_instances"] == "held"
    assert replay.streams.requests == len(document["data"])
    # a golden stream one token off breaks the golden check at that request and response
    document["validation_data"][0]["TOKEN"]["content"][0] = (token["content"][0] + 1) % 64
    wrong = run.run_check(targets.on_server(zoo.server, "zoo_stream_corrid", files=zoo_files("zoo_stream_corrid")),
                             CheckOptions(input_data=document))
    golden = wrong.judgement.verdict("stream_golden", "alone")
    assert golden.verdict == "broken" and golden.values["first"]["session"] == 0 and golden.values["first"]["step"] == 0


def test_the_junit_xml_has_a_case_per_stream_check_and_a_failure_typed_by_the_diagnosis(zoo):
    result = check(zoo, "zoo_stream_by_row")
    suite = ET.fromstring(junit_xml(result, describe=lambda v: text.junit_message(v, words("en")))).find("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"stream_reference[alone]", "stream_staggered[all_instances]", "stream_cancelled[all_instances]",
                          "stream_disconnected[all_instances]", "stream_golden[alone]", "stream_golden[all_instances]", "stream_finite[alone]",
                          "stream_finite[all_instances]"}
    failure = cases["stream_staggered[all_instances]"].find("failure")
    # the client fault's neighbours share executions with its victim too: a row-keyed model may mix them as well
    faults = sum(result.judgement.verdict(f).verdict == "broken" for f in ("stream_cancelled", "stream_disconnected"))
    assert failure is not None and failure.get("type").startswith("stream_") and suite.get("failures") == str(1 + faults)


def test_a_stream_that_ends_early_when_sharing_executions_is_diagnosed_as_ended_early(zoo):
    result = check(zoo, "zoo_stream_ends_early")
    assert result.exit_code == 1 and verdicts(result)["stream_reference/alone"] == "held"
    entries = result.judgement.verdict("stream_staggered").values["stream_diagnosis"]["streams"]
    early = [e for e in entries if e["class"] == "ended_early"]
    assert early and all(e["responses"] < e["expected"] for e in early)
    assert "stream_ended_early" in {d["code"] for d in result.judgement.diagnoses}


def test_a_stream_that_never_ends_is_given_up_after_the_idle_limit_and_diagnosed(zoo):
    result = check(zoo, "zoo_stream_stalls", sessions=6)
    assert result.exit_code == 1
    entries = result.judgement.verdict("stream_staggered").values["stream_diagnosis"]["streams"]
    never = [e for e in entries if e["class"] == "never_ended"]
    assert never and all(e["given_up"] == "idle" for e in never)
    assert result.judgement.verdict("stream_staggered").reason == "stream_never_ended"
    assert "never ended" in text.verdict_sentence(result.judgement.verdict("stream_staggered"), words("en"))
    rows = drawn_streams(result)
    given_up = rows[rows["event"] == "given_up"]
    assert set(given_up["request"]) >= {e["request"] for e in never}
    assert "streams given up or failed: 0." not in charts.timeline_summary(result, words("en"))


def inferences(server, name: str) -> int:
    return ask(server, "get_inference_statistics", name)["model_stats"][0]["inference_count"]


@pytest.mark.parametrize("options, codes", [
    (CheckOptions(steps=4), ["check_stream_steps"]),
    (CheckOptions(think_ms=50.0), ["check_stream_think"]),  # an iterative sequence: one request, no pause between requests
    (CheckOptions(steps=4, think_ms=0.0), ["check_stream_steps", "check_stream_think"]),  # stated, even as 0
], ids=["steps", "think", "both"])
def test_steps_and_a_think_time_are_refused_for_a_decoupled_iterative_model_before_a_request_is_sent(zoo, options, codes):
    name = "zoo_stream_corrid"
    before = inferences(zoo.server, name)
    with pytest.raises(LabError) as raised:
        run.run_check(targets.on_server(zoo.server, name, files=zoo_files(name)), options)
    assert [p.code for p in raised.value.problems] == codes
    english = problem_text(raised.value, words(SOURCE_LANGUAGE))
    assert f"'{name}' is decoupled" in english and ("--steps" in english) == ("check_stream_steps" in codes)
    assert ("--think-ms" in english) == ("check_stream_think" in codes)
    for lang in languages():
        said = problem_text(raised.value, words(lang))
        assert name in said and reads_in(lang, said, english), lang
    assert inferences(zoo.server, name) == before


def test_the_think_time_left_unstated_is_the_default_for_the_review_and_no_refusal(zoo):
    result = check(zoo, "zoo_stream_corrid")
    assert result.options.think_ms is None and result.options.expectations().think_ms == result.options.think_ms_used > 0


@pytest.mark.parametrize("sequence, fine", [
    ({"oldest": {"max_candidate_sequences": 4}}, True),  # clients send several requests per sequence: the review reads it
    ({"oldest": {"max_candidate_sequences": 4}, "iterative_sequence": True}, False),  # one request per sequence
    (None, False),  # no sequence at all
], ids=["sequence", "iterative", "none"])
def test_a_think_time_is_taken_for_a_decoupled_model_only_where_its_clients_send_several_requests_per_sequence(sequence, fine):
    config = {"name": "m", "max_batch_size": 4, "model_transaction_policy": {"decoupled": True}}
    if sequence is not None:
        config["sequence_batching"] = sequence
    facts = ModelFacts.read(config, {})
    problems = run.stream_option_problems(facts, CheckOptions(think_ms=50.0))
    assert [p.code for p in problems] == ([] if fine else ["check_stream_think"])
    assert run.stream_option_problems(facts, CheckOptions()) == []
    assert [p.code for p in run.stream_option_problems(facts, CheckOptions(steps=3))] == ["check_stream_steps"]
