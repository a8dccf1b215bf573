"""On the real server: the gRPC endpoint a check sends to is the one given (--grpc-url), a wrong one
ends the check with exit 2 naming it (never a broken model), and every check carries the server's
evidence that its situation happened: a model broken only when batched, deployed so that no batch
of more than one forms, is not exercised, never held. Every report written validates against the
shipped schema, a held-out decoupled model's streams of zero responses included."""
from __future__ import annotations

import os

import pytest

from app.checker.engine import CheckOptions, report_schema, run
from app.checker.engine import target as targets
from app.lab.deployment import deployments
from app.lab.server import free_ports
from tests.checker.conftest import ZOO, as_json, read_report, unload, zoo_files, zoo_fixture
from tests.checker.test_cli_check import run_check
from tests.server_calls import ask

zoo = zoo_fixture("zoo_square", "zoo_repeat", "zoo_batch_dependent")
UNBATCHED = "zoo_batch_dependent_unbatched"  # the same model with no dynamic batcher: every execution one request


def no_triton_env() -> dict:
    """The user's environment with no TRITON_* variable: only the options say where the server is."""
    return {k: v for k, v in os.environ.items() if not k.startswith("TRITON_")}


@pytest.fixture(scope="module")
def unbatched(zoo):
    config = deployments.place_instances(deployments.read_config("zoo_batch_dependent", ZOO))
    config.name = UNBATCHED
    config.ClearField("dynamic_batching")
    ask(zoo.server, "load_model", UNBATCHED, config=deployments.to_json(config), files=zoo_files("zoo_batch_dependent"), timeout_s=300)
    try:
        yield UNBATCHED
    finally:
        unload(zoo.server, [UNBATCHED])


def test_a_decoupled_model_is_checked_on_the_grpc_url_given_and_its_zero_response_streams_validate(zoo, tmp_path):
    server = zoo.server
    assert not server.grpc_url.endswith(":8001")  # the point: the default port would be the wrong one
    report = tmp_path / "check.json"
    done = run_check(["--model", "zoo_square", "--url", server.url, "--grpc-url", server.grpc_url, "--sessions", "12",
                      "--json", str(report)], no_triton_env())
    assert done.returncode == 0, done.stdout + done.stderr
    data = read_report(report)  # validated against the shipped schema
    assert data["schema"] == 2 and data["checks"][0]["verdict"] == "held"
    lengths = [s["responses"] for s in data["streams"]["alone"]["a"]]
    assert 0 in lengths and data["inputs"]["lengths"] == lengths  # IN <= 0: the final flag alone, a sound stream
    staggered = next(c for c in data["checks"] if c["check"] == "stream_staggered")
    evidence = staggered["values"]["witness"]
    # no batching (max_batch_size 0): the witness is streams in flight together, which the stagger makes happen
    assert staggered["verdict"] == "held" and evidence["exercised"] and evidence["max_batch_size"] == 0 and evidence["overlapping"] > 1
    assert "Every check held." in done.stdout


def test_a_grpc_url_where_nothing_listens_or_http_answers_exits_2_naming_it_and_blames_no_model(zoo):
    server = zoo.server
    (port,) = free_ports(1)
    done = run_check(["--model", "zoo_square", "--url", server.url, "--grpc-url", f"127.0.0.1:{port}"], no_triton_env(), timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert f"nothing answers gRPC at 127.0.0.1:{port}" in line and "--grpc-url" in line and "BROKEN" not in done.stdout
    done = run_check(["--model", "zoo_square", "--url", server.url, "--grpc-url", server.url], no_triton_env(), timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{server.url} answers HTTP, not gRPC" in done.stderr and "--grpc-url" in done.stderr


def test_a_model_broken_only_when_batched_is_not_exercised_where_no_batch_forms_and_broken_where_one_does(zoo, unbatched):
    lone = run.run_check(targets.on_server(zoo.server, unbatched, files=zoo_files("zoo_batch_dependent")), CheckOptions(steps=2))
    v = lone.judgement.verdict("batch_composition", "all_instances")
    assert (v.verdict, v.reason) == ("not_exercised", "no_batch_formed"), v
    assert v.values["witness"]["largest_batch"] == 1 and v.values["witness"]["advice"] == "more_load"
    assert (lone.outcome, lone.exit_code, lone.not_exercised) == ("not_exercised", 3, ["batch_composition/all_instances"])
    report_schema.validate(as_json(lone))
    batched = zoo.check("zoo_batch_dependent", steps=2)
    v = batched.judgement.verdict("batch_composition", "all_instances")
    assert (v.verdict, v.reason) == ("broken", "batch_dependent") and v.values["witness"]["largest_batch"] > 1
    report_schema.validate(as_json(batched))


def test_a_repeat_int32_shaped_model_holds_with_its_fault_witnessed_and_its_report_validates(zoo, tmp_path):
    """Held out, shaped like NVIDIA's repeat_int32: variable IN and DELAY (sized alike), WAIT, two outputs."""
    report = tmp_path / "check.json"
    done = run_check(["--model", "zoo_repeat", "--url", zoo.server.url, "--grpc-url", zoo.server.grpc_url, "--sessions", "6",
                      "--shape", "IN:3", "--shape", "DELAY:3", "--json", str(report)],
                     {**no_triton_env(), "TRITON_METRICS_URL": zoo.server.metrics_url})  # where the fault reads Triton's pending requests
    data = read_report(report)  # the schema, and every judged verdict's witness
    checks = {(c["check"], c["variant"]): c for c in data["checks"]}
    assert checks[("stream_reference", "alone")]["verdict"] == "held"
    assert [s["responses"] for s in data["streams"]["alone"]["a"]] == [3] * 6
    for name in ("stream_cancelled", "stream_disconnected"):  # NVIDIA's example survives both client faults
        fault = checks[(name, "all_instances")]
        assert fault["verdict"] == "held" and fault["values"]["witness"]["exercised"], fault
        assert fault["values"]["witness"]["pending_after"] == 0
    assert done.returncode == (0 if data["outcome"] == "held" else 3), done.stdout + done.stderr
