"""Loading on first use, within a budget of stub processes, on a server of its own.

The session's shared server preloads everything for the other tests; these need an empty one
to see what a lazy start loads, what the budget unloads and what it refuses. Each test finds
that server empty, whatever ran before it: the fixture unloads what the test loaded.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from app.lab import database
from app.lab.deployment import Deployer, LabSettings, SharedLoadedModels, loaded_models
from app.lab.deployment.loaded_models import LoadedModels, default_budget
from app.lab.observation import LogCode, LogWindow
from app.lab.problems import LabError
from app.lab.scenario.scenario import Scenario
from app.lab.server import LabServer
from app.lab.traffic import run_queue
from app.recogniser.engine import driver
from tests.server_calls import ask
from tests.waiting import wait_for, wait_for_log

pytestmark = pytest.mark.server  # each test starts an embedded Triton of its own

ONE = dict(instances=1, slots=2)


def ready(server, name: str) -> bool:
    return bool(ask(server, "is_model_ready", name))


def ready_in_repository(server) -> list[str]:
    return [m["name"] for m in ask(server, "get_model_repository_index") if m.get("state") == "READY"]


@pytest.fixture(scope="module")
def own_server() -> Iterator[tuple[LabServer, list[str]]]:
    """A server of this module's own, and what was ready on it right after it started."""
    if LabServer.from_env().external_url:
        pytest.skip("needs an embedded server of its own")
    server = LabServer().start()
    try:
        yield server, ready_in_repository(server)
    finally:
        server.stop()


@pytest.fixture()
def empty_server(own_server):
    """The module's server with nothing loaded and a fresh LoadedModels; what the test loads
    (through whichever LoadedModels it set) is unloaded when it ends, pass or fail."""
    server, _ = own_server
    server.models = LoadedModels(server)
    yield server
    names = set(server.models.loaded()) | set(ready_in_repository(server))
    for name in names:
        ask(server, "unload_model", name)
    for name in names:
        wait_for(lambda name=name: not ready(server, name), f"{name} to unload")


def test_nothing_is_loaded_at_start_and_a_run_loads_what_it_needs(own_server, empty_server):
    _, ready_at_start = own_server
    assert ready_at_start == []
    assert not ready(empty_server, "asr_sequence_direct")
    result = driver.run(empty_server, Scenario("asr_sequence_direct", ["LOADED WHEN NEEDED"]))
    assert result.all_intact and ready(empty_server, "asr_sequence_direct")
    assert "asr_sequence_direct" in empty_server.models.loaded()


def test_over_budget_the_least_recently_used_idle_model_is_unloaded(empty_server):
    empty_server.models = LoadedModels(empty_server, budget=2)
    deployer = Deployer(empty_server)
    a = deployer.apply(LabSettings(slots=2, instances=1)).model
    b = deployer.apply(LabSettings(slots=3, instances=1)).model
    assert ready(empty_server, a) and ready(empty_server, b)
    deployer.apply(LabSettings(slots=2, instances=1))  # a used again: b is now the oldest
    c = deployer.apply(LabSettings(slots=4, instances=1)).model
    assert ready(empty_server, a) and ready(empty_server, c) and not ready(empty_server, b)
    assert empty_server.models.in_use() <= 2


def test_a_model_with_a_run_in_progress_is_never_unloaded_and_a_full_budget_says_so(empty_server):
    empty_server.models = LoadedModels(empty_server, budget=1, capacity_wait_s=1.0)
    deployer = Deployer(empty_server)
    held = deployer.apply(LabSettings(slots=2, instances=1)).model
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
            deployer.apply(LabSettings(slots=3, instances=1))
        assert refused.value.code == "capacity_full"
        assert refused.value.values["budget"] == 1 and refused.value.values["need"] == 1
        assert ready(empty_server, held)
    finally:
        release.set()
        thread.join(10)
    # The run ended: now the idle model makes room.
    other = deployer.apply(LabSettings(slots=3, instances=1)).model
    assert ready(empty_server, other) and not ready(empty_server, held)


def test_an_unloaded_set_up_is_loaded_again_by_its_next_run(empty_server):
    empty_server.models = LoadedModels(empty_server, budget=1)
    deployer = Deployer(empty_server)
    first = deployer.apply(LabSettings(slots=2, instances=1)).model
    deployer.apply(LabSettings(slots=3, instances=1))
    assert not ready(empty_server, first)
    assert driver.run(empty_server, Scenario(first, ["BACK AGAIN"])).all_intact


def test_loads_of_different_models_run_side_by_side(empty_server):
    # By the server's own log: the second load starts once the first is under way (its
    # "loading:" line is written), and Triton begins it before the first is done. Loads one at
    # a time would write the second "loading:" only after the first "successfully loaded".
    empty_server.models = LoadedModels(empty_server, budget=8)
    deployer = Deployer(empty_server)
    first, second = (LabSettings(slots=slots, instances=1, queue_delay_us=0, scheduler="dynamic") for slots in (5, 6))
    window = LogWindow.start(empty_server)
    errors: list[BaseException] = []

    def apply(settings: LabSettings) -> None:
        try:
            deployer.apply(settings)
        except BaseException as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=apply, args=(first,))]
    threads[0].start()
    wait_for_log(window, lambda es: any(e.code is LogCode.MODEL_LOADING for e in es), "the first load start")
    threads.append(threading.Thread(target=apply, args=(second,)))
    threads[1].start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    events = [(e.code, e.model) for e in window.select(codes=[LogCode.MODEL_LOADING, LogCode.MODEL_LOADED])]
    assert [code for code, _ in events[:2]] == [LogCode.MODEL_LOADING] * 2, f"the loads ran one after the other: {events}"
    assert len({model for _, model in events}) == 2


def test_the_budget_comes_from_the_environment_or_the_machine(monkeypatch):
    monkeypatch.setenv("TRITON_LAB_MAX_STUBS", "9")
    assert default_budget() == 9
    monkeypatch.setenv("TRITON_LAB_MAX_STUBS", "lots")
    with pytest.raises(ValueError, match="TRITON_LAB_MAX_STUBS"):
        default_budget()
    monkeypatch.delenv("TRITON_LAB_MAX_STUBS")
    assert default_budget() >= 4


def test_a_containers_memory_limit_is_the_memory_the_budget_starts_from(monkeypatch, tmp_path):
    limit = tmp_path / "memory.max"
    limit.write_text("1073741824\n")  # 1 GiB, as cgroup v2 writes it
    monkeypatch.setattr(loaded_models, "CGROUP_LIMITS", (str(limit),))
    assert loaded_models.machine_memory_mb() == 1024
    monkeypatch.delenv(loaded_models.MEMORY_ENV, raising=False)
    assert loaded_models.default_memory_budget_mb() == 1024  # never below 1024
    limit.write_text("max\n")  # no limit: the machine's memory
    assert loaded_models.machine_memory_mb() > 1024


def test_a_model_another_process_loaded_is_used_as_it_is_not_reloaded(lab_server):
    # A second handle on the session's server (as the app, a CLI or another app process has):
    # the shipped model is already serving, so asking for it must not reload it under its users.
    if lab_server.log_path is None:
        pytest.skip("needs the server's log to count loads")
    lab_server.models.ensure("asr_sequence_direct")  # serving, whatever earlier tests unloaded
    assert "successfully loaded 'asr_sequence_direct'" in lab_server.log_path.read_text(errors="replace"), (
        "the log names each load; without it this test could not see a reload")
    window = LogWindow.start(lab_server)
    other = LabServer(url=lab_server.url)
    other.models.ensure("asr_sequence_direct")
    assert "asr_sequence_direct" in other.models.loaded()
    # Triton writes (and flushes) "successfully loaded" before a load request returns
    # (core r24.10 model_lifecycle.cc), so a reload by ensure() would be in the window by now.
    assert window.select(model="asr_sequence_direct", codes=[LogCode.MODEL_LOADING, LogCode.MODEL_LOADED]) == []


def test_replicas_sharing_a_server_count_one_budget_and_never_unload_what_another_runs(empty_server, postgres_url,
                                                                                       monkeypatch):
    # Two app replicas: each its own LabServer on the same Triton, with the class on PostgreSQL.
    monkeypatch.setenv(database.URL_ENV, postgres_url)
    one, two = LabServer(url=empty_server.url), LabServer(url=empty_server.url)
    for replica in (one, two):
        assert isinstance(replica.models, SharedLoadedModels)
        replica.models.budget, replica.models.capacity_wait_s = 2, 1.0
    a = Deployer(one).apply(LabSettings(slots=2, instances=1)).model
    b = Deployer(two).apply(LabSettings(slots=3, instances=1)).model
    assert one.models.in_use() == two.models.in_use() == 2, "one budget, whichever replica loaded what"
    assert set(one.models.loaded()) == {a, b}
    inside, release = {a: threading.Event(), b: threading.Event()}, threading.Event()

    def running(replica, model) -> None:
        with run_queue.for_server(replica.url).lease(model):
            inside[model].set()
            release.wait(30)

    threads = [threading.Thread(target=running, args=(one, a))]
    threads[0].start()
    try:
        assert inside[a].wait(10)
        # Replica two needs room: b is idle, a runs on replica one, so b goes.
        c = Deployer(two).apply(LabSettings(slots=4, instances=1)).model
        assert ready(empty_server, a) and ready(empty_server, c) and not ready(empty_server, b)
        threads.append(threading.Thread(target=running, args=(two, c)))
        inside[c] = threading.Event()
        threads[1].start()
        assert inside[c].wait(10)
        with pytest.raises(LabError) as refused:  # both loaded deployments run: nothing may go
            Deployer(one).apply(LabSettings(slots=5, instances=1))
        assert refused.value.code == "capacity_full" and refused.value.values["in_use"] == 2
        assert ready(empty_server, a) and ready(empty_server, c)
    finally:
        release.set()
        for thread in threads:
            thread.join(10)
    d = Deployer(one).apply(LabSettings(slots=5, instances=1)).model
    assert ready(empty_server, d) and one.models.in_use() <= 2


# -- the memory budget ---------------------------------------------------------------------------

def measured_set_up(server, deployer: Deployer) -> tuple[str, float]:
    """Load a one-instance set-up on the module's server; its name and the private MB the lab measured."""
    name = deployer.apply(LabSettings(slots=2, instances=1)).model
    cost = {d.name: d for d in server.models.memory().deployments}[name]
    assert cost.measured and cost.instances == 1
    return name, cost.cost_mb


def test_a_deployments_cost_is_the_private_memory_its_processes_hold(empty_server):
    name, cost_mb = measured_set_up(empty_server, Deployer(empty_server))
    now = empty_server.model_memory_mb([name], {name: 1})[name]
    # The lab books what the stub held after its load and a margin for growth; it grows little with use.
    assert cost_mb == pytest.approx(now * (1 + loaded_models.GROWTH_MARGIN), rel=0.2) and now > 1
    # A second set-up of the same model code is expected to cost what the first did, per instance.
    assert empty_server.models._expected_mb("unseen", deployments_config(instances=2)) == pytest.approx(2 * cost_mb)


def deployments_config(instances: int):
    from app.lab.deployment import deployments
    config = deployments.read_config("asr_sequence_direct")
    del config.instance_group[:]
    config.instance_group.add(count=instances)
    return config


class RecordingModels(LoadedModels):
    """LoadedModels that note what is booked each time a load is let in (the budget's promise)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.admitted: list[float] = []

    def _reserve(self, *args, **kwargs) -> None:
        super()._reserve(*args, **kwargs)
        with self._cond:
            self.admitted.append(self._in_use_mb())


def test_a_class_larger_than_the_memory_budget_waits_its_turn_and_every_run_finishes(empty_server):
    models = RecordingModels(empty_server, budget=64, memory_budget_mb=10_000, capacity_wait_s=120.0)
    empty_server.models = models
    deployer = Deployer(empty_server)
    _, cost_mb = measured_set_up(empty_server, deployer)
    budget = 2.6 * cost_mb  # two one-instance set-ups fit, a third does not
    models.memory_budget_mb = budget
    models.admitted.clear()  # the first load was let in under the large budget
    results: dict[int, object] = {}

    def learner(slots: int) -> None:
        try:
            model = deployer.apply(LabSettings(slots=slots, instances=1)).model
            results[slots] = driver.run(empty_server, Scenario(model, [f"LEARNER {'ABCDE'[slots - 3]}"]))
        except BaseException as err:  # reported below
            results[slots] = err

    learners = [threading.Thread(target=learner, args=(slots,)) for slots in range(3, 8)]  # five set-ups, all new
    for thread in learners:
        thread.start()
    for thread in learners:
        thread.join(300)
    assert all(getattr(result, "all_intact", False) for result in results.values()), {
        slots: result for slots, result in results.items() if not getattr(result, "all_intact", False)}
    assert len(results) == 5
    # Each load was let in only while what was booked, itself included, fitted the budget.
    assert models.admitted and max(models.admitted) <= budget, (models.admitted, budget)
    report = empty_server.models.memory()
    costs = [d.cost_mb for d in report.deployments] + [u.cost_mb for u in report.unloaded]
    assert 5 * min(costs) > budget, "the class needed more than the budget"
    assert report.unloaded, "set-ups nobody was running were unloaded to make room"
    assert all(u.made_room_for != u.name for u in report.unloaded)
    assert empty_server.alive()


def test_a_load_that_finds_the_memory_budget_full_of_runs_waits_saying_why_then_is_refused(empty_server):
    empty_server.models = LoadedModels(empty_server, budget=64, memory_budget_mb=10_000, capacity_wait_s=1.0)
    held, cost_mb = measured_set_up(empty_server, Deployer(empty_server))
    empty_server.models.memory_budget_mb = 1.5 * cost_mb
    inside, release = threading.Event(), threading.Event()

    def running() -> None:
        with run_queue.for_server(empty_server.url).lease(held):
            inside.set()
            release.wait(30)

    thread = threading.Thread(target=running)
    thread.start()
    waits: list = []
    try:
        assert inside.wait(10)
        # The lab page's path: another set-up of the same code is expected to cost what the first did.
        with pytest.raises(LabError) as refused:
            Deployer(empty_server).apply(LabSettings(slots=3, instances=1), on_wait=waits.append)
        assert refused.value.code == "memory_full" and refused.value.values["waited"] == 1
        assert waits and all(w.for_memory and w.need_mb == pytest.approx(cost_mb) for w in waits)
        assert waits[0].budget_mb == pytest.approx(1.5 * cost_mb) and waits[0].in_use_mb == pytest.approx(cost_mb)
        assert 0 < waits[-1].expected_s < waits[0].expected_s <= 1.0  # how long it may still wait
        # Nothing of the classifier was measured yet: it is expected to cost what the costliest instance did.
        waits.clear()
        with pytest.raises(LabError):
            empty_server.models.ensure("sentiment", on_wait=waits.append)
        assert waits and waits[0].need_mb == pytest.approx(cost_mb)
        assert ready(empty_server, held) and not ready(empty_server, "sentiment")
    finally:
        release.set()
        thread.join(10)
    # Two instances of the recogniser can never fit: refused at once, without waiting.
    with pytest.raises(LabError) as never:
        empty_server.models.ensure("asr_sequence_oldest", on_wait=waits.append)
    assert never.value.code == "memory_full" and never.value.values["waited"] == 0
