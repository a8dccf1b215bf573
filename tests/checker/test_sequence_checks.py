"""Every sequence-batcher check, holding on a sound zoo model and breaking on one built to break it,
on the real server. Each model is checked once; the tests read the cached result."""
from __future__ import annotations

from tests.checker.conftest import ABANDON_ROUND, check_copies_gone, verdicts, zoo_fixture

zoo = zoo_fixture("zoo_corrid_oldest", "zoo_no_reset", "zoo_slot_no_reset", "zoo_slot_oldest", "zoo_direct_no_ready",
                  "zoo_evicting_cache", "simple_sequence", "simple_sequence_accumulate")
SEQUENCE_IDS = [f"{c}/{v}" for c in ("interleaved", "id_reuse", "abandoned", "cancelled") for v in ("all_instances", "one_instance")]
SLOW_CLIENT = {"slow_client/all_instances": "held"}  # the client fault: on all instances only (test_slow_client.py)
RUNS = ("alone", "all_instances", "one_instance")
NO_GOLDEN = {f"golden/{v}": "skipped" for v in RUNS}  # no data file: no golden outputs to compare with


def test_a_sound_model_holds_every_check_on_all_instances_and_on_a_one_instance_copy(zoo):
    result = zoo.check("zoo_corrid_oldest")
    found = verdicts(result)
    # The abandon round has its witness only when a later session lands on the reaped slot, which short
    # sessions do not always wait for (seen once in two whole-suite runs): then it is not exercised,
    # never held without its evidence and never broken.
    aborts = {i: found.pop(i) for i in SEQUENCE_IDS if i.startswith(ABANDON_ROUND)}
    assert set(aborts.values()) <= {"held", "not_exercised"}, aborts
    assert found == {"reference/alone": "held", **{i: "held" for i in SEQUENCE_IDS if i not in aborts}, **NO_GOLDEN,
                     **{f"finite/{v}": "held" for v in RUNS}, **SLOW_CLIENT}
    assert result.exit_code == (3 if "not_exercised" in aborts.values() else 0)
    phases = result.tables.phases
    copy = phases[phases["variant"] == "one_instance"]["model"].unique()
    assert len(copy) == 1 and copy[0].startswith("zoo_corrid_oldest__check1_")
    assert check_copies_gone(zoo.server) == []  # unloaded afterwards
    for variant in ("all_instances", "one_instance"):  # the given-up request did reach the server (its trace record)
        assert result.judgement.verdict("cancelled", variant).values["cancel_reached"] is True


def test_interleaving_fills_every_slot_and_reaches_the_backlog(zoo):
    result = zoo.check("zoo_corrid_oldest")
    for variant, capacity in (("all_instances", 8), ("one_instance", 4)):
        v = result.judgement.verdict("interleaved", variant)
        assert v.values["capacity"] == capacity and v.values["in_flight"] > capacity and v.values["overflow"] is True
        # the backlog as Triton counted it: requests pending while every slot was held (backlog_gate.py)
        seen = v.values["witness"]
        assert seen["source"] == "metrics" and seen["pending_peak"] >= 1 and seen["max_open"] > capacity, seen
    # the log placed sequences on both instances of the model, and only one on the copy
    steps = result.tables.steps
    interleaved = steps[steps["phase"] == "interleaved"]
    assert interleaved.groupby("variant")["instance"].nunique().to_dict() == {"all_instances": 2, "one_instance": 1}


def test_the_float_output_is_judged_within_a_tolerance_derived_from_its_noise(zoo):
    result = zoo.check("zoo_corrid_oldest")
    tolerances = {t.output: t for t in result.judgement.tolerances}
    assert tolerances["OUTPUT"].source == "exact" and tolerances["OUTPUT"].noise == 0.0
    score = tolerances["SCORE"]
    assert score.source == "derived" and 0 < score.noise < score.value  # the model adds noise of 1e-6
    held = result.judgement.verdict("interleaved", "all_instances")
    assert held.values["largest_output"] == "SCORE" and 0 < held.values["largest_difference"] <= score.value


def test_a_tolerance_below_the_noise_breaks_the_reference(zoo):
    result = zoo.check("zoo_corrid_oldest", key="tight", tolerance=0.0, only=("reference",), one_instance=False)
    reference = result.judgement.verdict("reference")
    assert (reference.verdict, reference.reason) == ("broken", "noise_above_tolerance")
    assert reference.values["first"]["output"] == "SCORE" and result.exit_code == 1


def test_a_model_that_never_resets_on_start_is_caught_by_id_reuse_on_several_instances(zoo):
    # Without the client faults: the slow client's restarted session lands on either of the two instances,
    # whose states are their own, so whether it carries the reaped one's is chance (zoo_reaped_no_reset has one).
    result = zoo.check("zoo_no_reset", one_instance=False, faults=False)
    v = verdicts(result)
    assert v["reference/alone"] == "held" and v["interleaved/all_instances"] == "held"
    broken = result.judgement.verdict("id_reuse", "all_instances")
    assert (broken.verdict, broken.reason) == ("broken", "inherits_after_end")
    assert broken.values["first"]["role"] in ("reuse", "chain")
    # The chain (one more lone session than instances) puts some sequence of an ID where an earlier one ran.
    assert broken.values["same_instance"] >= 1
    # Replayed alone, each broken session is the continuation of an earlier sequence of its ID: stale state.
    diagnosis = broken.values["diagnosis"]
    assert diagnosis["diagnosed"] >= 1 and {e["class"] for e in diagnosis["sessions"]} == {"stale"}
    for entry in diagnosis["sessions"]:
        source = entry["source"]
        assert source["corrid"] == entry["corrid"] and source["ended_before"] is True and entry["matched"] >= 1
        assert source["instance"] == entry["instance"]  # the state it carried was left on its instance
    assert result.judgement.diagnoses == [{"code": "stale_state", "checks": ["id_reuse/all_instances"]}]


def test_state_left_by_an_abandoned_or_cancelled_session_reaches_the_next_on_its_slot(zoo):
    result = zoo.check("zoo_slot_no_reset", faults=False)  # the slow client's restart takes whichever slot is free
    v = verdicts(result)
    assert v["interleaved/all_instances"] == "held" and v["id_reuse/all_instances"] == "held"
    for check in ("abandoned", "cancelled"):
        broken = result.judgement.verdict(check, "all_instances")
        assert (broken.verdict, broken.reason) == ("broken", "aborted_pollutes")
        assert broken.values["first"]["role"] == "follower" and broken.values["next_on_slot"] is True
    assert result.judgement.verdict("cancelled", "all_instances").values["cancel_outcome"] in ("gave_up", "served")
    # The follower began with the victim's state: another session's, left on the slot by one that had stopped.
    for check, victim in (("abandoned", "victim_abandon"), ("cancelled", "victim_cancel")):
        diagnosis = result.judgement.verdict(check, "all_instances").values["diagnosis"]
        followers = [e for e in diagnosis["sessions"] if e["role"] == "follower"]
        assert followers, check
        for entry in followers:
            assert (entry["class"], entry["step"], entry["source"]["role"], entry["source"]["ended_before"]) == ("foreign", 0, victim, True)
            assert (entry["source"]["instance"], entry["source"]["slot"]) == (entry["instance"], entry["slot"])  # its slot
        assert diagnosis["advice"] == "stale_state"  # START did not reset it
    assert result.judgement.diagnoses == [{"code": "stale_state", "checks": ["abandoned/all_instances", "cancelled/all_instances"]}]
    skipped = result.judgement.verdict("interleaved", "one_instance")
    assert (skipped.verdict, skipped.reason) == ("skipped", "single_instance")  # it has one instance already


def test_state_keyed_by_batch_row_under_oldest_breaks_interleaving(zoo):
    result = zoo.check("zoo_slot_oldest", one_instance=False)
    assert result.judgement.verdict("reference").verdict == "held"  # alone, every request is row 0 of its own batch
    broken = result.judgement.verdict("interleaved", "all_instances")
    assert (broken.verdict, broken.reason) == ("broken", "sessions_mix")
    first = broken.values["first"]
    assert first["step"] >= 1 and first["difference"] > 0 and first["instance"].startswith("zoo_slot_oldest_0_")
    assert first["execution"]["batch"] >= 1  # the trace was read
    # Replayed alone, a broken session's answer is another session's history continued with its own step:
    # the session that had last used its batch row, on the same instance (a row is a place in one instance's batch).
    diagnosis = broken.values["diagnosis"]
    foreign = [e for e in diagnosis["sessions"] if e["class"] == "foreign"]
    assert foreign and diagnosis["advice"] == "foreign_state_oldest"
    steps = result.tables.steps
    for entry in foreign:
        source = entry["source"]
        assert source["corrid"] != entry["corrid"] and source["instance"] == entry["instance"] is not None
        theirs = steps[steps["conversation"] == source["conversation"]]
        mine = steps[steps["conversation"] == entry["conversation"]]
        diverged = mine[mine["step"] == entry["step"]].iloc[0]
        # Active in the same window. Causality is what is certain: the source wrote the row's state
        # before this step ran, so it was sent before this step's reply came back (a session sent a
        # few ms later can still run first on a busy machine, so not before this step was sent).
        assert theirs["t_send"].min() < diverged["t_recv"] and diverged["t_send"] < theirs["t_send"].max() + 1.0
    assert result.judgement.diagnoses[0] == {"code": "foreign_state_oldest", "checks": ["interleaved/all_instances"]}


def test_direct_that_ignores_ready_folds_padding_rows_into_the_state(zoo):
    """Under direct, a batch has a row for every slot up to the highest ready one; the rows of empty
    slots hold memory Triton allocated without clearing it (InferenceRequest::CopyAsNull, r24.10).
    A model that adds them to its state as if READY were 1 gives a session other answers once it
    shares an execution with padding: alone, a session runs in slot 0 of a batch of one and never
    sees padding. What that memory held is not defined, so the diagnosis is not either: the check's
    own (sessions_mix), or foreign_state_direct when a replay of another session's steps happens to
    give the same answers (seen once on a loaded machine); both say the state crossed sessions."""
    result = zoo.check("zoo_direct_no_ready", one_instance=False)
    assert result.judgement.verdict("reference").verdict == "held"
    broken = result.judgement.verdict("interleaved", "all_instances")
    assert (broken.verdict, broken.reason) == ("broken", "sessions_mix")
    assert broken.values["first"]["step"] >= 1 and broken.values["first"]["difference"] > 0
    assert result.judgement.diagnoses[0]["code"] in {"sessions_mix", "foreign_state_direct"} and result.exit_code == 1


def test_a_state_cache_smaller_than_the_slots_loses_sessions_state_and_says_so(zoo):
    """State keyed by correlation ID in a cache of 2 per instance, under oldest with 4 candidate
    sequences each: interleaved sessions evict each other. Replayed alone, a session that starts
    over at the step where it went wrong gives the answer it got."""
    result = zoo.check("zoo_evicting_cache", only=("interleaved",), one_instance=False)
    assert result.judgement.verdict("reference").verdict == "held"  # alone, one sequence fits the cache
    broken = result.judgement.verdict("interleaved", "all_instances")
    assert (broken.verdict, broken.reason) == ("broken", "sessions_mix")  # the check's own reason stays
    diagnosis = broken.values["diagnosis"]
    assert diagnosis["diagnosed"] == min(diagnosis["broken_sessions"], diagnosis["caps"]["sessions"])
    assert {e["class"] for e in diagnosis["sessions"]} == {"lost"}
    assert all(e["step"] >= 1 and e["matched"] >= 1 and "source" not in e for e in diagnosis["sessions"])
    assert 0 < diagnosis["replayed"] <= diagnosis["caps"]["requests"]
    assert result.judgement.diagnoses == [{"code": "lost_state", "checks": ["interleaved/all_instances"]}]


def test_the_diagnosis_reaches_the_words_the_report_and_the_junit_failure(zoo):
    import xml.etree.ElementTree as ET

    from app.checker import words as check_text
    from app.checker.engine.reports import junit
    from app.checker.page import report as check_report
    from app.i18n import languages, words
    from tests.checker.conftest import as_json

    result = zoo.check("zoo_evicting_cache", only=("interleaved",), one_instance=False)
    broken = result.judgement.verdict("interleaved", "all_instances")
    entry = broken.values["diagnosis"]["sessions"][0]
    en = words("en")
    sentence = check_text.verdict_sentence(broken, en)
    assert f"session {entry['session'] + 1} (ID {entry['corrid']}) from step {entry['step'] + 1}: state lost" in sentence
    assert "instances × slots" in en(check_text.DIAGNOSES["lost_state"])
    assert "state lost" in "\n".join(check_text.summary_lines(result, en))
    checks = {(c["check"], c["variant"]): c for c in as_json(result)["checks"]}
    assert checks[("interleaved", "all_instances")]["values"]["diagnosis"]["sessions"][0]["class"] == "lost"
    assert as_json(result)["diagnoses"] == [{"code": "lost_state", "checks": ["interleaved/all_instances"]}]
    suite = ET.fromstring(junit.to_xml(result, describe=lambda v: check_text.junit_message(v, en))).find("testsuite")
    failure = next(c for c in suite.findall("testcase") if c.get("name") == "interleaved[all_instances]").find("failure")
    assert "state lost" in failure.get("message") and '"class": "lost"' in failure.text
    for lang in languages():
        page = check_report.diagnosis_markdown(result, words(lang))
        assert page.count("\n- ") == len(broken.values["diagnosis"]["sessions"]), lang
    assert "state lost" in check_report.diagnosis_markdown(result, en)


def test_the_failing_sessions_export_as_perf_analyzer_input_data_with_their_references(zoo):
    import json

    import numpy as np

    from app.checker.engine import input_data, inputs
    from app.checker.engine.reports import export

    result = zoo.check("zoo_no_reset", one_instance=False, faults=False)
    failing = export.failing_sessions(result)
    assert failing  # id_reuse broke
    document = json.loads(json.dumps(export.input_data(result)))  # plain JSON
    assert set(document) == {"data", "validation_data"}
    data, validation = document["data"], document["validation_data"]
    assert len(data) == len(validation) == len(failing)
    assert all(isinstance(sequence, list) and all(isinstance(step, dict) for step in sequence) for sequence in data)
    assert [len(s) for s in data] == [len(s) for s in validation] == [result.tables.lengths[s] for s in failing]
    assert all(set(step) == {"INPUT"} for sequence in data for step in sequence)  # the model's inputs, flat lists
    assert all(set(step) == {"OUTPUT"} for sequence in validation for step in sequence)
    facts = result.facts
    sequences = input_data.sequences(document, facts, inputs.concrete_shapes(facts, {}))
    for sequence, session in zip(sequences, failing, strict=True):
        for k, step in enumerate(sequence):
            np.testing.assert_array_equal(step["INPUT"], result.source.arrays(session, k)["INPUT"][0])  # no batch dimension
    outputs = {s.name: s for s in facts.outputs}
    for sequence, session in zip(validation, failing, strict=True):
        for k, step in enumerate(sequence):
            expected = result.tables.references[(session, k)]["OUTPUT"][0]
            np.testing.assert_array_equal(input_data.tensor(step["OUTPUT"], outputs["OUTPUT"], outputs["OUTPUT"].dims), expected)
    assert export.input_data(zoo.check("zoo_corrid_oldest")) is None  # nothing failed, nothing to write


def test_the_checker_replays_its_own_export_and_it_breaks_the_same_way(zoo):
    """The reproducer read back as a data file: its sessions are the failing ones and its golden
    outputs their lone references. The model never resets on START, so the chain of lone sequences
    on one reused ID (one more than there are instances) lands a sequence where an earlier one of
    its ID ran, whatever the timing: id_reuse breaks again, stale again, and golden breaks under
    that traffic while the lone runs match the file."""
    import json

    from app.checker.engine.reports import export

    first = zoo.check("zoo_no_reset", one_instance=False, faults=False)
    document = json.loads(json.dumps(export.input_data(first)))
    replay = zoo.check("zoo_no_reset", key="replayed export", one_instance=False, input_data=document, steps=None, faults=False)
    assert replay.tables.input_source == "data_file" and replay.tables.golden
    assert replay.tables.lengths == [len(stream) for stream in document["data"]]  # every step played, none wrapped
    v = verdicts(replay)
    assert v["reference/alone"] == "held" and v["golden/alone"] == "held"  # alone, the model answers as the file says
    broken = replay.judgement.verdict("id_reuse", "all_instances")
    assert broken.verdict == "broken" and v["golden/all_instances"] == "broken"
    assert {d["code"] for d in first.judgement.diagnoses} == {"stale_state"}
    assert {d["code"] for d in replay.judgement.diagnoses} == {"stale_state", "differs_from_golden"}
    assert replay.exit_code == 1


def test_nvidias_simple_sequence_behaviour_passes(zoo):
    for name in ("simple_sequence", "simple_sequence_accumulate"):
        result = zoo.check(name)
        got = verdicts(result)
        # short test sessions: the holders may end before the reaper frees the abandoned slot (not exercised, never held)
        aborts = {k: got[k] for k in ("abandoned/all_instances", "cancelled/all_instances")}
        assert set(aborts.values()) <= {"held", "not_exercised"}, (name, aborts)
        assert {k: x for k, x in got.items() if not k.endswith("one_instance")} == {
            "reference/alone": "held", "interleaved/all_instances": "held", "id_reuse/all_instances": "held",
            **aborts, **SLOW_CLIENT, "golden/alone": "skipped",
            "golden/all_instances": "skipped", "finite/alone": "skipped", "finite/all_instances": "skipped"}, name  # INT32 only
        assert result.facts.idle_timeout_us == 1_000_000  # unset in NVIDIA's config: Triton's 1 s default
    simple = zoo.check("simple_sequence")
    assert simple.facts.capacity == 8 and simple.judgement.verdict("interleaved", "one_instance").reason == "single_instance"


def test_the_report_carries_the_config_review_of_the_config_the_server_runs(zoo):
    from tests.checker.conftest import as_json

    simple = {f["code"]: f for f in as_json(zoo.check("simple_sequence"))["review"]}
    assert simple["idle_timeout_default"]["field"] == "sequence_batching.max_sequence_idle_microseconds"  # NVIDIA's leaves it at 1 s
    oldest = {f["code"] for f in as_json(zoo.check("zoo_corrid_oldest"))["review"]}
    assert "oldest_without_corrid" in oldest and "oldest_without_corrid" not in simple  # it reads request.correlation_id()


def test_the_client_examples_values_come_back_from_simple_sequence(zoo):
    """The values of Triton's simple_http_sequence_sync_infer_client example: [0, 11, 7, 5, 3, 2, 0, 1] gives
    [1, 11, 7, 5, 3, 2, 0, 1] (the first has START added)."""
    import numpy as np
    import tritonclient.http as http

    with zoo.server.client() as client:
        values = [0, 11, 7, 5, 3, 2, 0, 1]
        got = []
        for k, value in enumerate(values):
            tensor = http.InferInput("INPUT", [1, 1], "INT32")
            tensor.set_data_from_numpy(np.array([[value]], dtype=np.int32))
            reply = client.infer("simple_sequence", [tensor], sequence_id=1000, sequence_start=k == 0, sequence_end=k == len(values) - 1)
            got.append(int(reply.as_numpy("OUTPUT")[0][0]))
        assert got == [1, 11, 7, 5, 3, 2, 0, 1]


def test_short_holders_keep_their_slots_until_the_followers_take_the_reaped_ones(zoo):
    """Four-step sessions and a 1 s idle timeout: holders pacing at a quarter of the timeout ended before
    the reaper freed the victims' slots, so the followers took the holders' slots and the round was not
    exercised (3 of 3 runs under load); spread over the time to the followers' entry, they hold."""
    result = zoo.check("zoo_corrid_oldest", key="short", steps=4, only=("abandoned", "cancelled"), one_instance=False)
    for name in ("abandoned", "cancelled"):
        v = result.judgement.verdict(name, "all_instances")
        assert v.verdict == "held" and v.values["witness"]["next_on_slot"] is True, v
