"""A generation lab run as the tables its figures, table and judges read (no Streamlit, no words).

Everything that talks to Triton or reads a trace is the engine's (app/generation/engine): the workload, the
deployments, the driver (one gRPC stream; it holds the deployment alone for the run, so two learners' runs never
mix) and the analysis. This module puts them together for the lab page and the exercises: the set-up's settings
as the engine's deployment settings (plus max_candidate_sequences below max_batch_size, which the engine's settings
do not vary), the set-up's workload, and `GenRun`, the engine's tables shaped for app/generation/figures.py:

  tokens    one row per token: tag (the request's number in the run, from 1), instance, execution, tick (the model
            step on its instance: the engine's passes in the order they ran), row, batch, step (the request's own
            position), last, t_s, wrong (the token differs from the rule's), owner (the number of the request whose
            state it continued; 0 a cell the model found empty, -1 a request outside this run)
  requests  one row per request: tag, ttft_ms, e2e_ms, tokens, wrong, status
  steps     the engine's passes with their tick
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from app.generation.engine import GeneratorSettings, PlannedRequest, Workload, analysis, deployments, state_cells
from app.generation.engine import run as engine_run
from app.generation.engine.tokens import PROMPT_LENGTH, VOCAB
from app.generation.setup import GenSetup
from app.lab.scenario.ids import unique_ids

if TYPE_CHECKING:
    from app.lab.server import LabServer

MODE_SETTINGS = {"static": ("static", "row"), "inflight": ("inflight", "corrid"), "inflight_by_row": ("inflight", "row")}
SAME = 1.2  # first tokens within this ratio count as about the same


@dataclass(frozen=True, kw_only=True)
class GenRun:
    mode: str  # static | inflight | inflight_by_row
    label: str  # what the run is called among a comparison's runs (the mode, or an exercise's code)
    model: str
    max_batch_size: int
    tokens: pd.DataFrame
    requests: pd.DataFrame
    steps: pd.DataFrame
    numbers: dict[str, Any] = field(default_factory=dict)  # RunFigures.to_json() and counts: read as floats by the pages


def settings_for(setup: GenSetup, mode: str, step_ms: float = 20.0, honour_cancel: bool = True) -> GeneratorSettings:
    """The engine's deployment settings for one mode of the lab's set-up."""
    batching, state_key = MODE_SETTINGS[mode]
    return GeneratorSettings(batching=batching, state_key=state_key, step_ms=step_ms, honour_cancel=honour_cancel,
                             max_batch_size=setup.max_batch_size, instances=setup.instances,
                             queue_delay_us=setup.queue_delay_ms * 1000, strategy=setup.strategy)


def deploy(server: LabServer, setup: GenSetup, mode: str, step_ms: float = 20.0, honour_cancel: bool = True) -> str:
    """Load the deployment a mode of the set-up makes and return its name: the engine's (a shipped one when the
    settings match), or, in flight with fewer candidate sequences than batch rows, that config under a name of its own."""
    settings = settings_for(setup, mode, step_ms, honour_cancel)
    if settings.batching == "static" or settings.strategy == "direct" or setup.max_candidates >= setup.max_batch_size:
        return deployments.ensure(server, settings)
    settings.check()
    name = f"{deployments.setup_name(settings)}_c{setup.max_candidates}"
    config = settings.to_config(name)
    config.sequence_batching.oldest.max_candidate_sequences = setup.max_candidates
    server.models.ensure(name, config, with_code=True, name_fixes_config=True)
    return name


def plan(setup: GenSetup) -> list[PlannedRequest]:
    """The set-up's workload as the engine plans it, its prompts drawn again from prompt_seed (the same arrivals
    and lengths can carry other prompts)."""
    planned = Workload(requests=setup.requests, mean_gap_ms=float(setup.mean_gap_ms), min_tokens=setup.min_tokens,
                       max_tokens=setup.max_tokens, seed=setup.seed).plan()
    prompts = np.random.default_rng(setup.prompt_seed).integers(0, VOCAB, size=(setup.requests, PROMPT_LENGTH))
    return [replace(p, prompt=(int(q[0]), int(q[1]), int(q[2]), int(q[3]))) for p, q in zip(planned, prompts, strict=True)]


def request(index: int, arrival_s: float, prompt: tuple[int, int, int, int], max_tokens: int) -> PlannedRequest:
    """One planned request written by hand (an exercise's traffic); run() gives it a fresh tag."""
    return PlannedRequest(index=index, tag=0, arrival_s=arrival_s, prompt=prompt, max_tokens=max_tokens)


def run_setup(server: LabServer, setup: GenSetup) -> list[GenRun]:
    """Each mode of the set-up on the same planned workload, one after the other."""
    planned = plan(setup)
    return [run(server, setup, mode, planned) for mode in setup.modes()]


def run(server: LabServer, setup: GenSetup, mode: str, planned: list[PlannedRequest], step_ms: float = 20.0,
        label: str | None = None, honour_cancel: bool = True, cancel_after: dict[int, int] | None = None,
        hold: bool = True) -> GenRun:
    """Deploy `mode` with the set-up's settings, send `planned` (each request with a fresh tag, so no two runs share
    one) through the engine's driver, and tabulate the run. cancel_after: {request index: tokens after which its
    client cancels it}; hold False: the caller holds the deployment already (app/lab/traffic run_queue). numbers holds
    the engine's run figures, the wrong tokens and the model's state cells after."""
    model = deploy(server, setup, mode, step_ms, honour_cancel)
    plans = [replace(p, tag=int(tag)) for p, tag in zip(planned, unique_ids(len(planned)), strict=True)]
    done = engine_run(server, model, plans, cancel_after=cancel_after, hold=hold)
    tokens, requests, steps = tables(done.trace, plans, mode, setup.max_batch_size)
    figures = analysis.run_figures(analysis.requests_table(done.trace, plans), done.trace, setup.max_batch_size)
    numbers = {**figures.to_json(), "wrong_tokens": int(tokens["wrong"].sum()),
               "state_cells": state_cells(server.metrics_url, model)}
    return GenRun(mode=mode, label=label or mode, model=model, max_batch_size=setup.max_batch_size, tokens=tokens,
                  requests=requests, steps=steps, numbers=numbers)


def tables(trace: pd.DataFrame, plans: list[PlannedRequest], mode: str,
           max_batch_size: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(tokens, requests, steps) from the engine's trace (driver.TRACE_COLUMNS) and its analysis."""
    number = {p.tag: p.index + 1 for p in plans}
    per_request = analysis.requests_table(trace, plans)
    steps = analysis.passes(trace, max_batch_size)
    steps["tick"] = steps.groupby("instance").cumcount()
    steps["mode"] = mode
    got = analysis.token_rows(trace).merge(steps[["instance", "execution", "pass", "tick"]], on=["instance", "execution", "pass"])
    got = got.sort_values("t_recv", kind="stable").reset_index(drop=True)
    position = got.groupby("index").cumcount()
    expected = per_request.set_index("index")["expected"]
    received = per_request.set_index("index")["received"]
    tokens = pd.DataFrame({
        "mode": mode,
        "tag": got["index"].astype(int) + 1,
        "instance": got["instance"].astype(int), "execution": got["execution"].astype(int), "tick": got["tick"].astype(int),
        "row": got["row"].astype(int), "batch": got["batch"].astype(int), "step": position.astype(int),
        "t_s": got["t_recv"].astype(float), "token": got["token"].astype(int),
        "owner": [0 if int(o) == 0 else number.get(int(o), -1) for o in got["state_owner"]],
    })
    tokens["last"] = [k == len(received[i]) - 1 for i, k in zip(got["index"], position, strict=True)]
    tokens["wrong"] = [k >= len(expected[i]) or expected[i][k] != t for i, k, t in zip(got["index"], position, got["token"],
                                                                                       strict=True)]
    requests = pd.DataFrame({
        "mode": mode, "tag": per_request["index"].astype(int) + 1, "ttft_ms": per_request["ttft_ms"],
        "e2e_ms": per_request["e2e_ms"], "tokens": per_request["tokens"].astype(int), "status": per_request["status"],
        "wrong": tokens.groupby("tag")["wrong"].sum().reindex(per_request["index"] + 1, fill_value=0).to_numpy(dtype=int),
    })
    return tokens, requests, steps


def joined(done: Iterable[GenRun]) -> dict[str, pd.DataFrame]:
    """The tables of several runs, one below the other, each row labelled with its run's label."""
    done = list(done)
    return {name: pd.concat([getattr(r, name).assign(label=r.label) for r in done], ignore_index=True)
            for name in ("tokens", "requests", "steps")}


def answer(kind: str, done: list[GenRun]) -> str:
    """What the server did, as the answer key of the lab page's question (app/generation/words.ANSWERS):
    compare: which mode gave the median request its first token sooner (within a fifth: the same);
    single: whether some model step ran with rows left empty."""
    if kind == "compare":
        by_mode = {r.mode: float(r.numbers["ttft_p50_ms"]) for r in done}
        static, inflight = by_mode["static"], by_mode["inflight"]
        if static < inflight / SAME:
            return "static"
        return "inflight" if inflight < static / SAME else "same"
    return "yes" if any(float(r.steps["fill"].min()) < 1 for r in done) else "no"

