"""The checker through a real nginx in front of two embedded Triton replicas, each serving a sound
stateful model (oldest, state keyed by the correlation ID): round robin splits every sequence and
must fail with that diagnosis, hashing on the session header keeps each sequence on one replica
and holds, and the same check directly on one replica holds. The routing's witness reads the
replicas' own logs (--replica-log): round robin's sequences reached both replicas, hashed ones one
each; a balancer with one backend up leaves the routing not exercised (exit 3). On one replica alone, Triton's
default idle timeout (1 s) against clients that pause 1.5 s must fail too, on the reaper's
refusals and on the config review's error.

This module starts its own two servers (not the session's): run it on its own.
"""
from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import jsonschema
import pytest

from app.checker.engine import CheckOptions, ReviewCode, report_schema, run
from app.checker.engine import target as targets
from app.lab.deployment import deployments
from app.lab.server import LabServer, NginxProxy, proxy
from tests.checker.conftest import ZOO, load_zoo, read_report, zoo_files
from tests.server_calls import ask

pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(not (shutil.which("nginx") or any(os.access(p, os.X_OK) for p in proxy.SEARCH)),
                       reason="nginx is not installed (apt-get install nginx-light)"),
]

MODEL = "zoo_corrid_oldest"  # sound: oldest, state keyed by the correlation ID, fresh on START, dropped on END
IDLE_DEFAULT = "zoo_corrid_oldest_idle_default"  # the same model with max_sequence_idle_microseconds left out (1 s)
CLI = [sys.executable, "-m", "app.cli", "check"]
QUICK = ["--steps", "4", "--only", "interleaved"]


def cli(args: list[str], timeout: int = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_")}
    return subprocess.run(CLI + args, capture_output=True, text=True, env=env, timeout=timeout)


@pytest.fixture(scope="module")
def replicas():
    servers = [LabServer() for _ in range(2)]  # explicit model control, nothing preloaded
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda s: s.start(), servers))
        for server in servers:
            load_zoo(server, [MODEL])
        yield servers
    finally:
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda s: s.stop(), servers))


def balancer(replicas, policy: str) -> NginxProxy:
    return NginxProxy([r.url for r in replicas], policy, grpc_backends=[r.grpc_url for r in replicas]).start()


def replica_args(replicas, logs: bool = True) -> list[str]:
    """--replica for each replica and, with logs, --replica-log for its log file (this machine's)."""
    args = [a for r in replicas for a in ("--replica", r.url)]
    return args + ([a for r in replicas for a in ("--replica-log", str(r.log_path))] if logs else [])


@pytest.fixture(scope="module")
def round_robin(replicas):
    with balancer(replicas, "round_robin") as nginx:
        yield nginx


@pytest.fixture(scope="module")
def hashed(replicas):
    with balancer(replicas, "sticky") as nginx:  # hash $http_x_session_id consistent
        yield nginx


def test_round_robin_in_front_of_two_servers_is_no_held_check(round_robin, tmp_path):
    """As a new user runs it: the whole check, --url the balancer, no --replica. Every sequence is
    refused at its second request by the server that never saw its START: that is a failure."""
    report = tmp_path / "check.json"
    done = cli(["--url", round_robin.url, "--model", MODEL, "--steps", "4", "--json", str(report)])
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Every check held." not in done.stdout and "A check broke." in done.stdout
    data = read_report(report)
    assert (data["exit_code"], data["outcome"], data["failed_by"]) == (1, "broken", ["checks"])
    interleaved = next(c for c in data["checks"] if (c["check"], c["variant"]) == ("interleaved", "all_instances"))
    assert (interleaved["verdict"], interleaved["reason"]) == ("broken", "sequence_split")
    assert interleaved["values"]["refusals"] > 0 and set(interleaved["values"]["refusal_causes"]) == {"sequence_ended"}
    assert "sequence_split" in [d["code"] for d in data["diagnoses"]]
    assert all(c["verdict"] != "held" or not c["values"].get("refusals") for c in data["checks"])


@pytest.mark.parametrize("transport", ["http", "grpc"])
def test_through_round_robin_with_the_replicas_the_diagnosis_names_the_balancer(replicas, round_robin, tmp_path, transport):
    report = tmp_path / "check.json"
    grpc = ["--transport", transport, "--grpc-url", round_robin.grpc_url] if transport != "http" else []
    done = cli(["--url", round_robin.url, "--model", MODEL, *QUICK, *grpc, "--replica", replicas[0].url, "--replica", replicas[1].url,
                "--json", str(report)])
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the balancer splits sequences" in done.stdout
    routing = read_report(report)["routing"]
    assert routing["diagnosis"] == "balancer_splits_sequences" and "interleaved/all_instances" in routing["split_checks"]
    assert routing["transport"] == transport
    assert routing["direct"]["exit_code"] == 0 and routing["direct"]["replica"] == replicas[0].url
    assert all(r["served"] > 0 for r in routing["replicas"]), routing["replicas"]  # round robin: both replicas served
    # No --replica-log: only the statistics, which cannot say which replica served each sequence.
    witness = routing["witness"]
    assert (witness["source"], witness["exercised"], witness["replicas_serving"]) == ("statistics", True, 2), witness
    assert witness["sequences_split"] is None and all(r["sequences"] is None for r in routing["replicas"])
    assert "2 of 2 replicas served (their statistics" in done.stdout


@pytest.mark.parametrize("transport", ["http", "grpc"])
def test_the_replicas_logs_witness_round_robin_splitting_sequences(replicas, round_robin, tmp_path, transport):
    report = tmp_path / "check.json"
    grpc = ["--transport", transport, "--grpc-url", round_robin.grpc_url] if transport != "http" else []
    done = cli(["--url", round_robin.url, "--model", MODEL, *QUICK, *grpc, *replica_args(replicas), "--json", str(report)])
    assert done.returncode == 1, done.stdout + done.stderr
    routing = read_report(report)["routing"]
    assert routing["diagnosis"] == "balancer_splits_sequences"
    witness = routing["witness"]
    assert (witness["source"], witness["exercised"], witness["replicas_serving"]) == ("log", True, 2), witness
    # A sequence's START went to one replica and a later request to the other, which refused it; one
    # whose requests happened to alternate with other sessions' may have stayed on one replica.
    assert 0 < witness["sequences_split"] <= witness["sequences_placed"], witness
    assert all(r["sequences"] > 0 for r in routing["replicas"]), routing["replicas"]
    assert f"{witness['sequences_split']} of {witness['sequences_placed']} sequences split across replicas (their logs)" in done.stdout


@pytest.mark.parametrize("transport", ["http", "grpc", "grpc_stream"])
def test_hashing_on_the_session_header_keeps_every_sequence_on_one_replica(replicas, hashed, tmp_path, transport):
    report = tmp_path / "check.json"
    grpc = ["--transport", transport, "--grpc-url", hashed.grpc_url] if transport != "http" else []
    done = cli(["--url", hashed.url, "--model", MODEL, *QUICK, *grpc, "--session-header", "X-Session-ID", *replica_args(replicas),
                "--json", str(report)])
    assert done.returncode == 0, done.stdout + done.stderr
    data = read_report(report)
    assert data["routing"]["diagnosis"] == "held" and data["routing"]["session_header"] == "X-Session-ID"
    assert all(c["values"].get("refusals", 0) == 0 for c in data["checks"])
    assert sum(r["served"] for r in data["routing"]["replicas"]) >= data["requests"]
    # The header reached nginx: without it every request hashes alike and one replica serves them all.
    assert all(r["served"] > 0 for r in data["routing"]["replicas"]), data["routing"]["replicas"]
    # Both replicas served, and their logs name no sequence on both: each stayed on one replica.
    witness = data["routing"]["witness"]
    assert (witness["source"], witness["exercised"], witness["replicas_serving"]) == ("log", True, 2), witness
    assert witness["sequences_split"] == 0 and witness["sequences_placed"] > 0, witness
    assert sum(r["sequences"] for r in data["routing"]["replicas"]) == witness["sequences_placed"]
    assert data["outcome"] == "held" and data["not_exercised"] == []


@pytest.fixture(scope="module")
def one_backend(replicas):
    """A balancer whose only backend is the first replica: the second, named with --replica, never serves."""
    with NginxProxy([replicas[0].url], "round_robin").start() as nginx:
        yield nginx


def test_a_balancer_with_one_replica_behind_it_leaves_the_routing_not_exercised(replicas, one_backend, tmp_path):
    """Every check holds (one replica keeps every sequence whole), so "held" would claim routing that
    never happened: the routing is not_exercised, and the check exits 3."""
    report = tmp_path / "check.json"
    done = cli(["--url", one_backend.url, "--model", MODEL, *QUICK, *replica_args(replicas), "--json", str(report)])
    assert done.returncode == 3, done.stdout + done.stderr
    data = read_report(report)
    assert (data["outcome"], data["exit_code"], data["failed_by"], data["not_exercised"]) == ("not_exercised", 3, [], ["routing"])
    assert all(c["verdict"] != "broken" for c in data["checks"])  # the run through the balancer keeps its own verdicts
    routing = data["routing"]
    assert routing["diagnosis"] == "not_exercised" and routing["direct"]["exit_code"] == 0
    assert [r["served"] > 0 for r in routing["replicas"]] == [True, False], routing["replicas"]
    witness = routing["witness"]
    assert (witness["source"], witness["exercised"], witness["why"], witness["advice"]) == (
        "log", False, "one_replica_served", "spread_replicas"), witness
    assert (witness["replicas_serving"], witness["sequences_split"]) == (1, 0), witness
    assert "1 of 2 replicas served; 0 of" in done.stdout and "the routing was not exercised" in done.stdout
    assert "Every check held through the balancer and directly on one replica." not in done.stdout
    lying = copy.deepcopy(data)  # held over a routing no second replica saw: the schema refuses it
    lying["routing"]["diagnosis"] = "held"
    with pytest.raises(jsonschema.ValidationError):
        report_schema.validate(lying)


@pytest.fixture(scope="module")
def idle_default(replicas):
    """The sound model with Triton's default idle timeout, on the first replica only."""
    config = deployments.place_instances(deployments.read_config(MODEL, ZOO))
    config.name = IDLE_DEFAULT
    config.sequence_batching.ClearField("max_sequence_idle_microseconds")
    ask(replicas[0], "load_model", IDLE_DEFAULT, config=deployments.to_json(config), files=zoo_files(MODEL), timeout_s=300)
    yield replicas[0]
    ask(replicas[0], "unload_model", IDLE_DEFAULT, timeout_s=60)


def test_clients_that_pause_past_the_default_idle_timeout_fail_on_the_reaper_and_on_the_review(idle_default):
    options = CheckOptions(steps=4, think_ms=1500.0, only=("interleaved",), one_instance=False)
    result = run.run_check(targets.on_server(idle_default, IDLE_DEFAULT, files=zoo_files(MODEL)), options)
    interleaved = result.judgement.verdict("interleaved", "all_instances")
    assert (interleaved.verdict, interleaved.reason) == ("broken", "reaped"), interleaved
    assert interleaved.values["refusals"] > 0 and set(interleaved.values["refusal_causes"]) <= {"idle_gap", "reaped_after_backlog"}
    assert ReviewCode.IDLE_TIMEOUT_BELOW_THINK in [f.code for f in result.review_errors]
    assert result.failed_by == ["checks", "review"] and result.exit_code == 1


def test_more_replica_logs_than_replicas_is_refused_before_anything_starts(tmp_path):
    done = cli(["--url", "127.0.0.1:9", "--model", MODEL, "--replica", "127.0.0.1:9", "--replica-log", str(tmp_path / "a.log"),
                "--replica-log", str(tmp_path / "b.log")], timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "2 --replica-log for 1 --replica" in done.stderr
