"""Cancelled and timed-out requests: what a client that gives up on one chunk does to its sequence.

The deployment makes every chunk of a lone session wait a known time in its slot's queue
(direct, 2 slots, minimum_slot_utilization 1.0, max_queue_delay 0.6 s), so a client timeout of
0.3 s always runs out while the chunk is still queued, on a quiet machine or a busy one.
"""
from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from app.exercise_kit import Exercise, ExerciseJudgement, Finding, Measured, Number, Steps, Tables
from app.lab.deployment import LabSettings
from app.lab.observation import START_REFUSAL, LogCode, run_log, server_log
from app.lab.scenario.alphabet import to_symbols
from app.lab.scenario.ids import unique_ids
from app.lab.scenario.transport import Transport
from app.lab.traffic import open_link, run_queue
from app.recogniser.engine import driver
from app.recogniser.engine.audio import utterance

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.server import LabServer

MODEL = "asr_ex_cancel"
QUEUE_WAIT_S = 0.6  # every chunk of a lone session waits this long in its slot's queue
SHORT_TIMEOUT_S = 0.3  # the impatient client: below the queue wait
LONG_TIMEOUT_S = 3 * QUEUE_WAIT_S  # the patient client: above the worst queue wait
GIVE_UP_AT = 2  # the chunk the client gives up on (0-based)
TEXT = "WORDS"  # no letter repeats its neighbour, so applying a chunk twice always shows
# After giving up the client waits this long before its next request, so the scheduler has
# looked at the cancelled chunk (it does at the end of the queue wait) before the next arrives.
AFTER_GIVING_UP_S = QUEUE_WAIT_S + 0.3
LOG_CODES = (LogCode.CANCELLED_RELEASED, LogCode.SLOT_FREED, LogCode.START_FLAG_MISSING, LogCode.SEQUENCE_END)

EXERCISE = Exercise(
    name="cancelled_request",
    options=("served", "refused", "skipped", "waits"),
    correct="refused",
)
# What came back for one request, as a code (the `outcome` judge adds to the chunks table).
OUTCOMES = ("right", "wrong", "gave_up", "refused_no_start", "cancelled", "error")


def load_model(server: LabServer) -> str:
    """1 instance x 2 slots whose batches wait for both slots: a lone session's chunks queue."""
    settings = LabSettings(scheduler="direct", instances=1, slots=2, idle_timeout_us=5_000_000, state_key="slot")
    config = settings.to_config(MODEL)
    config.sequence_batching.direct.max_queue_delay_microseconds = int(QUEUE_WAIT_S * 1_000_000)
    config.sequence_batching.direct.minimum_slot_utilization = 1.0
    server.models.ensure(MODEL, config, with_code=True)  # within the budget; left as it is when already serving this
    return MODEL


class _Client:
    """One streaming client, chunk by chunk: each call says which ID, flags and timeout it uses."""

    def __init__(self, server: LabServer, transport: Transport, label: str, t0: float):
        self.server, self.transport, self.label, self.t0 = server, transport, label, t0
        self.url = server.grpc_url if transport.uses_grpc else server.url
        self.symbols = to_symbols(TEXT)
        self.audio = utterance(self.symbols, np.random.default_rng(11), 0.05)
        self.tag = int(unique_ids(1)[0])
        self.rows: list[dict[str, Any]] = []  # driver.record's request rows (see app/recogniser/engine/driver.py)

    def send(self, k: int, corrid: int, start: bool = False, timeout_s: float = LONG_TIMEOUT_S, note: str = "") -> dict[str, Any]:
        """note: what the client means by this request, a NOTES code ("" for an ordinary chunk)."""
        link = open_link(self.transport, self.url, timeout_s=timeout_s)
        row = {
            "run": self.label, "step": len(self.rows) + 1, "chunk": k, "corrid": str(corrid), "start": start,
            "end": k == len(self.symbols) - 1, "timeout_s": timeout_s, "expected": self.symbols[k], "note": note,
        }
        arrays: dict[str, npt.NDArray[np.generic]] = {"AUDIO": self.audio[k : k + 1], "SESSION": np.array([[self.tag]], dtype=np.uint64)}
        flags = {"sequence_id": corrid, "sequence_start": start, "sequence_end": k == len(self.symbols) - 1}
        row["t_send"] = time.perf_counter() - self.t0
        try:
            link.acquire()
            link.send(MODEL, arrays, f"{self.label}:{len(self.rows)}", {}, flags, lambda result, error: driver.record(row, result, error, self.t0))
        finally:
            link.close()
        self.rows.append(row)
        return row

    def talk(self, ks: Iterable[int], corrid: int, first_starts: bool = False) -> list[dict[str, Any]]:
        return [self.send(k, corrid, start=first_starts and i == 0) for i, k in enumerate(ks)]


def _give_up(client: _Client, corrid: int) -> None:
    """Chunks before GIVE_UP_AT answered, then the impatient call, then a pause."""
    client.talk(range(GIVE_UP_AT), corrid, first_starts=True)
    client.send(GIVE_UP_AT, corrid, timeout_s=SHORT_TIMEOUT_S, note="gives_up")
    time.sleep(AFTER_GIVING_UP_S)


def measure(server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured:
    """Five clients, one after another, on a model whose chunks always queue: every request they
    sent and the server's log lines about their sequences."""
    steps = Steps(progress, 7)
    steps("deploy", model=MODEL, wait=QUEUE_WAIT_S)
    load_model(server)
    # Its fixed-name model is shared by everyone who runs this exercise: one at a time.
    with run_queue.hold(server, MODEL), server_log.raised_verbosity(server, 1) as raised:
        window = server_log.LogWindow.start(server)
        chunks = _clients(server, steps)
        window.settle()  # the last lines are written just after the replies
        corrids = set(chunks["corrid"])
        panel = run_log.capture(window, [MODEL], corrids)  # the page's log panel
        entries = [e for e in window.select(codes=LOG_CODES) if (e.corrid in corrids) or (e.corrid is None and e.model == MODEL)]
    steps("measuring")
    log = pd.DataFrame([{"code": e.code.value if e.code else "", "corrid": e.corrid or "", "line": e.raw} for e in entries], columns=["code", "corrid", "line"])
    return Measured(tables={"chunks": chunks, "server_log": log, "log_verbose": pd.DataFrame({"raised": [raised]})}, log=panel)


def _clients(server: LabServer, steps: Steps) -> pd.DataFrame:
    """Each client's requests, in the order sent: one row per request (the chunks table, without `outcome`)."""
    ids = iter(int(i) for i in unique_ids(8))
    t0 = time.perf_counter()

    steps("grpc_carry_on")
    carry, carry_id = _Client(server, Transport.GRPC, "grpc_carry_on", t0), next(ids)
    _give_up(carry, carry_id)
    carry.send(GIVE_UP_AT + 1, carry_id, note="carries_on")

    steps("grpc_retry")
    retry, retry_id = _Client(server, Transport.GRPC, "grpc_retry", t0), next(ids)
    _give_up(retry, retry_id)
    retry.send(GIVE_UP_AT, retry_id, note="retries")

    steps("http_retry")
    http_retry, http_id = _Client(server, Transport.HTTP, "http_retry", t0), next(ids)
    _give_up(http_retry, http_id)
    for k in range(GIVE_UP_AT, len(http_retry.symbols)):
        http_retry.send(k, http_id, note="retries" if k == GIVE_UP_AT else "")

    steps("grpc_restart")
    restart, old_id, new_id = _Client(server, Transport.GRPC, "grpc_restart", t0), next(ids), next(ids)
    _give_up(restart, old_id)
    restart.send(0, new_id, start=True, note="restart")
    restart.talk(range(1, len(restart.symbols)), new_id)

    steps("grpc_long_timeout", timeout=LONG_TIMEOUT_S)
    patient = _Client(server, Transport.GRPC, "grpc_long_timeout", t0)
    patient.talk(range(len(patient.symbols)), next(ids), first_starts=True)
    return pd.DataFrame([r for c in (carry, retry, http_retry, restart, patient) for r in c.rows])


def _came_back(error: str, symbol: object, expected: object) -> str:
    """What came back for one request, one of OUTCOMES, read from the reply or Triton's (or the
    client library's) error text."""
    if not error:
        return "right" if symbol == expected else "wrong"
    if START_REFUSAL in error:
        return "refused_no_start"
    if "deadline" in error.lower() or "timed out" in error.lower():
        return "gave_up"
    if "cancel" in error.lower():
        return "cancelled"
    return "error"


def judge(tables: Tables) -> ExerciseJudgement:
    """From every client's requests and the server's log lines: what became of the chunk after the timeout?"""
    chunks = tables["chunks"].copy()
    chunks["outcome"] = [_came_back(*r) for r in zip(chunks["error"], chunks["symbol"], chunks["expected"], strict=True)]
    clients = {label: rows.reset_index(drop=True) for label, rows in chunks.groupby("run", sort=False)}
    n = _numbers(clients, tables["server_log"])
    outcome = {"refused_no_start": "refused", "right": "served", "wrong": "skipped"}.get(str(n["next_chunk_outcome"]), "waits")
    log_read = bool(tables["log_verbose"]["raised"].iloc[0])
    return ExerciseJudgement(outcome=outcome, numbers=n, findings=_findings(n, log_read), explanation=_explanation(),
                     tables={"chunks": chunks, "server_log": tables["server_log"]})


def _numbers(clients: dict[str, pd.DataFrame], log: pd.DataFrame) -> dict[str, Number]:
    """The headline numbers, from each client's requests (by position: GIVE_UP_AT is the one given up on)."""
    carry, retry, http_retry = clients["grpc_carry_on"], clients["grpc_retry"], clients["http_retry"]
    restart, patient = clients["grpc_restart"], clients["grpc_long_timeout"]
    given_up, after = carry.iloc[GIVE_UP_AT], carry.iloc[GIVE_UP_AT + 1]
    http_again = http_retry.iloc[GIVE_UP_AT + 1]
    old_slot, new_first = int(restart.iloc[GIVE_UP_AT - 1]["slot"]), restart.iloc[GIVE_UP_AT + 1]
    released = set(log.loc[log["code"] == LogCode.CANCELLED_RELEASED.value, "corrid"])

    def count(rows: pd.DataFrame, outcome: str) -> int:
        return int((rows["outcome"] == outcome).sum())

    return {
        "grpc_timeout_error": given_up["error"] or None,  # verbatim: gRPC's / Triton's text
        "grpc_timeout_after_s": round(float(given_up["latency_ms"]) / 1000, 2),
        "next_chunk_outcome": after["outcome"],
        "next_chunk_error": after["error"] or None,
        "retry_outcome": retry.iloc[-1]["outcome"],
        "http_timeout_error": http_retry.iloc[GIVE_UP_AT]["error"] or None,
        "http_retry_state_in": int(http_again["state_in"]),
        "http_retry_should_read": int(http_retry.iloc[GIVE_UP_AT - 1]["expected"]),
        "http_timed_out_chunk_was_applied": int(http_again["state_in"]) == int(http_again["expected"]),
        "http_wrong_symbols_after_retry": count(http_retry.iloc[GIVE_UP_AT + 1 :], "wrong"),
        "restart_slot": int(new_first["slot"]),
        "cancelled_sequence_slot": old_slot,
        "restart_took_the_freed_slot": int(new_first["slot"]) == old_slot,
        "restart_symbols_right": count(restart.iloc[GIVE_UP_AT + 1 :], "right"),
        "restart_chunks": len(restart) - GIVE_UP_AT - 1,
        "long_timeout_symbols_right": count(patient, "right"),
        "long_timeout_chunks": len(patient),
        "log_cancelled_sequences_released": len(released),
        "log_release_for_grpc_give_ups": all(clients[k]["corrid"].iloc[0] in released for k in ("grpc_carry_on", "grpc_retry", "grpc_restart")),
        "log_release_for_http_give_up": http_retry["corrid"].iloc[0] in released,
    }


def _findings(n: Mapping[str, Number], log_read: bool) -> list[Finding]:
    k = GIVE_UP_AT + 1  # the chunk given up on, counted from 1
    http = {
        "timeout": SHORT_TIMEOUT_S, "error": n["http_timeout_error"], "chunk": k, "state_in": n["http_retry_state_in"],
        "should_read": n["http_retry_should_read"], "wrong": n["http_wrong_symbols_after_retry"],
    }
    return [
        Finding("grpc_timeout", {"timeout": SHORT_TIMEOUT_S, "chunk": k, "after": n["grpc_timeout_after_s"],
                                 "error": n["grpc_timeout_error"]}),
        _next_chunk(str(n["next_chunk_outcome"]), {"chunk": k + 1, "later": AFTER_GIVING_UP_S, "error": n["next_chunk_error"]}),
        _retry(str(n["retry_outcome"]), {"chunk": k}),
        Finding("http_applied_twice", http) if n["http_timed_out_chunk_was_applied"] else Finding("http_retry", http),
        Finding("restart", {"slot": n["restart_slot"], "old_slot": n["cancelled_sequence_slot"],
                            "right": n["restart_symbols_right"], "chunks": n["restart_chunks"]}),
        Finding("long_timeout", {"timeout": LONG_TIMEOUT_S, "wait": QUEUE_WAIT_S,
                                 "right": n["long_timeout_symbols_right"], "chunks": n["long_timeout_chunks"]}),
        Finding("log_releases", {"released": n["log_cancelled_sequences_released"], "grpc": n["log_release_for_grpc_give_ups"],
                                 "http": n["log_release_for_http_give_up"]}) if log_read else Finding("log_unavailable"),
    ]


def _explanation() -> list[Finding]:
    return [
        Finding("why_deadline"),
        Finding("why_release", {"refusal": START_REFUSAL}),
        Finding("why_http"),
        Finding("why_running"),
        Finding("why_correct_client"),
    ]


def _next_chunk(outcome: str, values: Mapping[str, object]) -> Finding:
    """What became of the chunk sent after the timed-out one (an OUTCOMES code)."""
    return {
        "right": Finding("next_right", values), "wrong": Finding("next_wrong", values),
        "gave_up": Finding("next_gave_up", values), "refused_no_start": Finding("next_refused_no_start", values),
        "cancelled": Finding("next_cancelled", values), "error": Finding("next_error", values),
    }[outcome]


def _retry(outcome: str, values: Mapping[str, object]) -> Finding:
    """What became of the retry of the timed-out chunk on the same ID (an OUTCOMES code)."""
    return {
        "right": Finding("retry_right", values), "wrong": Finding("retry_wrong", values),
        "gave_up": Finding("retry_gave_up", values), "refused_no_start": Finding("retry_refused_no_start", values),
        "cancelled": Finding("retry_cancelled", values), "error": Finding("retry_error", values),
    }[outcome]
