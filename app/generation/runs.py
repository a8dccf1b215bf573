"""A generation lab run as the tables its figures, table and judges read (no Streamlit, no words).

`run(server, setup, mode)` deploys the generator for one batching mode with the set-up's settings, holds
that deployment alone for the run (app/lab/traffic/run_queue, so two learners' runs never mix), sends the
set-up's workload through the engine's driver and turns the trace into `GenRun`: the tables of
app/generation/figures.py and the headline numbers. `tables(...)` is the pure part, tested on hand-made
traces.
"""
from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import tritonclient.grpc as grpcclient

from app.generation.setup import GenSetup
from app.lab.traffic import run_queue

if TYPE_CHECKING:
    from app.lab.server import LabServer


@dataclass(frozen=True)
class Planned:
    """One request of a workload: its tag, when it is sent (seconds from the run's start), its prompt and length."""

    tag: int
    arrival_s: float
    prompt: tuple[int, int, int, int]
    max_tokens: int


@dataclass(frozen=True, kw_only=True)
class GenRun:
    mode: str  # static | inflight | inflight_by_row
    label: str  # what the run is called among a comparison's runs (the mode, or an exercise's code)
    model: str
    max_batch_size: int
    tokens: pd.DataFrame
    requests: pd.DataFrame
    steps: pd.DataFrame
    numbers: dict[str, Any] = field(default_factory=dict)


def ticks(tokens: pd.DataFrame) -> pd.Series:
    """Each token's model step on its instance: executions in order, and inside an execution (a static batch
    generated to its end) the request's k-th token of it at k. In flight every execution is one step."""
    frame = tokens.sort_values(["instance", "execution", "step"])
    within = frame.groupby(["instance", "execution", "tag"]).cumcount()
    width = within.groupby([frame["instance"], frame["execution"]]).transform("max") + 1
    per_execution = frame.assign(width=width).drop_duplicates(["instance", "execution"])[["instance", "execution", "width"]]
    per_execution["offset"] = per_execution.groupby("instance")["width"].cumsum() - per_execution["width"]
    offset = frame.merge(per_execution, on=["instance", "execution"], how="left")["offset"].to_numpy()
    return pd.Series(offset + within.to_numpy(), index=frame.index).reindex(tokens.index)


def joined(done: Iterable[GenRun]) -> dict[str, pd.DataFrame]:
    """The tables of several runs, one below the other, each row labelled with its run's label."""
    done = list(done)
    return {name: pd.concat([getattr(r, name).assign(label=r.label) for r in done], ignore_index=True)
            for name in ("tokens", "requests", "steps")}


def answer(kind: str, done: list[GenRun]) -> str:
    """What the server did, as the answer key of the lab page's question (app/generation/words.ANSWERS):
    compare: which mode gave the median request its first token sooner (within a fifth: the same);
    single: whether some step ran with rows left empty."""
    if kind == "compare":
        by_mode = {r.mode: r.numbers["ttft_p50_ms"] for r in done}
        static, inflight = by_mode["static"], by_mode["inflight"]
        if static < inflight / SAME:
            return "static"
        return "inflight" if inflight < static / SAME else "same"
    return "yes" if any(r.numbers["mean_fill"] < 1 for r in done) else "no"


SAME = 1.2  # first tokens within this ratio count as about the same


def tables(trace: pd.DataFrame, mode: str, max_batch_size: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(tokens, requests, steps) of app/generation/figures.py from a trace with one row per token:
    tag, sent_s (when its request was sent), t_s (when this token arrived, both from the run's start),
    instance, execution, row, batch, step, token, expected (the pure rule's token at that step) and owner
    (STATE_OWNER: the tag whose state the model continued); step is the request's own position."""
    tokens = trace.copy()
    tokens["mode"] = mode
    tokens["wrong"] = tokens["token"] != tokens["expected"]
    tokens["last"] = tokens["step"] == tokens.groupby("tag")["step"].transform("max")
    tokens["tick"] = ticks(tokens) if not tokens.empty else pd.Series(dtype=int)
    grouped = tokens.groupby("tag")
    requests = pd.DataFrame({
        "mode": mode,
        "ttft_ms": (grouped["t_s"].min() - grouped["sent_s"].first()) * 1000,
        "e2e_ms": (grouped["t_s"].max() - grouped["sent_s"].first()) * 1000,
        "tokens": grouped.size(),
        "wrong": grouped["wrong"].sum(),
    }).reset_index()
    steps = tokens.groupby(["instance", "tick"]).size().rename("rows").reset_index()
    steps["mode"] = mode
    steps["fill"] = steps["rows"] / max_batch_size
    return tokens, requests, steps


def numbers(tokens: pd.DataFrame, requests: pd.DataFrame, steps: pd.DataFrame) -> dict[str, Any]:
    """The run's headline numbers: tokens/s over the run, TTFT p50 and p95, mean step fill, wrong tokens."""
    if tokens.empty:
        return {"requests": 0, "tokens": 0, "tokens_per_s": 0.0, "ttft_p50_ms": float("nan"),
                "ttft_p95_ms": float("nan"), "e2e_p50_ms": float("nan"), "mean_fill": float("nan"), "wrong_tokens": 0}
    span = float(tokens["t_s"].max() - tokens["sent_s"].min())
    return {
        "requests": int(len(requests)),
        "tokens": int(len(tokens)),
        "tokens_per_s": float(len(tokens) / span) if span > 0 else float("nan"),
        "ttft_p50_ms": float(np.percentile(requests["ttft_ms"], 50)),
        "ttft_p95_ms": float(np.percentile(requests["ttft_ms"], 95)),
        "e2e_p50_ms": float(np.percentile(requests["e2e_ms"], 50)),
        "mean_fill": float(steps["fill"].mean()),
        "wrong_tokens": int(tokens["wrong"].sum()),
    }


# -- Talking to the server ---------------------------------------------------------------------------------------

VOCAB = 64
SHIPPED = {"static": "gen_static", "inflight": "gen_inflight", "inflight_by_row": "gen_inflight_by_row"}
WAIT_S = 60.0  # a run that has not ended by then is cut short (its missing tokens show as missing)


def expected_tokens(prompt: tuple[int, ...], n: int) -> list[int]:
    """The model's token rule (model_repository/gen_inflight/1/model.py), pure."""
    h = (prompt[0] + 3 * prompt[1] + 5 * prompt[2] + 7 * prompt[3]) % VOCAB
    out = [(h * 11 + 5) % VOCAB]
    for k in range(1, n):
        out.append((out[-1] * 17 + h * 13 + k * 7 + 3) % VOCAB)
    return out


def plan(setup: GenSetup) -> list[Planned]:
    """The set-up's workload: arrivals with exponential gaps of mean mean_gap_ms and lengths uniform in
    min_tokens..max_tokens (both from seed), prompts from prompt_seed; tags from 1."""
    timing, prompts = random.Random(setup.seed), random.Random(setup.prompt_seed)
    at, out = 0.0, []
    for k in range(setup.requests):
        if k:
            at += timing.expovariate(1000 / setup.mean_gap_ms) if setup.mean_gap_ms > 0 else 0.0
        prompt = (prompts.randrange(VOCAB), prompts.randrange(VOCAB), prompts.randrange(VOCAB), prompts.randrange(VOCAB))
        out.append(Planned(tag=k + 1, arrival_s=at, prompt=prompt, max_tokens=timing.randint(setup.min_tokens, setup.max_tokens)))
    return out


def model_for(setup: GenSetup, mode: str, step_ms: int) -> str:
    """The deployment a run of `mode` with these settings uses."""
    del setup, step_ms
    return SHIPPED[mode]


def run_setup(server: LabServer, setup: GenSetup) -> list[GenRun]:
    """Each mode of the set-up on the same planned workload, one after the other."""
    planned = plan(setup)
    return [run(server, setup, mode, planned) for mode in setup.modes()]


def run(server: LabServer, setup: GenSetup, mode: str, planned: list[Planned], step_ms: int = 20,
        label: str | None = None) -> GenRun:
    """Deploy `mode` with the set-up's settings, hold it alone, send `planned`, and tabulate what came back."""
    model = model_for(setup, mode, step_ms)
    with run_queue.hold(server, model):
        trace = _drive(server.grpc_url, model, planned)
    tokens, requests, steps = tables(trace, mode, setup.max_batch_size)
    return GenRun(mode=mode, label=label or mode, model=model, max_batch_size=setup.max_batch_size, tokens=tokens,
                  requests=requests, steps=steps, numbers=numbers(tokens, requests, steps))


def _drive(url: str, model: str, planned: list[Planned]) -> pd.DataFrame:
    """Send each planned request at its arrival time on one gRPC stream; one row per token that came back."""
    rows: list[dict[str, Any]] = []
    finals: set[int] = set()
    errors: list[str] = []
    done = threading.Condition()
    sent: dict[int, float] = {}
    by_tag = {p.tag: p for p in planned}

    def on_response(result: Any, error: Any) -> None:
        now = time.perf_counter()
        with done:
            if error is not None:  # the stream carries no tag with an error: counted, so the wait ends
                errors.append(str(error))
                done.notify_all()
                return
            response = result.get_response()
            tag = int(response.id)
            token = result.as_numpy("TOKEN")
            if token is not None and token.size:
                out = {name: int(result.as_numpy(name).reshape(-1)[0]) for name in ("STEP", "INSTANCE", "EXECUTION", "ROW", "BATCH",
                                                                                     "STATE_OWNER")}
                rows.append(dict(tag=tag, t=now, state_step=out["STEP"], instance=out["INSTANCE"], execution=out["EXECUTION"],
                                 row=out["ROW"], batch=out["BATCH"], token=int(token.reshape(-1)[0]), owner=out["STATE_OWNER"]))
            if response.parameters["triton_final_response"].bool_param:
                finals.add(tag)
                done.notify_all()

    client = grpcclient.InferenceServerClient(url)
    try:
        client.start_stream(callback=on_response)
        start = time.perf_counter()
        for p in sorted(planned, key=lambda p: p.arrival_s):
            wait = start + p.arrival_s - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            inputs = [grpcclient.InferInput("PROMPT", [1, 4], "INT32"), grpcclient.InferInput("MAX_TOKENS", [1, 1], "INT32"),
                      grpcclient.InferInput("TAG", [1, 1], "UINT64")]
            inputs[0].set_data_from_numpy(np.array([p.prompt], dtype=np.int32))
            inputs[1].set_data_from_numpy(np.array([[p.max_tokens]], dtype=np.int32))
            inputs[2].set_data_from_numpy(np.array([[p.tag]], dtype=np.uint64))
            sent[p.tag] = time.perf_counter()
            client.async_stream_infer(model, inputs, request_id=str(p.tag), enable_empty_final_response=True)
        with done:
            done.wait_for(lambda: len(finals) + len(errors) >= len(planned), timeout=WAIT_S)
    finally:
        client.stop_stream()
        client.close()
    trace = pd.DataFrame(rows, columns=["tag", "t", "state_step", "instance", "execution", "row", "batch", "token", "owner"])
    trace = trace.sort_values("t", kind="stable").reset_index(drop=True)
    # The request's own position is the order its tokens came in (one stream keeps a request's responses in
    # order); STEP says where the state the model read stood, which differs once a request continues another's.
    trace["step"] = trace.groupby("tag").cumcount()
    first = min(sent.values()) if sent else 0.0
    trace["t_s"] = trace["t"] - first
    trace["sent_s"] = trace["tag"].map(lambda t: sent[t] - first)
    trace["expected"] = [expected_tokens(by_tag[t].prompt, s + 1)[s] for t, s in zip(trace["tag"], trace["step"], strict=True)]
    return trace.drop(columns="t")
