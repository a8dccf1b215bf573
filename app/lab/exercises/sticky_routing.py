"""Sticky routing: two Triton replicas behind a real nginx, round robin vs hash on the session.

The replicas are embedded servers of their own (only asr_sequence_direct loaded), separate
from the lab's server; they and the proxy are stopped at the end, even on failure.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import tritonclient.http as http

from app.lab import driver, proxy, run_log, server_log
from app.lab.exercises import measure, plots
from app.lab.exercises.base import Exercise, ExerciseResult, Option, Steps
from app.lab.scenario import Scenario, random_texts
from app.lab.server.connection import LabServer

MODEL = "asr_sequence_direct"
SESSIONS = 3
CHUNKS = 8
START_REFUSAL = "must specify the START flag"
POLICY_TEXT = {"round_robin": "round robin (nginx default)", "sticky": "hash $http_x_session_id consistent"}

EXERCISE = Exercise(
    name="sticky_routing",
    title="Sticky routing: two replicas behind a load balancer",
    scenario=(
        f"Traffic grew, so the recogniser now runs on two Triton servers (replicas), each with the "
        f"direct sequence batcher, behind an nginx load balancer left at its default policy, round "
        f"robin. {SESSIONS} clients stream through the balancer's address; every request carries the "
        "client's session in an X-Session-ID header, and the correlation ID as usual."
    ),
    question="What happens to the streams under round robin?",
    options=(
        Option("intact", "Every transcript is intact: the balancer only spreads the load."),
        Option("refused", "A session's chunks land on both replicas, and the replica that never saw its START refuses them."),
        Option("garbled", "Each replica continues from its own half of the state: garbled text, but no errors."),
    ),
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
    replicas = [LabServer(models=(MODEL,)) for _ in range(2)]
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
    merged["replica"] = merged["upstream"].map(names).fillna("not logged")
    merged["right"] = (merged["error"] == "") & (merged["symbol"] == merged["expected"])
    merged["policy"] = policy
    return merged.drop(columns=["symbol", "expected"]).sort_values(["session", "chunk"]).reset_index(drop=True)


def run(server, deployer, progress=None) -> ExerciseResult:
    del server, deployer  # this exercise brings its own servers: two replicas and a proxy
    steps = Steps(progress, 6)
    steps("Checking for nginx")
    proxy.find_nginx()  # fail with the install hint before spending time on replicas
    steps("Starting two Triton replicas (about 15 s on two cores)")
    replicas = _start_replicas()
    nginx = None
    runs, routes = {}, []
    try:
        names = {r.url: f"replica {'AB'[i]}" for i, r in enumerate(replicas)}
        texts = random_texts(SESSIONS, CHUNKS, seed=21)
        for policy in proxy.POLICIES:
            steps(f"nginx with {POLICY_TEXT[policy]}: {SESSIONS} sessions")
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
        steps("Stopping the replicas and the proxy")
    finally:
        if nginx is not None:
            nginx.stop()
        _stop_all(replicas)
    steps("Measuring")

    routes = pd.concat(routes, ignore_index=True)
    spread = routes.groupby(["policy", "session"])["replica"].nunique()
    rr, sticky = runs["round_robin"], runs["sticky"]
    refusals = routes[(routes["policy"] == "round_robin") & (routes["error"] != "")]
    per_replica = routes.groupby(["policy", "replica"]).size()
    numbers = {
        "rr_sessions_broken": int((rr.sessions["verdict"] != "intact").sum()),
        "rr_sessions_on_both_replicas": int((spread.loc["round_robin"] > 1).sum()),
        "rr_refused_chunks": len(refusals),
        "rr_requests_per_replica": ", ".join(f"{k} {v}" for k, v in per_replica.loc["round_robin"].items()),
        "sticky_intact": bool(sticky.all_intact),
        "sticky_sessions_on_one_replica": int((spread.loc["sticky"] == 1).sum()),
        "sticky_requests_per_replica": ", ".join(f"{k} {v}" for k, v in per_replica.loc["sticky"].items()),
        "sessions": SESSIONS,
    }
    outcome = _outcome(rr)
    first = refusals.iloc[0] if not refusals.empty else None
    findings = [
        f"round robin: {numbers['rr_sessions_on_both_replicas']} of {SESSIONS} sessions reached both replicas; "
        f"{numbers['rr_sessions_broken']} broke ({', '.join(f'{k} {v}' for k, v in measure.verdict_counts(rr).items())}).",
        f"round robin requests per replica: {numbers['rr_requests_per_replica']}.",
        f"sticky: {numbers['sticky_sessions_on_one_replica']} of {SESSIONS} sessions stayed on one replica; "
        f"{'all intact' if sticky.all_intact else measure.verdict_counts(sticky)}; per replica: {numbers['sticky_requests_per_replica']}.",
    ]
    if first is not None:
        findings.append(
            f"{measure.session_label(first['session'])}, chunk {int(first['chunk']) + 1} went to {first['replica']} "
            f"(HTTP {first['status']}): {first['error']}"
        )
    explanation = (
        "A sequence lives in one Triton server: its slot, its idle timer and the model's state are all in that "
        "process, and the replicas share nothing. nginx's default round robin picks a replica per request, not "
        "per session, so a stream's chunks alternate between replicas (its access log, $upstream_addr per "
        "X-Request-ID, shows each chunk's replica). The first chunk that reaches the replica that never saw the "
        f"session's START is refused (\"{START_REFUSAL} ...\"), and even a balancer that let it through would "
        "leave each replica with half the history. `hash $http_x_session_id consistent;` routes on the session, "
        "so every chunk of a session reaches the same replica and the sessions came back "
        f"{'intact' if sticky.all_intact else 'with ' + str(measure.verdict_counts(sticky))}; different sessions "
        f"may still go to different replicas (here: {numbers['sticky_requests_per_replica']}). Consistent hashing also moves only a fraction of sessions when "
        "a replica is added or removed, and those moved sessions do lose their state: stateful streams need the "
        "route to stay fixed for their whole life."
    )
    steps.finish()
    return ExerciseResult(
        EXERCISE,
        outcome,
        numbers,
        {"routes": routes},
        explanation,
        findings,
        runs,
    )


def figures(result: ExerciseResult) -> list[tuple[str, go.Figure]]:
    """The exercise's charts, each drawn from one of the result's tables."""
    routes = result.tables["routes"].assign(who=lambda f: plots.sessions(f), chunk_no=lambda f: f["chunk"] + 1)
    routes["answer"] = routes.apply(lambda r: "refused" if r["error"] else ("right" if r["right"] else "wrong"), axis=1)
    fig = px.scatter(routes, x="chunk_no", y="who", color="replica", symbol="answer", facet_row="policy",
                     labels={"chunk_no": "chunk", "who": ""}, title="Which replica served each chunk (from nginx's access log)",
                     symbol_map={"right": "circle", "wrong": "diamond", "refused": "x"})
    fig.update_traces(marker_size=12)
    return [("Routing", plots.layout(fig, 420))]
