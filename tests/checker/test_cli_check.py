"""`batching-lab check`, run as a user would (a subprocess): exit codes, the JSON report, the JUnit XML."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
import xml.etree.ElementTree as ET

import pytest

from app.checker import words as check_words
from app.checker.engine import report_schema
from app.i18n import languages, words
from app.lab.paths import MODEL_REPOSITORY
from app.lab.problems import LabError
from app.lab.server import free_ports
from tests.checker.conftest import REVIEW_CONFIGS, ZOO, read_report, unload
from tests.i18n.text_checks import reads_in

pytestmark = pytest.mark.server  # the CLI runs in a process of its own, most on a real server

CLI = [sys.executable, "-m", "app.cli", "check"]


def run_check(args, env, timeout=600):
    return subprocess.run(CLI + args, capture_output=True, text=True, env={**os.environ, **env}, timeout=timeout)


def own_env() -> dict:
    """No external server: the check starts the embedded one."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_")}
    return {**env, "TRITON_LAB_DATA": os.environ.get("TRITON_LAB_DATA", "")}


def test_exit_2_and_one_message_for_an_unknown_model(server_env):
    done = run_check(["--model", "no_such_model"], server_env)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("batching-lab: the server at ")
    assert "has no model 'no_such_model'" in done.stderr and "Traceback" not in done.stderr


def test_exit_2_for_options_that_cannot_be_right_before_any_server_is_asked(server_env):
    done = run_check(["--model", "asr_sequence_direct", "--shape", "AUDIO", "--sessions", "0"], server_env)
    assert done.returncode == 2 and "--shape takes NAME:d1,d2" in done.stderr


def test_exit_1_with_a_failure_per_broken_check_in_the_junit_xml(server_env, tmp_path):
    xml, report, failures = tmp_path / "check.xml", tmp_path / "check.json", tmp_path / "failures.json"
    done = run_check(["--model", "asr_dynamic", "--sessions", "4", "--steps", "4", "--junit-xml", str(xml), "--json", str(report),
                      "--export-failures", str(failures)], server_env)
    assert done.returncode == 1, done.stderr
    assert "BROKEN" in done.stdout and "belongs under the sequence batcher" in done.stdout
    suite = ET.parse(xml).getroot().find("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"repeat_alone[alone]", "batch_composition[all_instances]", "after_traffic[alone]", "golden[alone]",
                          "golden[all_instances]", "finite[alone]", "finite[all_instances]"}
    assert cases["repeat_alone[alone]"].find("failure").get("type") == "keeps_state"
    assert cases["batch_composition[all_instances]"].find("skipped") is not None
    assert "SKIPPED: not run: no golden outputs" in cases["golden[alone]"].find("skipped").get("message")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("7", "1", "6")  # its outputs are integers: no finite check
    data = read_report(report)
    assert (data["kind"], data["schema"], data["exit_code"], data["outcome"]) == ("check", report_schema.SCHEMA, 1, "broken")
    assert data["server"]["where"] == "external" and data["inputs"]["lengths"] == [4, 4, 4, 4]
    # the failing sessions as perf_analyzer --input-data: a stream per session, every input per step, its references aligned
    exported = json.loads(failures.read_text())
    assert f"wrote {failures}: {len(exported['data'])} failing sessions as perf_analyzer --input-data" in done.stdout
    assert 1 <= len(exported["data"]) <= 4 and [len(s) for s in exported["data"]] == [len(s) for s in exported["validation_data"]]
    inputs, outputs = ({t["name"] for t in data["model"][kind]} for kind in ("inputs", "outputs"))
    assert all(set(step) == inputs for stream in exported["data"] for step in stream)
    assert all(set(step) == outputs for stream in exported["validation_data"] for step in stream)


def test_exit_0_when_every_check_held_and_the_one_instance_variant_skipped_on_an_external_server(server_env, tmp_path):
    report = tmp_path / "check.json"
    done = run_check(["--model", "asr_sequence_direct", "--steps", "4", "--only", "interleaved", "--json", str(report)], server_env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Every check held." in done.stdout
    # The version checked, and counted nouns in their plural: asr_sequence_direct is 2 instances of 4 slots.
    assert "Checked asr_sequence_direct version 1 on " in done.stdout and ": scheduler direct, 2 instances; " in done.stdout
    assert "capacity 8 sequences (2 × 4 slots)" in done.stdout
    checks = {(c["check"], c["variant"]): c for c in read_report(report)["checks"]}
    assert checks[("interleaved", "all_instances")]["verdict"] == "held"
    assert (checks[("interleaved", "one_instance")]["verdict"], checks[("interleaved", "one_instance")]["reason"]) == ("skipped", "external_server")


def test_a_repository_of_ones_own_served_embedded_with_a_one_instance_copy_and_nothing_left_running(tmp_path):
    report, xml, failures = tmp_path / "check.json", tmp_path / "check.xml", tmp_path / "failures.json"
    done = run_check(["--model", "zoo_corrid_oldest", "--model-repository", str(ZOO), "--steps", "4", "--only", "interleaved",
                      "--json", str(report), "--junit-xml", str(xml), "--export-failures", str(failures)], own_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"no session failed: nothing written to {failures}" in done.stdout and not failures.exists()
    data = read_report(report)
    assert data["server"]["where"] == "embedded"
    assert {(c["check"], c["variant"]): c["verdict"] for c in data["checks"]} == {
        ("reference", "alone"): "held", ("interleaved", "all_instances"): "held", ("interleaved", "one_instance"): "held"}
    assert len(ET.parse(xml).getroot().find("testsuite").findall("testcase")) == 3
    with pytest.raises(OSError):  # the server it started is gone
        urllib.request.urlopen(f"http://{data['server']['url']}/v2/health/live", timeout=5)


def test_a_streaming_model_exits_0_when_keyed_by_corrid_and_1_when_keyed_by_row_naming_whose_state_continued(tmp_path):
    """The iterative generators of the zoo (zoo_stream_corrid, zoo_stream_by_row), checked as a user would."""
    report, xml, failures = tmp_path / "check.json", tmp_path / "check.xml", tmp_path / "failures.json"
    done = run_check(["--model", "zoo_stream_corrid", "--model-repository", str(ZOO), "--sessions", "10"], own_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "decoupled: 10 requests, each alone twice, then staggered" in done.stdout and "Every check held." in done.stdout
    done = run_check(["--model", "zoo_stream_by_row", "--model-repository", str(ZOO), "--sessions", "10", "--json", str(report),
                      "--junit-xml", str(xml), "--export-failures", str(failures)], own_env())
    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads(report.read_text())
    staggered = next(c for c in data["checks"] if c["check"] == "stream_staggered")
    entries = staggered["values"]["stream_diagnosis"]["streams"]
    assert staggered["verdict"] == "broken" and entries
    # Whose state a wrong response read: named where one request's lone response matches it, else
    # narrowed to those that match (among), each sent before the response came; never only itself.
    others = [o for e in entries for o in e.get("origins", [])
              if o.get("request", e["request"]) != e["request"] or set(o.get("among", [])) - {e["request"]}]
    assert others or any(e["class"] == "foreign" for e in entries), entries
    assert "carried on with request" in done.stdout or "state lost" in done.stdout
    assert len(data["streams"]["staggered"]) == 10 and data["model"]["decoupled"] is True
    # the staggered check, and the client fault where its neighbours mixed with the victim too (same row-keyed state)
    broken_checks = sum(c["verdict"] == "broken" for c in data["checks"])
    assert staggered["verdict"] == "broken" and ET.parse(xml).getroot().find("testsuite").get("failures") == str(broken_checks)
    exported = json.loads(failures.read_text())
    assert len(exported["data"]) == len(exported["validation_data"]) >= 2
    assert f"wrote {failures}" in done.stdout


def test_a_deliberately_wrong_validation_data_exits_1_naming_the_first_mismatch_and_a_right_one_exits_0(tmp_path):
    """zoo_stateless answers OUTPUT = ROUNDED = the sum of every input element (its model.py), so the
    right golden outputs are computed here; the wrong file is off by one at its second entry (session 1, request 2)."""
    entries = [{"INPUT": [1.0, 2.0, 3.0, 4.0], "COUNT": [1, 1]}, {"INPUT": [0.5, 0.5, 0.0, 1.0], "COUNT": [2, 0]}]
    right = {"data": entries, "validation_data": [{"OUTPUT": [sum(e["INPUT"]) + sum(e["COUNT"])],
                                                    "ROUNDED": [int(sum(e["INPUT"]) + sum(e["COUNT"]))]} for e in entries]}
    wrong = json.loads(json.dumps(right))
    wrong["validation_data"][1]["ROUNDED"] = [wrong["validation_data"][1]["ROUNDED"][0] + 1]
    (tmp_path / "right.json").write_text(json.dumps(right))
    (tmp_path / "wrong.json").write_text(json.dumps(wrong))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "zoo_stateless").symlink_to(ZOO / "zoo_stateless", target_is_directory=True)
    base = ["--model", "zoo_stateless", "--model-repository", str(repo), "--sessions", "2", "--steps", "2"]
    done = run_check([*base, "--input-data", str(tmp_path / "wrong.json")], own_env())
    assert done.returncode == 1, done.stdout + done.stderr
    assert "first differed from its golden output at session 1, request 2" in done.stdout and "ROUNDED off by 1" in done.stdout
    done = run_check([*base, "--input-data", str(tmp_path / "right.json")], own_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Every check held." in done.stdout


def test_a_model_missing_from_the_repository_is_named_before_a_server_starts():
    done = run_check(["--model", "nope", "--model-repository", str(ZOO)], own_env(), timeout=60)
    assert done.returncode == 2 and "there is no model 'nope'" in done.stderr and "zoo_stateless" in done.stderr
    assert "Starting" not in done.stderr  # no server was started


def test_the_config_review_runs_offline_on_a_repository_and_exits_1_on_an_error_finding(tmp_path):
    report = tmp_path / "review.json"
    done = run_check(["--config", str(ZOO), "--json", str(report)], own_env(), timeout=120)
    assert done.returncode == 0, done.stderr  # warnings only: NVIDIA's idle timeout, no rollback version
    data = read_report(report)
    assert data["kind"] == "check_config" and set(data["models"]) == {p.name for p in ZOO.iterdir() if (p / "config.pbtxt").is_file()}
    assert "idle_timeout_default" in {f["code"] for f in data["models"]["simple_sequence"]}
    assert "simple_sequence:" in done.stdout
    # a think time longer than the idle window is an error: the sequence models' sessions would be reaped
    done = run_check(["--config", str(ZOO), "--think-ms", "2000", "--json", str(report)], own_env(), timeout=120)
    assert done.returncode == 1, done.stderr
    assert "idle_timeout_below_think" in {f["code"] for f in read_report(report)["models"]["simple_sequence"]}


def test_the_clients_ids_stated_on_the_command_line_reach_the_review(tmp_path):
    """--max-corrid and --string-id-bytes are what the CORRID findings need: without them the
    review says it could not check; with them a 32-bit CORRID is flagged for 64-bit IDs."""
    model = tmp_path / "mine"
    model.mkdir()
    text = (MODEL_REPOSITORY / "asr_sequence_direct" / "config.pbtxt").read_text()
    (model / "config.pbtxt").write_text(text.replace("CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64", "CONTROL_SEQUENCE_CORRID data_type: TYPE_INT32"))
    report = tmp_path / "review.json"

    def review(*args):
        done = run_check(["--config", str(model / "config.pbtxt"), "--json", str(report), *args], own_env(), timeout=120)
        findings = read_report(report)["models"]["asr_sequence_direct"]  # named by its config
        return done.returncode, {f["code"] for f in findings}, [f["values"] for f in findings if f["code"] == "not_checked"]

    rc, found, not_checked = review()
    assert rc == 0 and "corrid_truncated" not in found
    assert {"check": "corrid_truncated", "needs": ["client_ids"]} in not_checked
    rc, found, not_checked = review("--max-corrid", str(2**64 - 1), "--string-id-bytes", "36")
    assert rc == 1 and {"corrid_truncated", "corrid_string_ids_integer_type"} <= found
    assert all(v["check"] != "corrid_truncated" for v in not_checked)


def test_exit_2_in_the_users_language_for_a_server_that_does_not_answer():
    (port,) = free_ports(1)
    unreachable = LabError("check_server_unreachable", url=f"127.0.0.1:{port}")
    english = check_words.error(unreachable, words("en"))
    assert english.startswith(f"no live Triton answers at 127.0.0.1:{port}: start that server")
    for lang in languages():
        done = run_check(["--lang", lang, "--model", "asr_dynamic", "--url", f"127.0.0.1:{port}"], own_env(), timeout=60)
        message = check_words.error(unreachable, words(lang))
        assert done.returncode == 2 and done.stderr.strip() == f"batching-lab: {message}", (lang, done.stderr)
        assert reads_in(lang, message, english), lang


def test_exit_2_for_a_seed_the_generator_cannot_take_before_a_server_starts():
    done = run_check(["--model", "asr_dynamic", "--seed", "-1"], own_env(), timeout=60)
    assert done.returncode == 2 and "the seed must be a whole number from 0 to 4,294,967,295: got -1" in done.stderr
    assert "Starting" not in done.stderr


def test_the_offline_review_judges_for_the_triton_version_given_and_says_which(tmp_path):
    """--triton-version reaches the release-dependent checks and the report names it; without
    one the review says those checks were not made instead of assuming a release."""
    report = tmp_path / "review.json"

    def review(*args):
        done = run_check(["--config", str(REVIEW_CONFIGS), "--json", str(report), *args], own_env(), timeout=120)
        data = read_report(report)
        return done, data, {m: {f["code"] for f in fs} for m, fs in data["models"].items()}

    done, data, found = review("--triton-version", "2.54.0")
    assert done.returncode == 1, done.stderr  # both issue pitfalls are errors
    assert data["triton_version"] == "2.54.0" and done.stdout.splitlines()[0] == "reviewed for Triton 2.54.0"
    assert "warmup_string_corrid" in found["warmup_string_corrid"] and "warmup_string_corrid" not in found["warmup_integer_corrid"]
    assert "implicit_state_order" in found["state_order_crossed"] and "implicit_state_order" not in found["state_order_renamed"]
    done, data, found = review()
    assert data["triton_version"] is None and done.stdout.startswith("no Triton version given (--triton-version, e.g. 2.51.0")
    assert {"check": "warmup_string_corrid", "needs": ["triton_version"]} in [f["values"] for f in data["models"]["warmup_string_corrid"]]
    assert "warmup_string_corrid" not in found["warmup_string_corrid"]
    done, data, found = review("--triton-version", "2.53.0")
    assert "warmup_string_corrid" not in found["warmup_string_corrid"]
    assert all(f["values"].get("check") != "warmup_string_corrid" for f in data["models"]["warmup_string_corrid"])


@pytest.mark.parametrize("args, words", [
    (["--config", str(REVIEW_CONFIGS), "--triton-version", "25.01"], "three numbers such as 2.51.0 (release 24.10) or 2.54.0 (release 25.01): got '25.01'"),
    (["--model", "asr_dynamic", "--triton-version", "2.51.0"], "--triton-version 2.51.0 is for --config"),
])
def test_exit_2_for_a_triton_version_that_cannot_be_used_before_any_server_starts(args, words):
    done = run_check(args, own_env(), timeout=60)
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "Starting" not in done.stderr


@pytest.fixture()
def generators(lab_server):
    """The token generator's in-flight deployments, loaded on the suite's server for one test (they
    load on first use only) and unloaded after it."""
    names = ("gen_inflight", "gen_inflight_by_row")
    try:
        for name in names:
            lab_server.models.ensure(name)
        yield names
    finally:
        unload(lab_server, names)


def test_generated_inputs_check_a_generator_of_token_ids_and_catch_its_state_keyed_by_row(server_env, generators, tmp_path):
    """No data file: the checker generates every input from the metadata, small ints that may be
    negative, which the generator reads as token ids modulo its vocabulary and a MAX_TOKENS clamped
    into 1..64. Its placement outputs are left out by the lab; keyed by CORRID it holds, keyed by
    batch row a staggered stream continues another request's state and names that request."""
    sound, broken = tmp_path / "sound.json", tmp_path / "broken.json"
    done = run_check(["--model", "gen_inflight", "--json", str(sound)], server_env)
    assert done.returncode == 0, done.stdout + done.stderr
    data = read_report(sound)
    assert data["outcome"] == "held" and data["streams"]["requests"] >= 2
    lone = [s["responses"] for s in data["streams"]["alone"]["a"]]
    assert min(lone) >= 1 and max(lone) > 1 and all(s["error"] is None for s in data["streams"]["staggered"])
    assert "left out: ROW, BATCH, EXECUTION, INSTANCE" in done.stdout
    done = run_check(["--model", "gen_inflight_by_row", "--json", str(broken)], server_env)
    assert done.returncode == 1, done.stdout + done.stderr
    data = read_report(broken)
    staggered = next(c for c in data["checks"] if c["check"] == "stream_staggered")
    assert staggered["verdict"] == "broken"
    entries = staggered["values"]["stream_diagnosis"]["streams"]
    # Which request's state it continued is named reliably on the zoo's row-keyed generator
    # (test_stream_checks.py). Here, with generated inputs, the name depends on how the rows interleave:
    # twice in full runs two requests took turns advancing one row's cell, so no wrong response matched
    # exactly one other request's lone response and neither a source nor an origin could be named.
    # Where one is named, the report and the CLI must say it.
    named = [e for e in entries if e["class"] in ("foreign", "mixed") and e["source"]["request"] != e["request"]]
    assert entries and all(e["step"] is not None for e in entries), entries
    if named:
        assert {d["code"] for d in data["diagnoses"]} & {"stream_foreign_state"}
        assert re.search(r"request \d+ from response \d+: (it carried on with|part of) request \d+'s", done.stdout), done.stdout
