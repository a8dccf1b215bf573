"""Loading on first use, within a budget of stub processes, on a server of its own.

The session's shared server preloads everything for the other tests; these need an empty one
to see what a lazy start loads, what the budget unloads and what it refuses.
"""
from __future__ import annotations

import threading
import time

import pytest

from app.lab.deployment.deployer import Deployer
from app.lab.deployment.deployments import LabSettings
from app.lab.deployment.loaded_models import LoadedModels, default_budget
from app.lab.problems import LabError
from app.lab.scenario.scenario import Scenario
from app.lab.server.connection import LabServer
from app.lab.traffic import driver, run_queue

ONE = dict(instances=1, slots=2)


@pytest.fixture(scope="module")
def empty_server():
    if LabServer.from_env().external_url:
        pytest.skip("needs an embedded server of its own")
    server = LabServer().start()
    yield server
    server.stop()


def ready(server, name: str) -> bool:
    return bool(server.client().is_model_ready(name))


def test_nothing_is_loaded_at_start_and_a_run_loads_what_it_needs(empty_server):
    index = empty_server.client().get_model_repository_index()
    assert [m["name"] for m in index if m.get("state") == "READY"] == []
    result = driver.run(empty_server, Scenario("asr_sequence_direct", ["LOADED WHEN NEEDED"]))
    assert result.all_intact and ready(empty_server, "asr_sequence_direct")
    assert "asr_sequence_direct" in empty_server.models.loaded()


def test_over_budget_the_least_recently_used_idle_model_is_unloaded(empty_server):
    empty_server.models = LoadedModels(empty_server, budget=2)
    deployer = Deployer(empty_server)
    a = deployer.apply(LabSettings(slots=2, instances=1), owner="a").model
    b = deployer.apply(LabSettings(slots=3, instances=1), owner="b").model
    assert ready(empty_server, a) and ready(empty_server, b)
    deployer.apply(LabSettings(slots=2, instances=1), owner="a")  # a used again: b is now the oldest
    c = deployer.apply(LabSettings(slots=4, instances=1), owner="c").model
    assert ready(empty_server, a) and ready(empty_server, c) and not ready(empty_server, b)
    assert empty_server.models.in_use() <= 2


def test_a_model_with_a_run_in_progress_is_never_unloaded_and_a_full_budget_says_so(empty_server):
    empty_server.models = LoadedModels(empty_server, budget=1, capacity_wait_s=1.0)
    deployer = Deployer(empty_server)
    held = deployer.apply(LabSettings(slots=2, instances=1), owner="a").model
    inside, release = threading.Event(), threading.Event()

    def running() -> None:
        with run_queue.for_server(empty_server.url).lease(held):
            inside.set()
            release.wait(30)

    thread = threading.Thread(target=running)
    thread.start()
    try:
        assert inside.wait(10)
        with pytest.raises(LabError) as refused:
            deployer.apply(LabSettings(slots=3, instances=1), owner="b")
        assert refused.value.code == "capacity_full"
        assert refused.value.values["budget"] == 1 and refused.value.values["need"] == 1
        assert ready(empty_server, held)
    finally:
        release.set()
        thread.join(10)
    # The run ended: now the idle model makes room.
    other = deployer.apply(LabSettings(slots=3, instances=1), owner="b").model
    assert ready(empty_server, other) and not ready(empty_server, held)


def test_an_unloaded_set_up_is_loaded_again_by_its_next_run(empty_server):
    empty_server.models = LoadedModels(empty_server, budget=1)
    deployer = Deployer(empty_server)
    first = deployer.apply(LabSettings(slots=2, instances=1), owner="a").model
    deployer.apply(LabSettings(slots=3, instances=1), owner="b")
    assert not ready(empty_server, first)
    assert driver.run(empty_server, Scenario(first, ["BACK AGAIN"])).all_intact


def test_loads_of_different_models_run_side_by_side(empty_server):
    empty_server.models = LoadedModels(empty_server, budget=8)
    deployer = Deployer(empty_server)
    spans = {}

    def load(slots: int) -> None:
        start = time.monotonic()
        deployer.apply(LabSettings(slots=slots, instances=1, queue_delay_us=0, scheduler="dynamic"), owner=str(slots))
        spans[slots] = (start, time.monotonic())

    threads = [threading.Thread(target=load, args=(s,)) for s in (5, 6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    (a0, a1), (b0, b1) = spans[5], spans[6]
    assert a0 < b1 and b0 < a1, f"the two loads did not overlap: {spans}"


def test_the_budget_comes_from_the_environment_or_the_machine(monkeypatch):
    monkeypatch.setenv("TRITON_LAB_MAX_STUBS", "9")
    assert default_budget() == 9
    monkeypatch.setenv("TRITON_LAB_MAX_STUBS", "lots")
    with pytest.raises(ValueError, match="TRITON_LAB_MAX_STUBS"):
        default_budget()
    monkeypatch.delenv("TRITON_LAB_MAX_STUBS")
    assert default_budget() >= 4


def test_a_model_another_process_loaded_is_used_as_it_is_not_reloaded(lab_server):
    # A second handle on the session's server (as the app, a CLI or another app process has):
    # the shipped model is already serving, so asking for it must not reload it under its users.
    if lab_server.log_path is None:
        pytest.skip("needs the server's log to count loads")

    def loads() -> int:
        return lab_server.log_path.read_text(errors="replace").count("successfully loaded 'asr_sequence_direct'")

    assert lab_server.client().is_model_ready("asr_sequence_direct")
    before = loads()
    assert before >= 1, "the log names each load; without it this test could not see a reload"
    other = LabServer(url=lab_server.url)
    other.models.ensure("asr_sequence_direct")
    assert "asr_sequence_direct" in other.models.loaded()
    time.sleep(0.5)
    assert loads() == before
