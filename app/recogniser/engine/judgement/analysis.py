"""Turn a run's per-request rows into the tables the lab shows (no plotting, no Streamlit).

Times: exec_start/exec_end/queued_from are seconds from the run's start (from the server's
trace); *_ms columns are milliseconds. An execution is one call of the model's execute():
the rows that share an instance and a compute start. A slot index below the execution's
batch size with no request of this run behind it is a padding row (direct strategy), or
another learner's request on a shared deployment.

Tables hold codes and numbers (a source "trace", an owner "fresh"); figures.py and the pages
put them into words (app/recogniser/figures.py, app/recogniser/words/charts.py).

RunAnalysis holds one run's tables for all its charts and their sentences: each table is computed
the first time a chart asks for it and then shared, so a page that draws five charts and says five
sentences reads the run's executions once, not once per chart and once more per sentence.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from app.lab.scenario.alphabet import ALPHABET
from app.recogniser.engine.judgement.verdicts import PADDING_OWNER

if TYPE_CHECKING:
    from app.lab.records import RunResult

PERCENTILES = (50, 95, 99)
LATENCY_COLUMNS = ("length_low", "length_high", "source", "sessions", "requests", *(f"p{q}" for q in PERCENTILES))


def is_traced(requests: pd.DataFrame) -> bool:
    return "exec_start" in requests and bool(requests["exec_start"].notna().any())


def _ran(requests: pd.DataFrame) -> pd.DataFrame:
    """Requests the model executed and the trace timed (refused chunks have no slot)."""
    if not is_traced(requests):
        return requests.iloc[0:0]
    ran = requests[(requests["instance"] >= 0) & requests["exec_start"].notna()]
    return ran


def executions(requests: pd.DataFrame) -> pd.DataFrame:
    """One row per execution: instance, times, batch size, real slots and the missing ones."""
    columns = ["instance", "exec_start", "exec_end", "batch", "real", "missing"]
    ran = _ran(requests)
    if ran.empty:
        return pd.DataFrame(columns=columns)
    out = []
    for (instance, start), group in ran.groupby(["instance", "exec_start"], sort=True):
        batch = int(group["batch"].max())
        real = sorted(int(s) for s in group["slot"])
        out.append(
            {
                "instance": int(instance),
                "exec_start": float(start),
                "exec_end": float(group["exec_end"].max()),
                "batch": batch,
                "real": len(real),
                "missing": [s for s in range(batch) if s not in set(real)],
            }
        )
    return pd.DataFrame(out, columns=columns)


def padding_rows(requests: pd.DataFrame) -> pd.DataFrame:
    """Rows of executions that carried no request of this run: one row per (execution, slot)."""
    return _padding_rows(executions(requests))


def _padding_rows(runs: pd.DataFrame) -> pd.DataFrame:
    rows = [
        {"instance": e.instance, "slot": slot, "exec_start": e.exec_start, "exec_end": e.exec_end, "batch": e.batch}
        for e in runs.itertuples()
        for slot in e.missing
    ]
    return pd.DataFrame(rows, columns=["instance", "slot", "exec_start", "exec_end", "batch"])


def slot_rows(requests: pd.DataFrame, instances: int | None = None, slots: int | None = None) -> list[tuple[int, int]]:
    """Every (instance, slot) the timeline shows: the deployment's, plus any the data used."""
    return _slot_rows(requests, executions(requests), instances, slots)


def _slot_rows(requests: pd.DataFrame, runs: pd.DataFrame, instances: int | None, slots: int | None) -> list[tuple[int, int]]:
    seen: set[tuple[int, int]] = set()
    ran = requests[requests["instance"] >= 0] if "instance" in requests else requests.iloc[0:0]
    seen.update((int(i), int(s)) for i, s in zip(ran["instance"], ran["slot"], strict=True))
    for e in runs.itertuples():
        seen.update((e.instance, s) for s in e.missing)
    if instances and slots:
        seen.update((i, s) for i in range(instances) for s in range(slots))
    return sorted(seen)


def symbol_char(value: Any) -> str:  # a table cell: an index, NaN or None
    """A symbol index as the letter a learner reads ('␣' for space, '?' for none)."""
    try:
        index = int(value)
    except (TypeError, ValueError):
        return "?"
    if index == 0:
        return "␣"
    return ALPHABET[index] if 0 < index < len(ALPHABET) else "?"


OWNERS = ("fresh", "padding", "own", "session", "earlier", "unknown")


def owner_label(reported: Any, own_tag: int, tags: dict[int, int]) -> tuple[str, int | None]:
    """Whose state a chunk read, from the STATE_OWNER the model reported: (code of OWNERS,
    the 0-based session of this run for "session", else None)."""
    try:
        owner = int(reported)
    except (TypeError, ValueError):
        return "unknown", None
    if owner == 0:
        return "fresh", None
    if owner == PADDING_OWNER:
        return "padding", None
    if owner == int(own_tag):
        return "own", None
    if owner in tags:
        return "session", tags[owner]
    return "earlier", None


def marks(requests: pd.DataFrame) -> pd.DataFrame:
    """The timeline's marks: every executed request with what its hover text needs."""
    ran = _ran(requests).copy()
    if ran.empty:
        return ran
    tags = {int(t): int(s) for t, s in zip(requests["tag"], requests["session"], strict=True)}
    ran["wrong"] = ran["symbol"].astype(int) != ran["expected"].astype(int)
    ran["expected_char"] = [symbol_char(v) for v in ran["expected"]]
    ran["received_char"] = [symbol_char(v) for v in ran["symbol"]]
    ran["state_char"] = [symbol_char(v) for v in ran["state_in"]]
    owners = [owner_label(o, t, tags) for o, t in zip(ran["state_owner"], ran["tag"], strict=True)]
    ran["state_from"] = [code for code, _ in owners]
    ran["state_from_session"] = pd.Series([session for _, session in owners], index=ran.index, dtype=object)
    return ran


@dataclass(frozen=True)
class Cell:
    expected: str
    received: str
    wrong: bool
    first: bool


def transcript_cells(expected_text: str, received_text: str, first_wrong: Any) -> list[Cell]:  # a table cell: a chunk index, NaN or None
    """Expected and received text aligned symbol by symbol, wrong ones and the first marked."""
    first = None if first_wrong is None or pd.isna(first_wrong) else int(first_wrong)
    received = received_text.ljust(len(expected_text), "?")
    return [
        Cell(e, r, e != r, k == first)
        for k, (e, r) in enumerate(zip(expected_text, received, strict=True))
    ]


def batch_distribution(server: dict[str, Any], requests: pd.DataFrame) -> pd.DataFrame:  # server: server_stats.delta's
    """Executions per batch size, as the server counted them and as this run's trace shows."""
    return _batch_distribution(server, executions(requests))


def _batch_distribution(server: dict[str, Any], runs: pd.DataFrame) -> pd.DataFrame:
    from_server = {int(k): int(v) for k, v in (server or {}).get("batch_sizes", {}).items()}
    from_trace = runs["batch"].value_counts().to_dict() if not runs.empty else {}
    sizes = sorted(set(from_server) | {int(k) for k in from_trace})
    return pd.DataFrame(
        {
            "batch_size": sizes,
            "server": [from_server.get(s, 0) for s in sizes],
            "trace": [int(from_trace.get(s, 0)) for s in sizes],
        }
    )


def queue_compute(requests: pd.DataFrame, server: dict[str, Any]) -> pd.DataFrame:
    """Mean queue and compute time per request from three independent sources: source is
    "trace" (this run's), "statistics" (the statistics API) or "metrics" (Prometheus)."""
    rows = []
    if is_traced(requests):
        ran = _ran(requests)
        rows.append(("trace", float(ran["queue_ms"].mean()), float(ran["compute_ms"].mean())))
    if server and server.get("inference_count"):
        rows.append(("statistics", server["mean_queue_us"] / 1000, server["mean_compute_us"] / 1000))
    metrics = (server or {}).get("metrics", {})
    done = metrics.get("nv_inference_request_success", 0.0)
    if done:
        rows.append(
            (
                "metrics",
                metrics.get("nv_inference_queue_duration_us", 0.0) / done / 1000,
                metrics.get("nv_inference_compute_infer_duration_us", 0.0) / done / 1000,
            )
        )
    return pd.DataFrame(rows, columns=["source", "queue_ms", "compute_ms"])


def length_groups(sessions: pd.DataFrame, max_groups: int = 4) -> dict[int, tuple[int, int]]:
    """Session -> its length group (fewest, most chunks); many distinct lengths share ranges.
    A group of one length is (n, n)."""
    lengths = sessions.set_index("session")["chunks"].astype(int)
    distinct = sorted(lengths.unique())
    if len(distinct) <= max_groups:
        return {s: (int(n), int(n)) for s, n in lengths.items()}
    edges = np.linspace(min(distinct), max(distinct), max_groups + 1)
    labels = {}
    for s, n in lengths.items():
        k = min(int(np.searchsorted(edges, n, side="right")) - 1, max_groups - 1)
        labels[s] = (int(np.ceil(edges[k])), int(edges[k + 1]))
    return labels


def latency_percentiles(requests: pd.DataFrame, sessions: pd.DataFrame) -> pd.DataFrame:
    """p50/p95/p99 per session length group (length_low..length_high chunks): source "client"
    (the client's round trip) and "trace" (queue + compute, from the server's trace)."""
    groups = length_groups(sessions)
    ok = requests[requests["error"] == ""].copy()
    ok["length"] = ok["session"].map(groups)
    series = {"client": ok["latency_ms"]}
    if is_traced(requests):
        series["trace"] = ok["queue_ms"] + ok["compute_ms"]
    rows = []
    order = sorted(set(groups.values()))
    for length in order:
        mine = ok["length"] == length
        for source, values in series.items():
            values = values[mine].dropna()
            if values.empty:
                continue
            p = np.percentile(values, PERCENTILES)
            rows.append(
                {
                    "length_low": length[0],
                    "length_high": length[1],
                    "source": source,
                    "sessions": sum(1 for g in groups.values() if g == length),
                    "requests": int(mine.sum()),
                    **{f"p{q}": float(v) for q, v in zip(PERCENTILES, p, strict=True)},
                }
            )
    return pd.DataFrame(rows, columns=list(LATENCY_COLUMNS))


def instance_work(requests: pd.DataFrame) -> pd.DataFrame:
    """What each instance did: requests, executions, busy time, mean batch, sessions served."""
    return _instance_work(requests, executions(requests))


def _instance_work(requests: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    columns = ["instance", "requests", "executions", "busy_ms", "mean_batch", "sessions"]
    ran = requests[requests["instance"] >= 0]
    if ran.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for instance, mine in ran.groupby("instance"):
        own = runs[runs["instance"] == instance] if not runs.empty else runs
        rows.append(
            {
                "instance": int(instance),
                "requests": len(mine),
                "executions": len(own),
                "busy_ms": float(((own["exec_end"] - own["exec_start"]) * 1000).sum()) if len(own) else 0.0,
                "mean_batch": float(own["batch"].mean()) if len(own) else 0.0,
                "sessions": int(mine["session"].nunique()),
            }
        )
    return pd.DataFrame(rows, columns=columns)


@dataclass(frozen=True, eq=False)
class RunAnalysis:
    """One run's tables for its charts and their sentences (figures.py), each computed once, when first read.

    instances and slots are the deployment's layout: the timeline shows its every row, used or not.
    Without sessions (a run known by its requests alone) the latency table is empty.
    """

    requests: pd.DataFrame
    server: dict[str, Any] = field(default_factory=dict)
    sessions: pd.DataFrame | None = None
    instances: int | None = None
    slots: int | None = None
    state_cells: pd.DataFrame | None = None  # the model's own gauge during the run (state_cells.Sampler frame)

    @cached_property
    def executions(self) -> pd.DataFrame:
        return executions(self.requests)

    @cached_property
    def marks(self) -> pd.DataFrame:
        return marks(self.requests)

    @cached_property
    def slot_rows(self) -> list[tuple[int, int]]:
        return _slot_rows(self.requests, self.executions, self.instances, self.slots)

    @cached_property
    def padding_rows(self) -> pd.DataFrame:
        return _padding_rows(self.executions)

    @cached_property
    def batch_distribution(self) -> pd.DataFrame:
        return _batch_distribution(self.server, self.executions)

    @cached_property
    def queue_compute(self) -> pd.DataFrame:
        return queue_compute(self.requests, self.server)

    @cached_property
    def latency_percentiles(self) -> pd.DataFrame:
        if self.sessions is None:
            return pd.DataFrame(columns=list(LATENCY_COLUMNS))
        return latency_percentiles(self.requests, self.sessions)

    @cached_property
    def instance_work(self) -> pd.DataFrame:
        return _instance_work(self.requests, self.executions)


def of_run(result: RunResult, instances: int | None = None, slots: int | None = None) -> RunAnalysis:
    """The analysis of a RunResult, drawn on the deployment's instances x slots (None: the rows the run used)."""
    return RunAnalysis(result.requests, result.server, result.sessions, instances, slots, getattr(result, "state_cells", None))


def waited_for_slot(requests: pd.DataFrame) -> pd.Series:
    """Per session: True when it began only after another session had finished.

    Every session of a run is sent at once, so one that starts late was held in the
    scheduler's backlog until a slot came free. Uses the trace, else client times.
    """
    ok = requests[requests["error"] == ""]
    start_col, end_col = ("exec_start", "exec_end") if is_traced(requests) else ("t_recv", "t_recv")
    firsts = ok.groupby("session")[start_col].min()
    lasts = ok.groupby("session")[end_col].max()
    waited = {}
    for session, began in firsts.items():
        others = lasts.drop(session)
        waited[session] = bool(len(others)) and bool(began >= others.min())
    return pd.Series(waited, name="waited", dtype=bool)


def control_rows(requests: pd.DataFrame, sessions: pd.DataFrame, sequence: bool = True) -> pd.DataFrame:
    """Per request: the sequence flags the client sent and where the scheduler put it.
    Columns are codes (CONTROL_COLUMNS); session and chunk count from 1, as people count them;
    padding is the execution's READY=0 rows."""
    length = sessions.set_index("session")["chunks"].astype(int)
    runs = executions(requests)
    real_in = {(e.instance, e.exec_start): (e.batch, len(e.missing)) for e in runs.itertuples()}
    rows = []
    for r in requests.sort_values(["t_send", "session"]).itertuples():
        batch, padding = real_in.get((int(r.instance), getattr(r, "exec_start", None)), (int(r.batch), None))
        rows.append(
            {
                "session": int(r.session) + 1,
                "chunk": int(r.chunk) + 1,
                "corrid": r.corrid,
                "start": bool(sequence and r.chunk == 0),
                "end": bool(sequence and r.chunk == length[r.session] - 1),
                "instance": int(r.instance),
                "slot": int(r.slot),
                "batch": batch,
                "padding": padding,
                "state_read": symbol_char(r.state_in),
                "expected": symbol_char(r.expected),
                "got": symbol_char(r.symbol),
                "error": r.error,
            }
        )
    return pd.DataFrame(rows, columns=CONTROL_COLUMNS)


CONTROL_COLUMNS = ("session", "chunk", "corrid", "start", "end", "instance", "slot", "batch", "padding", "state_read",
                   "expected", "got", "error")
