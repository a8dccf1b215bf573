"""Client faults on the real server: the lab's own generator, its request cancelled mid-stream beside
three neighbours, and then its client vanishing mid-stream (a reset connection, no cancel). The sound
deployment (honour_cancel true) frees the request's state cell and its gauge falls back; the same
model with cancellation handling switched off (honour_cancel false) is caught leaking the cell, the
fault named. Every report validates against the shipped schema."""
from __future__ import annotations

import pytest

from app.checker import words as check_words
from app.checker.engine import CheckOptions, failing_input_data, report_schema, run
from app.checker.engine import target as targets
from app.generation import runs
from app.generation.exercises.cancelled_generation.engine import SETUP
from app.i18n import languages, words
from tests.checker.conftest import as_json, unload
from tests.i18n.text_checks import reads_in

GAUGE = "gen_state_cells"  # the generator's own gauge of the state cells it holds (model_repository/gen_inflight)


@pytest.fixture(scope="module")
def generators(lab_server):
    names = {honour: runs.deploy(lab_server, SETUP, "inflight", 20.0, honour) for honour in (True, False)}
    try:
        yield names
    finally:
        unload(lab_server, list(names.values()))


def check(server, name: str, **options):
    return run.run_check(targets.on_server(server, name), CheckOptions(sessions=6, state_metric=GAUGE, **options))


FAULT_CHECKS = ("stream_cancelled", "stream_disconnected")


def test_the_sound_generator_frees_a_cancelled_or_abandoned_requests_state_and_its_neighbours_stream_as_alone(lab_server, generators):
    result = check(lab_server, generators[True])
    for name, fault in zip(FAULT_CHECKS, ("cancel_mid_stream", "disconnect_mid_stream"), strict=True):
        v = result.judgement.verdict(name, "all_instances")
        assert v.verdict == "held", v
        w = v.values["witness"]
        assert w["fault"] == fault and w["exercised"] and w["cancelled_after"] >= 1 and w["neighbours"] == 3
        assert w["state_after"] <= w["state_before"] and w["pending_after"] == 0 and w["freed"] in ("at_once", "later")
    assert result.exit_code == 0 and result.outcome == "held"
    data = as_json(result)
    report_schema.validate(data)
    # the vanished client's stream: one response, then no end and no cancel of its own
    victim = next(f for f in data["streams"]["faults"] if f["fault"] == "disconnect_mid_stream")["victim"]
    assert victim["given_up"] == "disconnected" and victim["responses"] >= 1 and not victim["ended"]


def test_the_generator_with_cancellation_handling_off_is_caught_leaking_state_the_fault_named(lab_server, generators):
    result = check(lab_server, generators[False])
    v = result.judgement.verdict("stream_cancelled", "all_instances")
    assert (v.verdict, v.reason) == ("broken", "fault_leaks_state"), v
    w = v.values["witness"]
    assert w["fault"] == "cancel_mid_stream" and w["state_after"] > w["state_before"] and w["freed"] == "never"
    assert result.exit_code == 1
    data = as_json(result)
    report_schema.validate(data)
    # the reproducer: the victim and its neighbours as perf_analyzer input; the report says when the cancel came
    exported = failing_input_data(result)
    assert exported is not None and len(exported["data"]) == 1 + w["neighbours"]  # both faults played the same requests
    assert data["streams"]["fault"]["victim"]["given_up"] == "cancelled" and len(data["streams"]["fault"]["neighbours"]) == 3
    english = check_words.DIAGNOSES["fault_leaks_state"]
    assert "the failing check names the fault" in words("en")(english)
    # the client that vanished leaks the cell as well, its own check broken and named in the diagnosis
    gone = result.judgement.verdict("stream_disconnected", "all_instances")
    assert (gone.verdict, gone.reason, gone.values["witness"]["fault"]) == ("broken", "fault_leaks_state", "disconnect_mid_stream")
    assert {"code": "fault_leaks_state", "checks": ["stream_cancelled/all_instances", "stream_disconnected/all_instances"]} \
        in result.judgement.diagnoses
    assert "lost its client" in check_words.verdict_sentence(gone, words("en"))
    sentence = check_words.verdict_sentence(v, words("en"))
    assert f"the model's gauge {GAUGE} 0 before, 1 after" in sentence and "still not settled" in sentence
    for lang in languages():
        assert reads_in(lang, check_words.verdict_sentence(v, words(lang)), sentence), lang
    # --no-faults leaves the fault out: nothing to catch the leak
    quiet = check(lab_server, generators[False], faults=False)
    assert all(x.check not in FAULT_CHECKS for x in quiet.verdicts) and quiet.exit_code == 0
