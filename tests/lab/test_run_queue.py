"""The run queue on its own (no server): one run per deployment, a cap on parallel runs, arrival order.

Each run holds its lease until the test lets it go, and each arrives only once the queue shows
the one before it waiting: the order is made by the test, never by how fast threads start.
"""
from __future__ import annotations

import threading

from app.lab.traffic.run_queue import RunQueue
from tests.waiting import wait_for


class Run:
    """One run in a thread: holds `model`'s lease until released; records what it heard while waiting."""

    def __init__(self, queue: RunQueue, model: str, entered: list):
        self.model = model
        self.waits: list = []
        self.inside = threading.Event()
        self.release = threading.Event()
        self._queue, self._entered = queue, entered
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with self._queue.lease(self.model, on_wait=self.waits.append):
            self._entered.append(self)
            self.inside.set()
            self.release.wait(30)

    def finish(self) -> None:
        self.release.set()
        self.thread.join(10)
        assert not self.thread.is_alive()


def arrive(queue: RunQueue, runs: list[Run], model: str, entered: list) -> Run:
    """Start one more run and return once the queue holds it (inside, or counted as waiting)."""
    run = Run(queue, model, entered)
    inside_before = sum(r.inside.is_set() for r in runs)
    waiting_before = queue.waiting()
    run.thread.start()
    wait_for(lambda: run.inside.is_set() or queue.waiting() > waiting_before, f"run {len(runs) + 1} to arrive")
    assert sum(r.inside.is_set() for r in runs) == inside_before, "a run arriving let another in"
    runs.append(run)
    return run


def test_runs_of_one_deployment_never_overlap_and_go_in_arrival_order():
    queue, runs, entered = RunQueue(parallel=4), [], []
    for _ in range(4):
        arrive(queue, runs, "m", entered)
    assert entered == runs[:1] and queue.waiting() == 3
    for i, run in enumerate(runs):
        wait_for(run.inside.is_set, f"run {i + 1} to get the lease")
        assert entered == runs[: i + 1], "first come, first served, one at a time"
        assert queue.busy() == {"m"}
        run.finish()
    assert queue.busy() == set() and queue.waiting() == 0


def test_runs_of_different_deployments_overlap_up_to_the_cap():
    queue, runs, entered = RunQueue(parallel=2), [], []
    a, b, c = (arrive(queue, runs, model, entered) for model in ("a", "b", "c"))
    assert a.inside.is_set() and b.inside.is_set(), "two deployments, two places: side by side"
    assert not c.inside.is_set() and queue.waiting() == 1, "the third waits for a place"
    wait_for(lambda: c.waits, "the third run to hear its place")
    assert c.waits[0].position == 1
    a.finish()
    wait_for(c.inside.is_set, "the third run to take the freed place")
    assert queue.busy() == {"b", "c"}
    for run in (b, c):
        run.finish()


def test_a_waiting_run_hears_its_place():
    queue, runs, entered = RunQueue(parallel=1), [], []
    first, second, third = (arrive(queue, runs, "m", entered) for _ in range(3))
    wait_for(lambda: second.waits and third.waits, "both waiting runs to hear their places")
    assert first.waits == []  # nobody ahead
    assert second.waits[0].position == 1 and third.waits[0].position == 2
    assert all(w.expected_s > 0 for w in second.waits + third.waits)
    first.finish()
    wait_for(second.inside.is_set, "the second run to start")
    wait_for(lambda: any(w.position == 1 for w in third.waits), "the third run to hear it moved up")
    for run in (second, third):
        run.finish()


def test_the_busy_set_holds_running_deployments_only():
    queue, runs, entered = RunQueue(parallel=1), [], []
    a = arrive(queue, runs, "a", entered)
    b = arrive(queue, runs, "b", entered)
    assert queue.busy() == {"a"} and queue.waiting() == 1
    a.finish()
    wait_for(b.inside.is_set, "b to start once a is done")
    assert queue.busy() == {"b"} and queue.waiting() == 0
    b.finish()
    assert queue.busy() == set()


def test_one_thread_may_hold_a_second_deployment_and_re_enter_its_own():
    queue = RunQueue(parallel=1)
    finished = threading.Event()

    def exercise() -> None:
        # re-entered: must not wait for itself; the cap must not make it wait for its own lease either
        with queue.lease("a"), queue.lease("a"), queue.lease("b"):
            finished.set()

    thread = threading.Thread(target=exercise)
    thread.start()
    thread.join(3)
    assert finished.is_set()
    assert queue.busy() == set()
