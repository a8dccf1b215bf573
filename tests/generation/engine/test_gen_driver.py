"""The generation driver on the real server: what each deployment does to a workload's streams.

The shipped deployments (fixture `generators`) run at 20 ms a step; deployments made here for one
test run at 5 ms. Every claim is read from the model's own outputs (EXECUTION, ROW, STEP,
STATE_OWNER) and from Triton's statistics and metrics.
"""
from __future__ import annotations

import os
import signal
import threading

import pytest
from tritonclient.utils import InferenceServerException

from app.checker.engine.review.configs import from_server_json
from app.generation.engine import GeneratorSettings, Workload, analysis, deployments, run, state_cells
from app.lab.server import LabServer, UnreachableError, free_ports
from tests.claims.helpers import deployed, unique_name
from tests.server_calls import ask
from tests.waiting import wait_for

# Short streams arriving faster than one finishes, so later requests join running ones.
JOINING = Workload(requests=8, mean_gap_ms=30, min_tokens=3, max_tokens=10, seed=1)


def table(result):
    return analysis.requests_table(result.trace, result.plans)


def test_in_flight_every_stream_is_right_and_later_requests_join_running_ones(lab_server, generators):
    result = run(lab_server, "gen_inflight", JOINING)
    requests = table(result)
    assert requests["correct"].all(), requests[["index", "expected", "received"]]
    assert (requests["foreign_step"] == -1).all()
    # A pass that held requests at different steps: one joined while the other was under way.
    mixed = analysis.mixed_passes(result.trace, result.max_batch_size)
    assert len(mixed) >= 1
    # One token per request per execution, and Triton counts each as an inference.
    tokens = analysis.token_rows(result.trace)
    assert not tokens.duplicated(["execution", "tag"]).any()
    assert result.server["inference_count"] == len(tokens) == requests["tokens"].sum()
    assert result.server["execution_count"] == tokens["execution"].nunique()
    wait_for(lambda: state_cells(lab_server.metrics_url, "gen_inflight") == 0, "gen_inflight's cells to go back to 0")


def test_state_kept_per_row_corrupts_streams_once_the_batch_changes(lab_server, generators):
    result = run(lab_server, "gen_inflight_by_row", JOINING)
    requests = table(result)
    wrong = requests[~requests["correct"]]
    assert len(wrong) >= 1
    # Each wrong stream continued a state that was not its own; at least one continued another request of this run.
    assert (wrong["foreign_step"] >= 0).all()
    assert ((wrong["continued_index"] >= 0) & (wrong["continued_index"] != wrong["index"])).any()


def test_static_batching_runs_each_batch_to_its_end_in_one_execution(lab_server, generators):
    result = run(lab_server, "gen_static", JOINING)
    requests = table(result)
    assert requests["correct"].all()
    tokens = analysis.token_rows(result.trace)
    per_request = tokens.groupby("index")["execution"].nunique()
    assert (per_request == 1).all()  # every token of a request in one execution
    # Each execution makes as many passes as its longest request has tokens, and no request joins a running one.
    steps = analysis.passes(result.trace, result.max_batch_size).groupby("execution")["pass"].nunique()
    longest = tokens.groupby("execution")["step"].max() + 1
    assert steps.to_dict() == longest.to_dict()
    assert analysis.mixed_passes(result.trace, result.max_batch_size).empty
    assert result.server["execution_count"] == tokens["execution"].nunique() < len(result.plans)


def test_two_runs_at_once_on_one_deployment_keep_their_own_requests(lab_server, generators):
    results = {}

    def one(name, seed):
        results[name] = run(lab_server, "gen_inflight", Workload(requests=4, mean_gap_ms=10, min_tokens=3, max_tokens=6, seed=seed), hold=False)

    threads = [threading.Thread(target=one, args=(n, n)) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    first, second = results[1], results[2]
    assert {p.tag for p in first.plans}.isdisjoint(p.tag for p in second.plans) and first.run_id != second.run_id
    for result in (first, second):
        assert set(result.trace["tag"]) == {p.tag for p in result.plans}
        assert table(result)["correct"].all()


@pytest.fixture(scope="module")
def quick(lab_server):
    """Two 5 ms-a-step in-flight deployments: one honours cancellation, one never asks."""
    names = {True: unique_name("gen_honours"), False: unique_name("gen_ignores")}
    configs = [GeneratorSettings(step_ms=5, honour_cancel=honour).to_config(name) for honour, name in names.items()]
    with deployed(lab_server, *configs):
        yield names


def _failures(server, model) -> int:
    return int(ask(server, "get_inference_statistics", model)["model_stats"][0]["inference_stats"]["fail"]["count"])


def test_a_cancelled_request_ends_and_its_cell_is_freed_when_the_model_honours_cancellation(lab_server, quick):
    model = quick[True]
    workload = Workload(requests=3, mean_gap_ms=0, min_tokens=60, max_tokens=60, seed=0)
    result = run(lab_server, model, workload, cancel_after={1: 3})
    requests = table(result).set_index("index")
    assert requests.loc[1, "status"] == "cancelled" and 3 <= requests.loc[1, "tokens"] < 60
    assert requests.loc[1, "correct"]  # what it got was right
    assert requests.loc[[0, 2], "correct"].all() and (requests.loc[[0, 2], "tokens"] == 60).all()
    wait_for(lambda: state_cells(lab_server.metrics_url, model) == 0, "the cancelled request's cell to be freed")


def test_a_cancelled_request_leaves_its_cell_behind_when_the_model_never_asks(lab_server, quick):
    model = quick[False]
    failed = _failures(lab_server, model)
    result = run(lab_server, model, Workload(requests=1, min_tokens=60, max_tokens=60, seed=0), cancel_after={0: 3})
    assert table(result).loc[0, "status"] == "cancelled"
    # Triton drops the cancelled request itself (a failed inference in its statistics); the model never hears.
    wait_for(lambda: _failures(lab_server, model) > failed, "Triton to end the cancelled request")
    assert state_cells(lab_server.metrics_url, model) == 1
    # Later requests run to their end on the same instance, and the cell is still held after them.
    assert table(run(lab_server, model, Workload(requests=2, min_tokens=3, max_tokens=3, seed=1)))["correct"].all()
    assert state_cells(lab_server.metrics_url, model) == 1


def test_a_server_that_dies_during_a_run_is_reported_as_unreachable():
    """On a server of its own, killed once the first request has ended: the stream breaks and the
    run says the server is gone, at once rather than at its timeout."""
    if LabServer.from_env().external_url:
        pytest.skip("needs an embedded server of its own")
    server = LabServer(preload=("gen_inflight",)).start()
    first_done = threading.Event()
    try:
        def kill_when_one_ended() -> None:
            first_done.wait(120)
            os.killpg(server.embedded.pid, signal.SIGKILL)

        killer = threading.Thread(target=kill_when_one_ended)
        killer.start()
        with pytest.raises(UnreachableError) as err:
            run(server, "gen_inflight", Workload(requests=30, mean_gap_ms=100, min_tokens=20, max_tokens=40),
                progress=lambda done, total, stage: first_done.set(), timeout_s=120)
        first_done.set()
        killer.join()
        assert err.value.code == "server_unreachable" and "UNAVAILABLE" in err.value.values["kind"]
    finally:
        first_done.set()
        server.stop()


def test_a_server_that_does_not_answer_is_reported_as_unreachable():
    port = free_ports(1)[0]
    server = LabServer(url=f"127.0.0.1:{port}")
    with pytest.raises(UnreachableError) as err:
        run(server, "gen_inflight", Workload(requests=1), hold=False)
    assert err.value.code == "server_unreachable"


def test_an_unknown_model_is_refused_in_tritons_words(lab_server):
    with pytest.raises(InferenceServerException, match="unknown model"):
        run(lab_server, "gen_nowhere", Workload(requests=1), hold=False)


def test_a_set_up_of_ones_own_loads_with_the_generators_code_and_unloads(lab_server):
    settings = GeneratorSettings(step_ms=5, max_batch_size=2, state_key="row")
    name = deployments.ensure(lab_server, settings)
    try:
        assert name == deployments.setup_name(settings) and name in lab_server.models.loaded()
        assert deployments.settings_of(from_server_json(ask(lab_server, "get_model_config", name))) == settings
        result = run(lab_server, name, Workload(requests=2, mean_gap_ms=0, min_tokens=4, max_tokens=4))
        assert set(analysis.token_rows(result.trace)["batch"]) <= {1, 2}
    finally:
        lab_server.models.unload(name)
    assert name not in lab_server.models.loaded()
    wait_for(lambda: not ask(lab_server, "is_model_ready", name), f"{name} to unload")


def test_under_direct_every_stream_is_right_and_each_request_keeps_its_row(lab_server):
    """The generator under direct, Triton's default strategy (lesson 8, direct or oldest for a generation): each
    request keeps its slot's row from first token to last, the padding rows for idle slots touch no state (every
    stream is right, and no cell is left once the run is over), and later requests still join running ones."""
    settings = GeneratorSettings(step_ms=5, strategy="direct")
    name = deployments.ensure(lab_server, settings)
    try:
        result = run(lab_server, name, JOINING)
        requests = table(result)
        assert requests["correct"].all(), requests[["index", "expected", "received"]]
        tokens = analysis.token_rows(result.trace)
        assert (tokens.groupby("tag")["row"].nunique() == 1).all(), tokens[["tag", "row", "execution"]]
        assert len(analysis.mixed_passes(result.trace, result.max_batch_size)) >= 1
        wait_for(lambda: state_cells(lab_server.metrics_url, name) == 0, f"{name}'s cells to go back to 0")
    finally:
        lab_server.models.unload(name)
