"""The run queue on its own (no server): one run per deployment, a cap on parallel runs, arrival order."""
from __future__ import annotations

import threading
import time

from app.lab.traffic.run_queue import RunQueue


def _run_all(queue: RunQueue, jobs: list[tuple[str, float]], stagger_s: float = 0.02):
    """Start jobs (model, seconds) in order; return (model, start, end, waits) per job."""
    out = [None] * len(jobs)

    def job(i: int, model: str, seconds: float) -> None:
        waits = []
        with queue.lease(model, on_wait=waits.append):
            start = time.monotonic()
            time.sleep(seconds)
            out[i] = (model, start, time.monotonic(), waits)

    threads = []
    for i, (model, seconds) in enumerate(jobs):
        threads.append(threading.Thread(target=job, args=(i, model, seconds)))
        threads[-1].start()
        time.sleep(stagger_s)
    for thread in threads:
        thread.join(10)
    return out


def _overlap(a, b) -> bool:
    return a[1] < b[2] and b[1] < a[2]


def test_runs_of_one_deployment_never_overlap_and_go_in_arrival_order():
    done = _run_all(RunQueue(parallel=4), [("m", 0.15)] * 4)
    starts = [d[1] for d in done]
    assert starts == sorted(starts), "first come, first served"
    for i in range(len(done) - 1):
        assert not _overlap(done[i], done[i + 1])


def test_runs_of_different_deployments_overlap_up_to_the_cap():
    done = _run_all(RunQueue(parallel=2), [("a", 0.3), ("b", 0.3), ("c", 0.3)])
    assert _overlap(done[0], done[1]), "two deployments, two places: side by side"
    assert done[2][1] >= min(done[0][2], done[1][2]), "the third waits for a place"
    assert done[2][3] and done[2][3][0].position == 1


def test_a_waiting_run_hears_its_place():
    done = _run_all(RunQueue(parallel=1), [("m", 0.3), ("m", 0.05), ("m", 0.05)], stagger_s=0.05)
    assert done[0][3] == []  # nobody ahead
    assert done[1][3] and done[1][3][0].position == 1
    assert done[2][3] and done[2][3][0].position == 2
    assert all(w.expected_s > 0 for w in done[2][3])
    assert min(w.position for w in done[2][3]) == 1, "its place moves up as the first run ends"


def test_the_busy_set_holds_running_deployments_only():
    queue = RunQueue(parallel=1)
    inside = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with queue.lease("a"):
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=hold)
    thread.start()
    inside.wait(5)
    waiter = threading.Thread(target=lambda: queue.lease("b").__enter__())
    waiter.daemon = True
    waiter.start()
    time.sleep(0.3)
    assert queue.busy() == {"a"} and queue.waiting() == 1
    release.set()
    thread.join(5)


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
