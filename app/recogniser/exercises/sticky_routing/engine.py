"""Sticky routing: two Triton replicas behind a real nginx, round robin vs hash on the session.

The replicas are embedded servers of their own (only asr_sequence_direct loaded), separate
from the lab's server; they and the proxy are stopped at the end, even on failure.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd
import tritonclient.http as http

from app.exercise_kit import Exercise, ExerciseJudgement, Finding, Measured, Number, Steps, Tables, readings
from app.lab.observation import START_REFUSAL, run_log, server_log
from app.lab.scenario.scenario import Scenario, random_texts
from app.lab.server import PROXY_POLICIES, LabServer, NginxProxy, find_nginx
from app.recogniser.engine import driver

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.records import RunResult

MODEL = "asr_sequence_direct"
SESSIONS = 3
CHUNKS = 8
NOT_LOGGED = "not_logged"  # replica code of a request missing from nginx's access log

EXERCISE = Exercise(
    name="sticky_routing",
    options=("intact", "refused", "garbled"),
    correct="refused",
)


@dataclass
class _Untraced:
    """The driver's view of a server for runs through the proxy: control calls go to one
    replica, and there is no trace to join (each replica traces only its own half)."""

    url: str
    metrics_url: str
    trace_dir: None = None
    is_embedded: bool = False  # its log is read per replica by measure() below, not through this view
    log_path: None = None

    @property
    def grpc_url(self) -> str:
        raise NotImplementedError("runs through the proxy are HTTP: nginx proxies Triton's HTTP port only")

    def client(self, timeout_s: float = 60.0) -> http.InferenceServerClient:
        return http.InferenceServerClient(self.url, connection_timeout=timeout_s, network_timeout=timeout_s)


def _start_replicas() -> list[LabServer]:
    replicas = [LabServer(preload=(MODEL,)) for _ in range(2)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(r.start) for r in replicas]
    errors = [error for error in (f.exception() for f in futures) if error is not None]
    if errors:
        _stop_all(replicas)
        raise errors[0]
    return replicas


def _stop_all(replicas: list[LabServer]) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda r: r.stop(), replicas))


def _routes(run: RunResult, nginx: NginxProxy, names: dict[str, str], policy: str) -> pd.DataFrame:
    log = nginx.routes()[["request_id", "upstream", "status"]]
    merged = run.requests[["request_id", "session", "chunk", "error", "symbol", "expected"]].merge(log, on="request_id", how="left")
    merged["replica"] = merged["upstream"].map(names).fillna(NOT_LOGGED)
    merged["right"] = (merged["error"] == "") & (merged["symbol"] == merged["expected"])
    merged["policy"] = policy
    return merged.drop(columns=["symbol", "expected"]).sort_values(["session", "chunk"]).reset_index(drop=True)


def _per_replica(counts: pd.Series) -> str:
    """Requests per replica as verbatim ids and counts: 'A 12 / B 12'."""
    return " / ".join(f"{name} {int(n)}" for name, n in counts.items())


def _through_proxy(replicas: list[LabServer], texts: list[str], policy: str) -> tuple[RunResult, pd.DataFrame]:
    """The sessions through a fresh nginx with this policy: the run (its log read on both replicas) and its routes."""
    nginx = NginxProxy([r.url for r in replicas], policy).start()
    try:
        scenario = Scenario(
            model=MODEL, texts=texts, think_ms=20.0, jitter_ms=5.0, seed=4,
            urls=[nginx.url], headers_by_session=True, sequence=True,
        )
        # The refusals are logged by the replica that never saw the START, at verbosity 1.
        with server_log.raised_verbosity(replicas[0], 1), server_log.raised_verbosity(replicas[1], 1):
            windows = [server_log.LogWindow.start(r) for r in replicas]
            result = driver.run(_Untraced(replicas[0].url, replicas[0].metrics_url), scenario)
        result.log = run_log.merge(run_log.capture(w, [MODEL], [p.corrid for p in result.plans]) for w in windows)
        return result, _routes(result, nginx, {r.url: "AB"[i] for i, r in enumerate(replicas)}, policy)
    finally:
        nginx.stop()


def measure(server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured:
    """The same sessions through nginx to two replicas, round robin and then hashed on the session."""
    del server, deployer  # this exercise brings its own servers: two replicas and a proxy
    steps = Steps(progress, 6)
    steps("nginx")
    find_nginx()  # fail with the install hint before spending time on replicas
    steps("replicas")
    replicas = _start_replicas()
    runs, routes = {}, []
    try:
        texts = random_texts(SESSIONS, CHUNKS, seed=21)
        for policy in PROXY_POLICIES:
            if policy == "sticky":
                steps("policy_sticky", sessions=SESSIONS)
            else:
                steps("policy_round_robin", sessions=SESSIONS)
            runs[policy], route = _through_proxy(replicas, texts, policy)
            routes.append(route)
        steps("stopping")
    finally:
        _stop_all(replicas)
    steps("measuring")
    sessions = pd.concat([run.sessions[["session", "verdict"]].assign(policy=policy) for policy, run in runs.items()],
                         ignore_index=True)
    return Measured(tables={"routes": pd.concat(routes, ignore_index=True), "sessions": sessions}, runs=runs)


def _outcome(routes: pd.DataFrame, sessions: pd.DataFrame) -> str:
    """Of the round-robin run: refused when a replica refused a chunk for lacking START."""
    if any(START_REFUSAL in e for e in routes["error"]):
        return "refused"
    return "intact" if (sessions["verdict"] == "intact").all() else "garbled"


def _numbers(routes: pd.DataFrame, sessions: pd.DataFrame) -> dict[str, Number]:
    spread = routes.groupby(["policy", "session"])["replica"].nunique()
    per_replica = routes.groupby(["policy", "replica"]).size()
    rr, sticky = (sessions[sessions["policy"] == policy] for policy in ("round_robin", "sticky"))
    return {
        "rr_sessions_broken": int((rr["verdict"] != "intact").sum()),
        "rr_sessions_on_both_replicas": int((spread.loc["round_robin"] > 1).sum()),
        "rr_refused_chunks": int(((routes["policy"] == "round_robin") & (routes["error"] != "")).sum()),
        "rr_requests_per_replica": _per_replica(per_replica.loc["round_robin"]),
        "sticky_intact": bool((sticky["verdict"] == "intact").all()),
        "sticky_sessions_on_one_replica": int((spread.loc["sticky"] == 1).sum()),
        "sticky_requests_per_replica": _per_replica(per_replica.loc["sticky"]),
        "sessions": int(sessions["session"].nunique()),
    }


def _refusal(first: pd.Series) -> Finding:
    """The first refused chunk: who, which chunk (1-based), which replica, nginx's status and Triton's words."""
    status = first["status"]
    return Finding("refusal", {"who": int(first["session"]), "chunk": int(first["chunk"]) + 1, "replica": first["replica"],
                               "status": None if pd.isna(status) else int(status), "message": first["error"]})


def judge(tables: Tables) -> ExerciseJudgement:
    """From which replica served each chunk and how each session came out, per policy."""
    routes, sessions = tables["routes"], tables["sessions"]
    n = _numbers(routes, sessions)
    rr_routes = routes[routes["policy"] == "round_robin"]
    rr, sticky = (sessions[sessions["policy"] == policy] for policy in ("round_robin", "sticky"))
    refusals = rr_routes[rr_routes["error"] != ""]
    kept = {"one": n["sticky_sessions_on_one_replica"], "sessions": n["sessions"],
            "verdicts": readings.verdict_tally(sticky), "per_replica": n["sticky_requests_per_replica"]}
    findings = [
        Finding("rr_spread", {"both": n["rr_sessions_on_both_replicas"], "sessions": n["sessions"],
                              "broken": n["rr_sessions_broken"], "verdicts": readings.verdict_tally(rr)}),
        Finding("rr_per_replica", {"per_replica": n["rr_requests_per_replica"]}),
        Finding("sticky_intact", kept) if n["sticky_intact"] else Finding("sticky_verdicts", kept),
        *([_refusal(refusals.iloc[0])] if not refusals.empty else []),
    ]
    explanation = [
        Finding("one_process"),
        Finding("per_request"),
        Finding("refused", {"refusal": START_REFUSAL}),
        Finding("hash_intact", {"per_replica": n["sticky_requests_per_replica"]}) if n["sticky_intact"]
        else Finding("hash_verdicts", {"verdicts": readings.verdict_tally(sticky), "per_replica": n["sticky_requests_per_replica"]}),
        Finding("consistent"),
    ]
    return ExerciseJudgement(outcome=_outcome(rr_routes, rr), numbers=n, findings=findings, explanation=explanation,
                     tables={"routes": routes})
