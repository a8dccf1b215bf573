"""What the checker refuses, and what it skips, each with one clear message and nothing left behind:
unknown and failing models (and a decoupled one, checked by its response streams), shapes and data files that do not match the model,
servers where it may not load a copy, and a server that goes away mid-check; and the sizes it
draws itself for a variable input that no --shape sizes."""
from __future__ import annotations

import json

import pytest

from app.checker import words as text
from app.checker.engine import CheckOptions, parse_shape, run
from app.checker.engine import target as targets
from app.checker.words import error
from app.i18n import words
from app.lab.problems import LabError
from app.lab.server import LabServer
from tests.checker.conftest import TEST_STEPS, ZOO, as_json, check_copies_gone, ready, verdicts, zoo_files, zoo_fixture
from tests.server_calls import ask

zoo = zoo_fixture("zoo_varlen", "zoo_fails", "zoo_decoupled", "zoo_direct_slot")


def english(err: LabError) -> str:
    return error(err, words("en"))


def refused(server, model: str, files=None, **options) -> LabError:
    with pytest.raises(LabError) as err:
        run.run_check(targets.on_server(server, model, files=files), CheckOptions(steps=TEST_STEPS, **options))
    return err.value


def test_an_unknown_model_is_named_with_the_models_there_are(lab_server):
    err = refused(lab_server, "no_such_model")
    assert err.code == "check_model_unknown"
    message = english(err)
    assert "no model 'no_such_model'" in message and "asr_sequence_direct" in message
    assert not ready(lab_server, "no_such_model")  # it did not try to load it


def test_a_model_that_fails_every_request_stops_the_check_with_tritons_words(zoo):
    err = refused(zoo.server, "zoo_fails")
    assert err.code == "check_model_fails" and err.values["error"] == "the zoo's failing model refuses every request"


def test_a_decoupled_model_is_checked_by_its_response_streams_not_refused(zoo):
    before = ask(zoo.server, "get_inference_statistics", "zoo_decoupled")["model_stats"][0]["inference_count"]
    result = run.run_check(targets.on_server(zoo.server, "zoo_decoupled", files=zoo_files("zoo_decoupled")), CheckOptions(sessions=4))
    assert result.exit_code == 0 and verdicts(result)["stream_reference/alone"] == "held"
    assert verdicts(result)["stream_staggered/all_instances"] == "held"
    assert all(len(s.responses) == 1 and s.ended for s in result.streams.alone["a"])  # one response, with the final flag
    after = ask(zoo.server, "get_inference_statistics", "zoo_decoupled")["model_stats"][0]["inference_count"]
    assert after - before == 3 * 4  # each request alone twice, then staggered once


SOUND_VARLEN = {"reference/alone": "held", "interleaved/all_instances": "held", "id_reuse/all_instances": "held",
                "abandoned/all_instances": "held", "cancelled/all_instances": "held", "slow_client/all_instances": "held",
                "golden/alone": "skipped",
                "golden/all_instances": "skipped", "finite/alone": "skipped", "finite/all_instances": "skipped"}  # one INT64 output


def test_without_shape_a_variable_input_gets_sizes_drawn_per_session_and_step_and_every_check_holds(zoo):
    result = zoo.check("zoo_varlen")
    found = {k: v for k, v in verdicts(result).items() if "one_instance" not in k}
    # The abandon round is witnessed only when a later session lands on the reaped slot; short sessions
    # may end first, and then it is not exercised (never held without its evidence, never broken).
    round_ = ("abandoned/all_instances", "cancelled/all_instances")
    assert {found.pop(k) for k in round_} <= {"held", "not_exercised"}, verdicts(result)
    assert result.exit_code == (3 if "not_exercised" in verdicts(result).values() else 0), verdicts(result)
    assert found == {k: v for k, v in SOUND_VARLEN.items() if k not in round_}
    data = as_json(result)["inputs"]
    assert data["sizes"] == {"low": 1, "high": 16, "per": "request"}  # a sequence model: each request its own
    (tokens,) = data["shapes"]
    assert tokens["name"] == "TOKENS" and tokens["sized_by"] == "drawn" and 1 <= tokens["smallest"][0] < tokens["largest"][0] <= 16
    said = f"input TOKENS [-1]: [{tokens['smallest'][0]}] to [{tokens['largest'][0]}], drawn for each session and step"
    assert any(line.startswith(said) for line in text.summary_lines(result, words("en")))


def test_a_variable_length_integer_input_sized_by_shape_passes(zoo):
    result = zoo.check("zoo_varlen", key="shape", shapes={"TOKENS": (5,)})
    assert result.exit_code == 0
    assert {k: v for k, v in verdicts(result).items() if "one_instance" not in k} == SOUND_VARLEN
    data = as_json(result)["inputs"]
    assert data["sizes"] is None and data["shapes"] == [{"name": "TOKENS", "dims": [-1], "sized_by": "shape", "smallest": [5], "largest": [5]}]
    assert "input TOKENS [-1]: [5], from --shape" in text.summary_lines(result, words("en"))


@pytest.mark.parametrize(("shape", "code"), [("TOKENS:5,5", "check_shape_mismatch"), ("IDS:5", "check_shape_unknown_input"),
                                             ("TOKENS:2000000", "check_shape_too_large")])
def test_a_shape_that_does_not_fit_the_model_keeps_its_own_problem_and_nothing_is_sent(zoo, shape, code):
    before = ask(zoo.server, "get_inference_statistics", "zoo_varlen")["model_stats"][0]["inference_count"]
    err = refused(zoo.server, "zoo_varlen", shapes=dict([parse_shape(shape)]))
    assert err.code == code and shape.split(":")[0] in english(err)
    assert ask(zoo.server, "get_inference_statistics", "zoo_varlen")["model_stats"][0]["inference_count"] == before


def test_one_stream_per_session_from_a_perf_analyzer_data_file_with_shapes_of_its_own(zoo, tmp_path):
    streams = [[{"TOKENS": {"content": list(range(s + k + 1)), "shape": [s + k + 1]}} for k in range(4 + s % 3)] for s in range(7)]
    path = tmp_path / "data.json"
    path.write_text(json.dumps({"data": streams}))
    result = zoo.check("zoo_varlen", key="data", input_data=path, one_instance=False, steps=None)  # the streams set the lengths
    assert result.tables.input_source == "data_file" and result.tables.lengths == [4, 5, 6, 4, 5, 6, 4]
    assert verdicts(result)["interleaved/all_instances"] == "held" and result.exit_code == 0


@pytest.mark.parametrize(("document", "code", "words_"), [
    ({"data": [{"IDS": [1, 2]}]}, "check_data_unknown_input", "names IDS, which the model does not have"),
    ({"data": [[{"TOKENS": ["a", "b"]}]]}, "check_data_bad_value", "are not INT64 data"),
    ({"data": [[{"TOKENS": {"content": [1, 2, 3], "shape": [2]}}]]}, "check_data_size_mismatch", "holds 2 elements, the data has 3"),
])
def test_a_data_file_that_does_not_match_the_model_is_refused_before_any_request(zoo, tmp_path, document, code, words_):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    err = refused(zoo.server, "zoo_varlen", input_data=path)
    assert err.code == code and words_ in english(err) and str(path) in english(err)


def test_without_the_models_files_the_one_instance_variant_is_skipped_and_said(zoo):
    result = run.run_check(targets.on_server(zoo.server, "zoo_direct_slot", files=None),
                              CheckOptions(steps=TEST_STEPS, only=("interleaved",)))
    skipped = result.judgement.verdict("interleaved", "one_instance")
    assert (skipped.verdict, skipped.reason, skipped.values) == ("skipped", "no_model_files", {"model": "zoo_direct_slot"})
    assert result.judgement.verdict("interleaved", "all_instances").verdict == "held"
    assert check_copies_gone(zoo.server) == []


def test_on_an_external_server_it_loads_nothing_and_says_which_variant_it_skipped(zoo):
    external = LabServer(url=zoo.server.url).start()  # the same server, seen from outside: no files, no loading
    before = {e["name"] for e in ask(zoo.server, "get_model_repository_index") if e.get("state") == "READY"}
    result = run.run_check(targets.on_server(external, "zoo_direct_slot", files=zoo_files("zoo_direct_slot")),
                              CheckOptions(steps=TEST_STEPS, only=("interleaved",)))
    skipped = result.judgement.verdict("interleaved", "one_instance")
    assert (skipped.verdict, skipped.reason) == ("skipped", "external_server") and result.where == "external"
    after = {e["name"] for e in ask(zoo.server, "get_model_repository_index") if e.get("state") == "READY"}
    assert after == before


@pytest.mark.server  # an embedded server of its own, stopped mid-check
def test_a_server_that_stops_mid_check_stops_it_with_one_message():
    server = LabServer(model_repository=ZOO).start()
    try:
        server.models.ensure("zoo_batch_dependent")
        target = targets.on_server(server, "zoo_batch_dependent")

        def kill_after_some(done: int, planned: int, stage) -> None:
            if done > 20 and server.embedded.running:
                server.embedded.kill_for_demo()

        with pytest.raises(LabError) as err:
            run.run_check(target, CheckOptions(steps=TEST_STEPS), progress=kill_after_some)
        assert err.value.code == "check_server_gone" and server.url in english(err.value)
        assert not server.embedded.running
    finally:
        log = server.embedded.log_path if server.embedded else None
        server.stop()
        if log is not None:
            log.unlink(missing_ok=True)  # a killed server keeps its log for a post-mortem; this death was ours
