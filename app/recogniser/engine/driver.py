"""Fire interleaved streaming sessions at a recogniser deployment and record every request.

One thread per session in flight, each with its own tritonclient (the HTTP client is not
thread-safe). Every request carries a request ID "<run>:<session>:<chunk>" so the server's
trace can be joined back to it.
"""
from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from app.lab.observation import run_log, server_log, server_stats, server_trace, state_cells
from app.lab.progress import REQUESTS, Progress
from app.lab.records import RunResult, SessionPlan
from app.lab.scenario.ids import unique_ids
from app.lab.scenario.scenario import Scenario
from app.lab.traffic import Link, ServerView, open_link, run_queue
from app.recogniser.engine.audio import utterance
from app.recogniser.engine.judgement.verdicts import judge

if TYPE_CHECKING:
    import tritonclient.http as http

OUTPUTS = ("SYMBOL", "INSTANCE", "SLOT", "BATCH", "STATE_IN", "STATE_OWNER")


def plan_sessions(scenario: Scenario, default_url: str) -> list[SessionPlan]:
    symbols = scenario.validate()
    count = len(symbols)
    tags = unique_ids(count)
    corrids = scenario.corrids if scenario.corrids is not None else tags
    plans = []
    for i, syms in enumerate(symbols):
        rng = np.random.default_rng([scenario.seed, i])
        think = scenario.think_ms_by_session[i] if scenario.think_ms_by_session else scenario.think_ms
        plans.append(
            SessionPlan(
                index=i,
                text=scenario.texts[i].upper(),
                symbols=syms,
                tag=tags[i],
                corrid=corrids[i],
                think_ms=think,
                start_s=i * scenario.stagger_ms / 1000.0,
                send_count=min(len(syms), scenario.abandon.get(i, len(syms))),
                url=(scenario.urls[i % len(scenario.urls)] if scenario.urls else default_url),
                audio=utterance(syms, rng, scenario.noise),
            )
        )
    return plans


def is_sequence_model(client: http.InferenceServerClient, model: str) -> bool:
    return "sequence_batching" in client.get_model_config(model)


def run(server: ServerView, scenario: Scenario, progress: Progress | None = None, on_wait: run_queue.OnWait | None = None) -> RunResult:
    """Run one scenario against `server` (a LabServer) and judge every session.

    The run holds its deployment alone (run_queue): other runs of it wait, so this run's slots,
    trace, statistics and log hold its own traffic only, and its outcome is the one its settings
    give. `on_wait` hears its place while it waits. A deployment not loaded yet is loaded first."""
    scenario.validate()
    with run_queue.hold(server, scenario.model, on_wait):
        return _run(server, scenario, progress)


def _run(server: ServerView, scenario: Scenario, progress: Progress | None) -> RunResult:
    plans = plan_sessions(scenario, server.grpc_url if scenario.transport.uses_grpc else server.url)
    control = server.client()
    sequence = scenario.sequence if scenario.sequence is not None else is_sequence_model(control, scenario.model)
    traced = server_trace.enable(control, scenario.model) and server.trace_dir is not None
    before = server_stats.snapshot(control, server.metrics_url, scenario.model)
    run_id = secrets.token_hex(4)
    total = sum(p.send_count for p in plans)
    done = [0]
    lock = threading.Lock()
    # A request's row, the requests table to be: columns of several types, filled in steps (_row, record), so untyped.
    rows: list[dict[str, Any]] = []
    window = server_log.LogWindow.start(server)
    cells = state_cells.Sampler(server.metrics_url, scenario.model).start()
    t0 = time.perf_counter()

    def tick(row: dict[str, Any]) -> None:
        with lock:
            rows.append(row)
            done[0] += 1
            if progress:
                progress(done[0], total, REQUESTS)

    def session(plan: SessionPlan) -> None:
        delay = plan.start_s - (time.perf_counter() - t0)
        if delay > 0:
            time.sleep(delay)
        link = open_link(scenario.transport, plan.url, scenario.in_flight)
        try:
            _converse(link, scenario, plan, sequence, run_id, t0, tick)
        finally:
            link.close()

    workers = scenario.concurrency or len(plans)
    try:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="session") as pool:
            for future in [pool.submit(session, p) for p in plans]:
                future.result()
        wall = time.perf_counter() - t0
    finally:
        cells.stop()

    answered = sum(1 for row in rows if not row["error"])
    after = server_stats.snapshot_after(control, server.metrics_url, scenario.model, before, answered)
    requests = pd.DataFrame(rows).sort_values(["t_send", "session", "chunk"]).reset_index(drop=True)
    if traced:
        trace = server_trace.collect(server.trace_dir, run_id, expected=len(requests))
        requests = _join_trace(requests, trace)
    sessions = judge(requests, plans)
    log = run_log.capture(window, [scenario.model], [p.corrid for p in plans])
    return RunResult(run_id, scenario, plans, requests, sessions, server_stats.delta(before, after), traced, wall,
                     log, cells.frame())


def _converse(link: Link, scenario: Scenario, plan: SessionPlan, sequence: bool, run_id: str, t0: float,
              tick: Callable[[dict[str, Any]], None]) -> None:
    """Send one session's chunks over `link`, pacing them as the scenario says.

    Serial (in_flight 1): reply, think, next chunk. Pipelined: send, think, next chunk while
    earlier replies are still out. A refused chunk ends the session, as it would a real
    client's; chunks already in flight still get their records.
    """
    assert plan.audio is not None  # plan_sessions gives every plan its audio
    audio = plan.audio
    jitter = np.random.default_rng([scenario.seed, plan.index, 1])
    refused = threading.Event()
    serial = scenario.in_flight == 1

    def pause_after(k: int) -> float:
        pause = plan.think_ms + (jitter.uniform(-1, 1) * scenario.jitter_ms if scenario.jitter_ms else 0)
        after, extra = scenario.pauses.get(plan.index, (-1, 0.0))
        return (pause + (extra if k == after else 0.0)) / 1000.0

    for k in range(plan.send_count):
        link.acquire()  # serial: waits for the previous reply
        if refused.is_set():
            link.release()
            break
        if k and serial:
            link.pause(pause_after(k - 1))
        row = _row(plan, k, run_id)
        # X-Request-ID lets a proxy's access log say which replica served each chunk.
        headers = {"X-Request-ID": row["request_id"]}
        if scenario.headers_by_session:
            headers["X-Session-ID"] = str(plan.tag)
        arrays: dict[str, npt.NDArray[np.generic]] = {
            "AUDIO": audio[k : k + 1],
            "SESSION": np.array([[plan.tag]], dtype=np.uint64),
        }
        flags: dict[str, int | str] = {}
        if sequence:
            flags = {"sequence_id": plan.corrid, "sequence_start": k == 0, "sequence_end": k == len(plan.symbols) - 1}

        def done(result: object, error: str, row: dict[str, Any] = row) -> None:
            record(row, result, error, t0)
            if error:
                refused.set()
            tick(row)

        row["t_send"] = time.perf_counter() - t0
        link.send(scenario.model, arrays, row["request_id"], headers, flags, done)
        if not serial and k + 1 < plan.send_count:
            link.pause(pause_after(k))
    link.drain()


def _row(plan: SessionPlan, k: int, run_id: str) -> dict[str, Any]:
    return {
        "session": plan.index,
        "chunk": k,
        "corrid": str(plan.corrid),
        "tag": plan.tag,
        "request_id": f"{run_id}:{plan.index}:{k}",
        "expected": plan.symbols[k],
        "error": "",
    }


def record(row: dict[str, Any], result: Any, error: str, t0: float) -> None:  # result: tritonclient's InferResult (untyped), None with an error
    """Fill a request's record from its reply; the same fields whatever the transport."""
    row["t_recv"] = time.perf_counter() - t0
    row["error"] = error
    for name in OUTPUTS:
        value = None if error else result.as_numpy(name)
        if value is None:
            if not error:
                row["error"] = error = f"the reply lacked the output {name}"
            row[name.lower()] = -1
        else:
            row[name.lower()] = int(value.reshape(-1)[0])
    row["latency_ms"] = (row["t_recv"] - row["t_send"]) * 1000


def _join_trace(requests: pd.DataFrame, trace: pd.DataFrame) -> pd.DataFrame:
    """Add server-side queue and compute times, and execution times on the run's clock."""
    merged = requests.merge(trace, on="request_id", how="left")
    if trace.empty:
        return merged
    merged["queue_ms"] = (merged["compute_start_ns"] - merged["queue_start_ns"]) / 1e6
    merged["compute_ms"] = (merged["compute_end_ns"] - merged["compute_start_ns"]) / 1e6
    # Server clock -> run clock: pin the earliest request start to the earliest send.
    offset_s = merged["t_send"].min() - merged["request_start_ns"].min() / 1e9
    merged["exec_start"] = merged["compute_start_ns"] / 1e9 + offset_s
    merged["exec_end"] = merged["compute_end_ns"] / 1e9 + offset_s
    merged["queued_from"] = merged["queue_start_ns"] / 1e9 + offset_s
    return merged
