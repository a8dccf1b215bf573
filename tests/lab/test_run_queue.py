"""The run queue on its own (no Triton): one run per deployment, a cap on parallel runs, arrival order.

Every rule is proved twice: on this process's queue (the class store in an SQLite file) and on
the queue app replicas share through a real PostgreSQL. Each run holds its lease until the test
lets it go, and each arrives only once the queue shows the one before it waiting: the order is
made by the test, never by how fast threads start. Replicas are processes of their own where it
matters (a replica killed while it holds a lease), else queues under two replica names.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest

from app.lab.paths import REPO_ROOT
from app.lab.traffic.run_queue import RunQueue, SharedRunQueue
from tests.waiting import wait_for


@pytest.fixture(params=["process", pytest.param("shared", marks=pytest.mark.server)])
def make_queue(request):
    """make_queue(parallel, replica=...) -> a queue of the kind under test; shared queues of one
    test talk about one server on one database, as replicas of one class do."""
    if request.param == "process":
        return lambda parallel, replica=None: RunQueue(parallel=parallel)
    db_url, server = request.getfixturevalue("postgres_url"), f"triton-{uuid.uuid4().hex[:8]}:8000"
    return lambda parallel, replica="replica-a": SharedRunQueue(server, db_url, parallel=parallel, replica=replica)


class Run:
    """One run in a thread: holds `model`'s lease until released; records what it heard while waiting."""

    def __init__(self, queue, model: str, entered: list):
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


def arrive(queue, runs: list[Run], model: str, entered: list, waiting_on=None) -> Run:
    """Start one more run and return once the queue holds it (inside, or counted as waiting)."""
    run = Run(queue, model, entered)
    inside_before = sum(r.inside.is_set() for r in runs)
    counter = waiting_on or queue  # another replica's queue counts the same tickets
    waiting_before = counter.waiting()
    run.thread.start()
    wait_for(lambda: run.inside.is_set() or counter.waiting() > waiting_before, f"run {len(runs) + 1} to arrive")
    assert sum(r.inside.is_set() for r in runs) == inside_before, "a run arriving let another in"
    runs.append(run)
    return run


def test_runs_of_one_deployment_never_overlap_and_go_in_arrival_order(make_queue):
    queue, runs, entered = make_queue(4), [], []
    for _ in range(4):
        arrive(queue, runs, "m", entered)
    assert entered == runs[:1] and queue.waiting() == 3
    for i, run in enumerate(runs):
        wait_for(run.inside.is_set, f"run {i + 1} to get the lease")
        assert entered == runs[: i + 1], "first come, first served, one at a time"
        assert queue.busy() == {"m"}
        run.finish()
    assert queue.busy() == set() and queue.waiting() == 0


def test_runs_of_different_deployments_overlap_up_to_the_cap(make_queue):
    queue, runs, entered = make_queue(2), [], []
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


def test_a_waiting_run_hears_its_place(make_queue):
    queue, runs, entered = make_queue(1), [], []
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


def test_the_busy_set_holds_running_deployments_only(make_queue):
    queue, runs, entered = make_queue(1), [], []
    a = arrive(queue, runs, "a", entered)
    b = arrive(queue, runs, "b", entered)
    assert queue.busy() == {"a"} and queue.waiting() == 1
    a.finish()
    wait_for(b.inside.is_set, "b to start once a is done")
    assert queue.busy() == {"b"} and queue.waiting() == 0
    b.finish()
    assert queue.busy() == set()


def test_one_thread_may_hold_a_second_deployment_and_re_enter_its_own(make_queue):
    queue = make_queue(1)
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


def test_replicas_sharing_one_server_take_turns_on_a_deployment_in_arrival_order(postgres_url):
    server = f"triton-{uuid.uuid4().hex[:8]}:8000"
    replicas = [SharedRunQueue(server, postgres_url, parallel=4, replica=f"replica-{n}") for n in range(3)]
    runs, entered = [], []
    for n in range(6):  # arrivals alternate between the replicas
        arrive(replicas[n % 3], runs, "asr_sequence_direct", entered, waiting_on=replicas[0])
    assert entered == runs[:1] and replicas[2].waiting() == 5
    for i, run in enumerate(runs):
        wait_for(run.inside.is_set, f"run {i + 1} to get the lease")
        assert entered == runs[: i + 1], "one at a time across replicas, first come first served"
        assert all(r.busy() == {"asr_sequence_direct"} for r in replicas)
        run.finish()
    assert replicas[1].busy() == set() and replicas[1].waiting() == 0


def test_the_cap_on_parallel_runs_counts_every_replicas_runs(postgres_url):
    server = f"triton-{uuid.uuid4().hex[:8]}:8000"
    one, two = (SharedRunQueue(server, postgres_url, parallel=2, replica=name) for name in ("one", "two"))
    runs, entered = [], []
    a = arrive(one, runs, "a", entered)
    b = arrive(two, runs, "b", entered)
    c = arrive(one, runs, "c", entered, waiting_on=two)
    assert a.inside.is_set() and b.inside.is_set() and not c.inside.is_set(), "two places on the server, not per replica"
    b.finish()
    wait_for(c.inside.is_set, "c to take the place b freed on the other replica")
    for run in (a, c):
        run.finish()


HOLDER = """
import sys, threading
from app.lab.traffic.run_queue import SharedRunQueue
queue = SharedRunQueue(sys.argv[1], sys.argv[2], parallel=1, ttl_s=float(sys.argv[3]), replica="doomed")
with queue.lease("m"):
    print("held", flush=True)
    threading.Event().wait()
"""


def test_a_replica_killed_while_it_holds_a_lease_blocks_the_class_no_longer_than_the_ttl(postgres_url):
    server, ttl_s = f"triton-{uuid.uuid4().hex[:8]}:8000", 2.0
    doomed = subprocess.Popen([sys.executable, "-c", HOLDER, server, postgres_url, str(ttl_s)], cwd=REPO_ROOT,
                              stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert doomed.stdout.readline().strip() == "held"  # its lease is in the database now
        survivor = SharedRunQueue(server, postgres_url, parallel=1, ttl_s=ttl_s, replica="survivor")
        assert survivor.busy() == {"m"}
        os.killpg(doomed.pid, signal.SIGKILL)  # no clean-up runs: its heartbeats just stop
        doomed.wait(10)
        waits, got = [], threading.Event()
        killed_at = time.monotonic()

        def run() -> None:
            with survivor.lease("m", on_wait=waits.append):
                got.set()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        wait_for(got.is_set, "the survivor to get the dead replica's deployment", timeout_s=ttl_s + 10)
        freed_after_s = time.monotonic() - killed_at
        thread.join(10)
        assert waits and waits[0].position == 1, "it waited on the dead replica's lease first"
        assert freed_after_s <= ttl_s + 2, f"freed after {freed_after_s:.1f} s, more than the {ttl_s:g} s TTL allows"
    finally:
        if doomed.poll() is None:
            os.killpg(doomed.pid, signal.SIGKILL)
            doomed.wait(10)
