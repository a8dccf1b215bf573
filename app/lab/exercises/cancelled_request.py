"""Cancelled and timed-out requests: what a client that gives up on one chunk does to its sequence.

The deployment makes every chunk of a lone session wait a known time in its slot's queue
(direct, 2 slots, minimum_slot_utilization 1.0, max_queue_delay 0.6 s), so a client timeout of
0.3 s always runs out while the chunk is still queued, on a quiet machine or a busy one.
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
from tritonclient.utils import InferenceServerException

from app.lab import deployments, driver, run_log, server_log
from app.lab.alphabet import to_symbols
from app.lab.audio import utterance
from app.lab.deployments import DeploymentError, LabSettings
from app.lab.exercises import plots
from app.lab.exercises.base import Exercise, ExerciseResult, Option, Steps
from app.lab.ids import unique_ids
from app.lab.server_log import LogCode
from app.lab.transports import Transport, open_link

MODEL = "asr_ex_cancel"
QUEUE_WAIT_S = 0.6  # every chunk of a lone session waits this long in its slot's queue
SHORT_TIMEOUT_S = 0.3  # the impatient client: below the queue wait
LONG_TIMEOUT_S = 3 * QUEUE_WAIT_S  # the patient client: above the worst queue wait
GIVE_UP_AT = 2  # the chunk the client gives up on (0-based)
TEXT = "WORDS"  # no letter repeats its neighbour, so applying a chunk twice always shows
# After giving up the client waits this long before its next request, so the scheduler has
# looked at the cancelled chunk (it does at the end of the queue wait) before the next arrives.
AFTER_GIVING_UP_S = QUEUE_WAIT_S + 0.3
START_REFUSAL = "must specify the START flag"
LOG_CODES = (LogCode.CANCELLED_RELEASED, LogCode.SLOT_FREED, LogCode.START_FLAG_MISSING, LogCode.SEQUENCE_END)

EXERCISE = Exercise(
    name="cancelled_request",
    title="Cancelled and timed-out requests: a client that gives up on one chunk",
    scenario=(
        "A streaming client talks to a recogniser on the direct sequence batcher over gRPC. Each of "
        f"its chunks waits about {QUEUE_WAIT_S:g} s in the queue before it runs. The client sets "
        f"client_timeout = {SHORT_TIMEOUT_S:g} s, so its call for chunk {GIVE_UP_AT + 1} times out while "
        "that chunk is still queued. The client ignores the error and sends the next chunk."
    ),
    question=f"What does Triton do with chunk {GIVE_UP_AT + 2}, the one sent after the timeout?",
    options=(
        Option("served", "It serves it normally: only the answer to the timed-out chunk was lost."),
        Option(
            "refused",
            "It refuses it: the timeout cancelled the queued chunk, Triton released the sequence and its "
            "slot, so the next chunk is a request without START for a sequence that no longer exists.",
        ),
        Option("skipped", "It serves it, but from state that never saw the timed-out chunk, so the symbol is wrong."),
        Option("waits", "It holds it until the idle timeout ends the sequence."),
    ),
    correct="refused",
)


def load_model(server) -> str:
    """1 instance x 2 slots whose batches wait for both slots: a lone session's chunks queue."""
    settings = LabSettings(scheduler="direct", instances=1, slots=2, idle_timeout_us=5_000_000, state_key="slot")
    config = settings.to_config(MODEL)
    config.sequence_batching.direct.max_queue_delay_microseconds = int(QUEUE_WAIT_S * 1_000_000)
    config.sequence_batching.direct.minimum_slot_utilization = 1.0
    client = server.client(timeout_s=300)
    try:
        if client.is_model_ready(MODEL):
            live = client.get_model_config(MODEL)["sequence_batching"].get("direct", {})
            if int(live.get("max_queue_delay_microseconds", 0)) == int(QUEUE_WAIT_S * 1_000_000):
                return MODEL
        deployments.load(client, config, with_code=True)
    except InferenceServerException as err:
        raise DeploymentError(f"Triton refused the cancellation demo's deployment: {err.message()}") from None
    return MODEL


class _Client:
    """One streaming client, chunk by chunk: each call says which ID, flags and timeout it uses."""

    def __init__(self, server, transport: Transport, label: str, t0: float):
        self.server, self.transport, self.label, self.t0 = server, transport, label, t0
        self.url = server.grpc_url if transport.uses_grpc else server.url
        self.symbols = to_symbols(TEXT)
        self.audio = utterance(self.symbols, np.random.default_rng(11), 0.05)
        self.tag = int(unique_ids(1)[0])
        self.rows: list[dict] = []

    def send(self, k: int, corrid: int, start: bool = False, timeout_s: float = LONG_TIMEOUT_S, note: str = "") -> dict:
        link = open_link(self.transport, self.url, timeout_s=timeout_s)
        row = {
            "run": self.label, "step": len(self.rows) + 1, "chunk": k, "corrid": str(corrid), "start": start,
            "end": k == len(self.symbols) - 1, "timeout_s": timeout_s, "expected": self.symbols[k], "note": note,
        }
        arrays = {"AUDIO": self.audio[k : k + 1], "SESSION": np.array([[self.tag]], dtype=np.uint64)}
        flags = {"sequence_id": corrid, "sequence_start": start, "sequence_end": row["end"]}
        row["t_send"] = time.perf_counter() - self.t0
        try:
            link.acquire()
            link.send(MODEL, arrays, f"{self.label}:{len(self.rows)}", {}, flags, lambda result, error: driver.record(row, result, error, self.t0))
        finally:
            link.close()
        row["outcome"] = _outcome(row)
        self.rows.append(row)
        return row

    def talk(self, ks, corrid: int, first_starts: bool = False) -> list[dict]:
        return [self.send(k, corrid, start=first_starts and i == 0) for i, k in enumerate(ks)]


def _outcome(row: dict) -> str:
    error = row["error"]
    if not error:
        return "right symbol" if row["symbol"] == row["expected"] else "wrong symbol"
    if START_REFUSAL in error:
        return "refused: no START"
    if "deadline" in error.lower() or "timed out" in error.lower():
        return "client gave up"
    if "cancel" in error.lower():
        return "cancelled"
    return "error"


def _give_up(client: _Client, corrid: int) -> None:
    """Chunks before GIVE_UP_AT answered, then the impatient call, then a pause."""
    client.talk(range(GIVE_UP_AT), corrid, first_starts=True)
    client.send(GIVE_UP_AT, corrid, timeout_s=SHORT_TIMEOUT_S, note="client gives up")
    time.sleep(AFTER_GIVING_UP_S)


def run(server, deployer, progress=None) -> ExerciseResult:
    steps = Steps(progress, 7)
    steps(f"Deploying {MODEL}: every chunk of a lone session queues {QUEUE_WAIT_S:g} s")
    load_model(server)
    ids = iter(int(i) for i in unique_ids(8))
    t0 = time.perf_counter()
    clients: dict[str, _Client] = {}
    with server_log.raised_verbosity(server, 1) as raised:
        window = server_log.LogWindow.start(server)

        steps("gRPC: give up on a chunk, then carry on")
        carry = clients["grpc_carry_on"] = _Client(server, Transport.GRPC, "grpc_carry_on", t0)
        carry_id = next(ids)
        _give_up(carry, carry_id)
        carry.send(GIVE_UP_AT + 1, carry_id, note="carries on")

        steps("gRPC: give up on a chunk, then retry it")
        retry = clients["grpc_retry"] = _Client(server, Transport.GRPC, "grpc_retry", t0)
        retry_id = next(ids)
        _give_up(retry, retry_id)
        retry.send(GIVE_UP_AT, retry_id, note="retries the same chunk")

        steps("HTTP: give up on a chunk (network timeout), then retry it")
        http_retry = clients["http_retry"] = _Client(server, Transport.HTTP, "http_retry", t0)
        http_id = next(ids)
        _give_up(http_retry, http_id)
        for k in range(GIVE_UP_AT, len(http_retry.symbols)):
            http_retry.send(k, http_id, note="retries the same chunk" if k == GIVE_UP_AT else "")

        steps("gRPC, done right: a new sequence with a new ID that resends the context")
        restart = clients["grpc_restart"] = _Client(server, Transport.GRPC, "grpc_restart", t0)
        old_id, new_id = next(ids), next(ids)
        _give_up(restart, old_id)
        restart.send(0, new_id, start=True, note="new ID, START, context resent")
        restart.talk(range(1, len(restart.symbols)), new_id)

        steps(f"gRPC, done right: a timeout ({LONG_TIMEOUT_S:g} s) above the worst queue wait")
        patient = clients["grpc_long_timeout"] = _Client(server, Transport.GRPC, "grpc_long_timeout", t0)
        patient.talk(range(len(patient.symbols)), next(ids), first_starts=True)
        time.sleep(0.3)  # the last lines are written just after the replies
        corrids = {r["corrid"] for c in clients.values() for r in c.rows}
        panel = run_log.capture(window, [MODEL], corrids)  # the page's log panel
        entries = [
            e for e in window.select(codes=LOG_CODES)
            if (e.corrid in corrids) or (e.corrid is None and e.model == MODEL)
        ]

    steps("Measuring")
    chunks = pd.DataFrame([r for c in clients.values() for r in c.rows])
    log = pd.DataFrame(
        [{"code": e.code.value, "corrid": e.corrid or "", "line": e.raw} for e in entries],
        columns=["code", "corrid", "line"],
    )
    numbers, outcome = _measure(clients, log)
    findings, explanation = _words(numbers, raised)
    steps.finish()
    return ExerciseResult(EXERCISE, outcome, numbers, {"chunks": chunks, "server_log": log}, explanation, findings, log=panel)


def _measure(clients: dict[str, _Client], log: pd.DataFrame) -> tuple[dict, str]:
    carry, retry, http_retry = clients["grpc_carry_on"].rows, clients["grpc_retry"].rows, clients["http_retry"].rows
    restart, patient = clients["grpc_restart"].rows, clients["grpc_long_timeout"].rows
    given_up = carry[GIVE_UP_AT]
    after = carry[GIVE_UP_AT + 1]
    http_again = http_retry[GIVE_UP_AT + 1]
    old_slot = restart[GIVE_UP_AT - 1]["slot"]
    new_first = restart[GIVE_UP_AT + 1]
    released = set(log.loc[log["code"] == LogCode.CANCELLED_RELEASED.value, "corrid"])
    numbers = {
        "grpc_timeout_error": given_up["error"] or "none",
        "grpc_timeout_after_s": round(given_up["latency_ms"] / 1000, 2),
        "next_chunk_outcome": after["outcome"],
        "next_chunk_error": after["error"] or "none",
        "retry_outcome": retry[-1]["outcome"],
        "http_timeout_error": http_retry[GIVE_UP_AT]["error"] or "none",
        "http_retry_state_in": int(http_again["state_in"]),
        "http_retry_should_read": int(http_retry[GIVE_UP_AT - 1]["expected"]),
        "http_timed_out_chunk_was_applied": int(http_again["state_in"]) == int(http_again["expected"]),
        "http_wrong_symbols_after_retry": sum(r["outcome"] == "wrong symbol" for r in http_retry[GIVE_UP_AT + 1 :]),
        "restart_slot": int(new_first["slot"]),
        "cancelled_sequence_slot": int(old_slot),
        "restart_took_the_freed_slot": int(new_first["slot"]) == int(old_slot),
        "restart_symbols_right": sum(r["outcome"] == "right symbol" for r in restart[GIVE_UP_AT + 1 :]),
        "restart_chunks": len(restart) - GIVE_UP_AT - 1,
        "long_timeout_symbols_right": sum(r["outcome"] == "right symbol" for r in patient),
        "long_timeout_chunks": len(patient),
        "log_cancelled_sequences_released": len(released),
        "log_release_for_grpc_give_ups": all(clients[k].rows[0]["corrid"] in released for k in ("grpc_carry_on", "grpc_retry", "grpc_restart")),
        "log_release_for_http_give_up": http_retry[0]["corrid"] in released,
    }
    outcome = {
        "refused: no START": "refused",
        "right symbol": "served",
        "wrong symbol": "skipped",
    }.get(after["outcome"], "waits")
    return numbers, outcome


def _words(n: dict, raised: bool) -> tuple[list[str], str]:
    k = GIVE_UP_AT + 1
    findings = [
        f"gRPC client_timeout {SHORT_TIMEOUT_S:g} s on chunk {k}: the call failed after {n['grpc_timeout_after_s']:g} s "
        f"with \"{n['grpc_timeout_error']}\".",
        f"chunk {k + 1}, sent {AFTER_GIVING_UP_S:g} s later on the same correlation ID: {n['next_chunk_outcome']} "
        f"(\"{n['next_chunk_error']}\").",
        f"retrying chunk {k} on the same ID instead: {n['retry_outcome']}.",
        f"HTTP with a {SHORT_TIMEOUT_S:g} s network timeout: the client saw \"{n['http_timeout_error']}\", but the "
        f"retried chunk {k} read STATE_IN {n['http_retry_state_in']} where {n['http_retry_should_read']} was due: "
        f"the chunk the client gave up on had run anyway, so the retry applied it a second time "
        f"({n['http_wrong_symbols_after_retry']} wrong symbol(s) from there on)."
        if n["http_timed_out_chunk_was_applied"]
        else f"HTTP with a {SHORT_TIMEOUT_S:g} s network timeout: the retried chunk read STATE_IN "
        f"{n['http_retry_state_in']} ({n['http_retry_should_read']} was due).",
        f"new ID with START, context resent: slot {n['restart_slot']} (the cancelled sequence had slot "
        f"{n['cancelled_sequence_slot']}), {n['restart_symbols_right']}/{n['restart_chunks']} symbols right.",
        f"client_timeout {LONG_TIMEOUT_S:g} s (above the {QUEUE_WAIT_S:g} s queue wait): "
        f"{n['long_timeout_symbols_right']}/{n['long_timeout_chunks']} symbols right.",
    ]
    if raised:
        findings.append(
            f"server log (verbosity raised to 1 for this run): \"Releasing canceled sequence\" for "
            f"{n['log_cancelled_sequences_released']} sequence(s); "
            + ("one for each gRPC client that gave up" if n["log_release_for_grpc_give_ups"] else "not for every gRPC give-up")
            + ("; none for the HTTP one." if not n["log_release_for_http_give_up"] else "; also for the HTTP one.")
        )
    else:
        findings.append("server log: not available (external server), so the release lines cannot be shown.")
    explanation = (
        "A gRPC client_timeout is a deadline: when it passes, gRPC cancels the call and Triton's gRPC endpoint "
        "cancels the inference request. The sequence batcher checks for cancelled requests when it looks at a "
        "slot's queue (here at the end of the queue wait, not at the instant of the timeout); finding one, it "
        "releases the whole sequence: it frees the slot, forgets the correlation ID and cancels the sequence's "
        "other queued requests. From then on the ID is unknown, so any later chunk on it, including a retry of "
        f"the same chunk, is refused (\"{START_REFUSAL} ...\"). HTTP is different: Triton 2.51's HTTP endpoint does "
        "not support cancellation, so a client whose HTTP call times out has left the request running; it is "
        "applied, and a retry applies it twice. A request that has already reached the model is not stopped by "
        "cancellation either, unless the model checks for it itself (not shown here: our model is fast). A "
        "correct client either waits longer than the worst queue wait (a timeout well above it), or, after a "
        "gRPC timeout, treats the sequence as gone: it starts a new sequence with a new ID and START and "
        "resends the context the model needs (here every chunk so far), which also takes the freed slot."
    )
    return findings, explanation


def figures(result: ExerciseResult) -> list[tuple[str, go.Figure]]:
    chunks = result.tables["chunks"].copy()
    chunks["chunk no."] = chunks["chunk"] + 1
    colours = {
        "right symbol": "#2ca02c", "wrong symbol": "#ff7f0e", "client gave up": "#7f7f7f",
        "refused: no START": "#d62728", "cancelled": "#9467bd", "error": "#8c564b",
    }
    steps = px.scatter(
        chunks, x="step", y="run", color="outcome", text="chunk no.", color_discrete_map=colours,
        hover_data=["corrid", "start", "timeout_s", "error", "state_in", "expected", "symbol"],
        labels={"step": "request, in the order the client sent them", "run": ""},
        title="Each client's requests: which chunk, and what came back",
    )
    steps.update_traces(marker_size=20, textfont_color="white")
    figs = [("What each client got back", plots.layout(steps, height=300))]
    log = result.tables["server_log"]
    if not log.empty:
        counts = log.groupby("code").size().reset_index(name="lines")
        figs.append(("Server log", plots.layout(px.bar(counts, x="code", y="lines", title="What the server logged (verbosity 1)"))))
    return figs
