"""A check through a load balancer, told apart from a check of the model (`check --url LB --replica URL ...`).

A stateful deployment behind a balancer can break in two places: the model (its state mixes,
leaks or is lost on one server) or the routing (the balancer sends one sequence's requests to
replicas that do not share its state). The same check, run twice, tells which:
  1. through the balancer (the target's --url), over the transport the team's clients use, each
     session's ID in --session-header where given (so a balancer hashing on it keeps a sequence
     on one replica);
  2. directly on the first replica, which no balancer stands in front of (over HTTP: --replica
     gives the replicas' HTTP addresses).
Around the first run each replica's own statistics (GET /v2/models/<m>/stats: successful
inferences over every version) are read, before and after, to say how the balancer spread the
traffic. The diagnosis (ROUTING_DIAGNOSES) compares the two outcomes:
  balancer_splits_sequences  broke through the balancer (a refused request whose sequence the
                             replica had never seen), held directly on one replica: the balancer
                             splits sequences;
  balancer_breaks            broke through the balancer for another reason, held directly;
  model_breaks               broke directly on one replica as well: the model, not the routing;
  held                       held both ways;
  direct_only_broke          held through the balancer and broke directly (nondeterminism to look into).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from tritonclient.utils import InferenceServerException

from app.checker.engine import target as targets
from app.checker.engine.options import CheckOptions
from app.lab.problems import LabError
from app.lab.server import LabServer, UnreachableError

if TYPE_CHECKING:
    from app.checker.engine.run import CheckResult
    from app.lab.progress import Progress
    from app.lab.traffic import run_queue

ROUTING_DIAGNOSES = ("balancer_splits_sequences", "balancer_breaks", "model_breaks", "held", "direct_only_broke")
SPLIT_REASONS = ("sequence_split",)  # judge.REFUSAL_DIAGNOSES' code for a request its replica had no sequence for


@dataclass
class ReplicaSpread:
    url: str
    before: int | None  # successful inferences the replica's statistics counted before the run (None: it did not say)
    after: int | None

    @property
    def served(self) -> int | None:
        return None if self.before is None or self.after is None else self.after - self.before

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "served_before": self.before, "served_after": self.after, "served": self.served}


@dataclass
class Routing:
    balancer: str
    transport: str
    session_header: str | None
    replicas: list[ReplicaSpread]
    direct: CheckResult  # the same check directly on replicas[0]
    diagnosis: str  # one of ROUTING_DIAGNOSES
    split_checks: list[str] = field(default_factory=list)  # the verdicts broken on split sequences through the balancer

    def to_json(self) -> dict[str, Any]:
        d = self.direct
        return {
            "balancer": self.balancer, "transport": self.transport, "session_header": self.session_header,
            "replicas": [r.to_json() for r in self.replicas], "diagnosis": self.diagnosis, "split_checks": list(self.split_checks),
            "direct": {"replica": d.url, "transport": d.options.transport, "exit_code": d.exit_code, "failed_by": d.failed_by, "requests": d.requests,
                       "checks": [{"check": v.check, "variant": v.variant, "verdict": v.verdict, "reason": v.reason} for v in d.verdicts]},
        }


def open_replicas(urls: list[str], model: str) -> list[LabServer]:
    """Each replica, reachable and serving `model`; LabError naming the first that is not."""
    servers = []
    for url in urls:
        server = LabServer(url=url)
        try:
            server.start()
        except UnreachableError:
            raise LabError("check_replica_unreachable", url=url) from None
        try:
            with server.client(timeout_s=30) as client:
                ready = client.is_model_ready(model)
        except InferenceServerException:
            ready = False
        if not ready:
            raise LabError("check_replica_unknown_model", url=url, model=model)
        servers.append(server)
    return servers


def served(server: LabServer, model: str) -> int | None:
    """Successful inferences of `model` (every version) the server's statistics count; None when it does not say."""
    try:
        with server.client(timeout_s=30) as client:
            stats = client.get_inference_statistics(model)
    except InferenceServerException:
        return None
    return sum(int(((s.get("inference_stats") or {}).get("success") or {}).get("count", 0)) for s in stats.get("model_stats", []))


def diagnose(through: CheckResult, direct: CheckResult) -> tuple[str, list[str]]:
    """The routing diagnosis from the two outcomes, and the verdicts broken on split sequences."""
    split = [v.id for v in through.verdicts if v.verdict == "broken" and (v.reason in SPLIT_REASONS
                                                                           or v.values.get("refusal_diagnosis") in SPLIT_REASONS)]
    broke, direct_broke = "checks" in through.failed_by, "checks" in direct.failed_by
    if broke and direct_broke:
        return "model_breaks", split
    if broke:
        return ("balancer_splits_sequences" if split else "balancer_breaks"), split
    return ("direct_only_broke" if direct_broke else "held"), split


def check_through_balancer(target: targets.Target, replicas: list[str], options: CheckOptions, progress: Progress | None = None,
                           on_wait: run_queue.OnWait | None = None) -> CheckResult:
    """The check through the balancer (target), the replicas' statistics around it, and the same
    check directly on replicas[0]; the first run's result with `routing` set. LabError where a
    replica cannot be used (before any request is sent)."""
    from app.checker.engine.run import run_check  # the engine calls no routing: imported here, not at the top

    if not replicas:
        raise LabError("check_replica_without_balancer")
    servers = open_replicas(replicas, target.model)
    before = [served(s, target.model) for s in servers]
    through = run_check(target, options, progress, on_wait)
    spread = [ReplicaSpread(url, b, served(s, target.model)) for url, s, b in zip(replicas, servers, before, strict=True)]
    # Directly on one replica over HTTP (its gRPC address is not known here): the model, no balancer.
    direct = run_check(targets.Target(servers[0], target.model), replace(options, one_instance=False, transport="http"), progress, on_wait)
    code, split = diagnose(through, direct)
    through.routing = Routing(target.server.url, options.transport, options.session_header, spread, direct, code, split)
    return through
