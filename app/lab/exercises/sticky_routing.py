"""Sticky routing: two Triton replicas behind a real nginx, round robin vs hash on the session.

The replicas are embedded servers of their own (only asr_sequence_direct loaded), separate
from the lab's server; they and the proxy are stopped at the end, even on failure.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pandas as pd
import tritonclient.http as http

from app.lab.exercises.common import readings
from app.lab.exercises.common.base import Exercise, ExerciseResult, Finding, Steps
from app.lab.observation import run_log, server_log
from app.lab.scenario.scenario import Scenario, random_texts
from app.lab.server import proxy
from app.lab.server.connection import LabServer
from app.lab.traffic import driver

MODEL = "asr_sequence_direct"
SESSIONS = 3
CHUNKS = 8
START_REFUSAL = "must specify the START flag"
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
    is_embedded: bool = False  # its log is read per replica by run() below, not through this view
    log_path: None = None

    def client(self, timeout_s: float = 60.0):
        return http.InferenceServerClient(self.url, connection_timeout=timeout_s, network_timeout=timeout_s)


def _start_replicas() -> list[LabServer]:
    replicas = [LabServer(preload=(MODEL,)) for _ in range(2)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(r.start) for r in replicas]
    errors = [f.exception() for f in futures if f.exception()]
    if errors:
        _stop_all(replicas)
        raise errors[0]
    return replicas


def _stop_all(replicas) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda r: r.stop(), replicas))


def _outcome(run) -> str:
    if any(START_REFUSAL in e for e in run.requests["error"]):
        return "refused"
    return "intact" if run.all_intact else "garbled"


def _routes(run, nginx: proxy.NginxProxy, names: dict[str, str], policy: str) -> pd.DataFrame:
    log = nginx.routes()[["request_id", "upstream", "status"]]
    merged = run.requests[["request_id", "session", "chunk", "error", "symbol", "expected"]].merge(log, on="request_id", how="left")
    merged["replica"] = merged["upstream"].map(names).fillna(NOT_LOGGED)
    merged["right"] = (merged["error"] == "") & (merged["symbol"] == merged["expected"])
    merged["policy"] = policy
    return merged.drop(columns=["symbol", "expected"]).sort_values(["session", "chunk"]).reset_index(drop=True)


def _per_replica(counts: pd.Series) -> str:
    """Requests per replica as verbatim ids and counts: 'A 12 / B 12'."""
    return " / ".join(f"{name} {int(n)}" for name, n in counts.items())


def run(server, deployer, progress=None) -> ExerciseResult:
    del server, deployer  # this exercise brings its own servers: two replicas and a proxy
    steps = Steps(progress, 6)
    steps("nginx")
    proxy.find_nginx()  # fail with the install hint before spending time on replicas
    steps("replicas")
    replicas = _start_replicas()
    nginx = None
    runs, routes = {}, []
    try:
        names = {r.url: "AB"[i] for i, r in enumerate(replicas)}
        texts = random_texts(SESSIONS, CHUNKS, seed=21)
        for policy in proxy.POLICIES:
            if policy == "sticky":
                steps("policy_sticky", sessions=SESSIONS)
            else:
                steps("policy_round_robin", sessions=SESSIONS)
            nginx = proxy.NginxProxy([r.url for r in replicas], policy).start()
            scenario = Scenario(
                model=MODEL, texts=texts, think_ms=20.0, jitter_ms=5.0, seed=4,
                urls=[nginx.url], headers_by_session=True, sequence=True,
            )
            # The refusals are logged by the replica that never saw the START, at verbosity 1.
            with server_log.raised_verbosity(replicas[0], 1), server_log.raised_verbosity(replicas[1], 1):
                windows = [server_log.LogWindow.start(r) for r in replicas]
                result = driver.run(_Untraced(replicas[0].url, replicas[0].metrics_url), scenario)
            result.log = run_log.merge(run_log.capture(w, [MODEL], [p.corrid for p in result.plans]) for w in windows)
            runs[policy] = result
            routes.append(_routes(result, nginx, names, policy))
            nginx.stop()
            nginx = None
        steps("stopping")
    finally:
        if nginx is not None:
            nginx.stop()
        _stop_all(replicas)
    steps("measuring")

    routes = pd.concat(routes, ignore_index=True)
    spread = routes.groupby(["policy", "session"])["replica"].nunique()
    rr, sticky = runs["round_robin"], runs["sticky"]
    refusals = routes[(routes["policy"] == "round_robin") & (routes["error"] != "")]
    per_replica = routes.groupby(["policy", "replica"]).size()
    numbers = {
        "rr_sessions_broken": int((rr.sessions["verdict"] != "intact").sum()),
        "rr_sessions_on_both_replicas": int((spread.loc["round_robin"] > 1).sum()),
        "rr_refused_chunks": len(refusals),
        "rr_requests_per_replica": _per_replica(per_replica.loc["round_robin"]),
        "sticky_intact": bool(sticky.all_intact),
        "sticky_sessions_on_one_replica": int((spread.loc["sticky"] == 1).sum()),
        "sticky_requests_per_replica": _per_replica(per_replica.loc["sticky"]),
        "sessions": SESSIONS,
    }
    outcome = _outcome(rr)
    first = refusals.iloc[0] if not refusals.empty else None
    kept = {"one": numbers["sticky_sessions_on_one_replica"], "sessions": SESSIONS,
            "verdicts": readings.verdict_counts(sticky), "per_replica": numbers["sticky_requests_per_replica"]}
    findings = [
        Finding("rr_spread", {"both": numbers["rr_sessions_on_both_replicas"], "sessions": SESSIONS,
                              "broken": numbers["rr_sessions_broken"], "verdicts": readings.verdict_counts(rr)}),
        Finding("rr_per_replica", {"per_replica": numbers["rr_requests_per_replica"]}),
        Finding("sticky_intact", kept) if sticky.all_intact else Finding("sticky_verdicts", kept),
    ]
    if first is not None:
        status = first["status"]
        findings.append(Finding("refusal", {"who": int(first["session"]), "chunk": int(first["chunk"]) + 1,
                                            "replica": first["replica"], "status": None if pd.isna(status) else int(status),
                                            "message": first["error"]}))
    explanation = [
        Finding("one_process"),
        Finding("per_request"),
        Finding("refused", {"refusal": START_REFUSAL}),
        Finding("hash_intact", {"per_replica": numbers["sticky_requests_per_replica"]}) if sticky.all_intact
        else Finding("hash_verdicts", {"verdicts": readings.verdict_counts(sticky), "per_replica": numbers["sticky_requests_per_replica"]}),
        Finding("consistent"),
    ]
    steps.finish()
    return ExerciseResult(
        exercise=EXERCISE,
        outcome=outcome,
        numbers=numbers,
        tables={"routes": routes},
        explanation=explanation,
        findings=findings,
        runs=runs,
    )
