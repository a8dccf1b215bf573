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
  held                       held both ways, with at least two replicas serving through the balancer;
  not_exercised              held both ways, but at most one replica served through the balancer (or
                             their statistics did not say): nothing shows how it routes a sequence
                             across replicas, so the outcome is not_exercised (exit 3 by default);
  direct_only_broke          held through the balancer and broke directly (nondeterminism to look into).
The witness (routed, below) says how many replicas served and, where every replica's log is
read (--replica-log; the replicas' verbosity is raised to 1 for the run), which replicas each
sequence reached. Only "held" depends on it (diagnose): a broken outcome is its own witness, and
the two runs keep their own verdicts; CheckResult.not_exercised lists "routing" for it.

A routing check that held says something only if the balancer spread the traffic: through a
balancer that sent every request to one replica, every sequence stays whole whatever the routing.
So the witness is exercised when at least two replicas served requests (their statistics, around
the run: ReplicaSpread); otherwise a held routing outcome is not_exercised (diagnose).

Which replica served each sequence is known only from the replicas' own logs (--replica-log, or
an embedded server's), at verbosity 1 while the run lasts: a request given a slot or put in the
backlog ("Enqueuing CORRID c ..."), a sequence's end, and a request refused for want of its
START ("inference request for sequence c ... must specify the START flag") each name the
correlation ID on the replica that saw it (app/lab/observation/server_log.py). A sequence whose
ID two replicas' logs name was split. Sequences are counted by correlation ID: an ID the check
reused for several sequences counts once. Without every replica's log, only the spread is known
("source": "statistics") and sequences_split is None. Codes and values only.
"""
from __future__ import annotations

from collections.abc import Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tritonclient.utils import InferenceServerException

from app.checker.engine import target as targets
from app.checker.engine.options import CheckOptions
from app.checker.engine.witness import ADVICE_SPREAD_REPLICAS, NO_STATISTICS, ONE_REPLICA_SERVED, STATISTICS
from app.lab.observation import LogCode, LogWindow, server_log
from app.lab.problems import LabError
from app.lab.server import LabServer, UnreachableError

if TYPE_CHECKING:
    from app.checker.engine.run import CheckResult
    from app.lab.progress import Progress
    from app.lab.traffic import run_queue

ROUTING_DIAGNOSES = ("balancer_splits_sequences", "balancer_breaks", "model_breaks", "held", "not_exercised", "direct_only_broke")
SPLIT_REASONS = ("sequence_split",)  # refusals.REFUSAL_DIAGNOSES' code for a request its replica had no sequence for


@dataclass
class ReplicaSpread:
    url: str
    before: int | None  # successful inferences the replica's statistics counted before the run (None: it did not say)
    after: int | None
    sequences: int | None = None  # correlation IDs its log named during the run (None: its log was not read)

    @property
    def served(self) -> int | None:
        return None if self.before is None or self.after is None else self.after - self.before

    def to_json(self) -> dict[str, object]:
        return {"url": self.url, "served_before": self.before, "served_after": self.after, "served": self.served,
                "sequences": self.sequences}


@dataclass
class Routing:
    balancer: str
    transport: str
    session_header: str | None
    replicas: list[ReplicaSpread]
    direct: CheckResult  # the same check directly on replicas[0]
    diagnosis: str  # one of ROUTING_DIAGNOSES
    split_checks: list[str] = field(default_factory=list)  # the verdicts broken on split sequences through the balancer
    # routed(): which replicas served. Any, as words' witness_line reads it (app/checker/words).
    witness: dict[str, Any] = field(default_factory=dict)

    @property
    def not_exercised(self) -> bool:
        return self.diagnosis == "not_exercised"

    def to_json(self) -> dict[str, object]:
        d = self.direct
        return {
            "balancer": self.balancer, "transport": self.transport, "session_header": self.session_header,
            "replicas": [r.to_json() for r in self.replicas], "diagnosis": self.diagnosis, "split_checks": list(self.split_checks),
            "witness": self.witness,
            "direct": {"replica": d.url, "transport": d.options.transport, "exit_code": d.exit_code, "failed_by": d.failed_by, "requests": d.requests,
                       "checks": [{"check": v.check, "variant": v.variant, "verdict": v.verdict, "reason": v.reason} for v in d.verdicts]},
        }


def open_replicas(urls: list[str], model: str, logs: list[Path] | None = None) -> list[LabServer]:
    """Each replica, reachable and serving `model`; LabError naming the first that is not. logs[i]:
    replica i's log file, where it is on this machine (--replica-log)."""
    logs = logs or []
    if len(logs) > len(urls):
        raise LabError("check_replica_log_unmatched", logs=len(logs), replicas=len(urls))
    servers = []
    for i, url in enumerate(urls):
        server = LabServer(url=url)
        server.external_log = Path(logs[i]) if i < len(logs) else None  # handed to the lab: its verbosity is ours to raise
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


def diagnose(through: CheckResult, direct: CheckResult, witness: dict[str, Any]) -> tuple[str, list[str]]:
    """The routing diagnosis from the two outcomes and the witness, and the verdicts broken on split
    sequences. The one rule the witness adds: held both ways without two replicas serving is
    not_exercised, never held."""
    split = [v.id for v in through.verdicts if v.verdict == "broken" and (v.reason in SPLIT_REASONS
                                                                           or v.values.get("refusal_diagnosis") in SPLIT_REASONS)]
    broke, direct_broke = "checks" in through.failed_by, "checks" in direct.failed_by
    if broke and direct_broke:
        return "model_breaks", split
    if broke:
        return ("balancer_splits_sequences" if split else "balancer_breaks"), split
    if direct_broke:
        return "direct_only_broke", split
    return ("held" if witness.get("exercised") else "not_exercised"), split


def check_through_balancer(target: targets.Target, replicas: list[str], options: CheckOptions, progress: Progress | None = None,
                           on_wait: run_queue.OnWait | None = None, logs: list[Path] | None = None) -> CheckResult:
    """The check through the balancer (target), the replicas' statistics (and, where `logs` names
    their files, their logs) around it, and the same check directly on replicas[0]; the first run's
    result with `routing` set. LabError where a replica cannot be used (before any request is sent)."""
    from app.checker.engine.run import run_check  # the engine calls no routing: imported here, not at the top

    if not replicas:
        raise LabError("check_replica_without_balancer")
    servers = open_replicas(replicas, target.model, logs)
    before = [served(s, target.model) for s in servers]
    with ExitStack() as verbose:
        # The lines that name a sequence's ID are VERBOSE(1); a replica whose verbosity was not raised says nothing of them.
        raised = [verbose.enter_context(server_log.raised_verbosity(s, 1)) for s in servers]
        windows = [LogWindow.start(s) if up else None for s, up in zip(servers, raised, strict=True)]
        through = run_check(target, options, progress, on_wait)
    named = [named_ids(w, target.model) if w is not None else None for w in windows]
    spread = [ReplicaSpread(url, b, served(s, target.model), None if ids is None else len(ids))
              for url, s, b, ids in zip(replicas, servers, before, named, strict=True)]
    witness = routed([r.served for r in spread], named)
    # Directly on one replica over HTTP (its gRPC address is not known here): the model, no balancer.
    direct = run_check(targets.Target(servers[0], target.model), replace(options, one_instance=False, transport="http"), progress, on_wait)
    code, split = diagnose(through, direct, witness)
    through.routing = Routing(target.server.url, options.transport, options.session_header, spread, direct, code, split, witness)
    return through


# The witness: which replicas served, and which each sequence reached.
LOG = "log"
# The lines that name a correlation ID on the replica that saw it; the rest of a verbosity-1 log is skipped unparsed.
_MARKERS = (b"CORRID", b"START flag")
_NAMING = (LogCode.SEQUENCE_ENQUEUED, LogCode.BACKLOG_ENQUEUED, LogCode.SEQUENCE_END, LogCode.START_FLAG_MISSING)


def named_ids(window: LogWindow, model: str) -> set[str] | None:
    """The correlation IDs of `model` a replica's log named since the window opened; None where
    the log cannot be read."""
    if not window.available or window.path is None:
        return None
    try:
        with open(window.path, "rb") as handle:
            handle.seek(window.offset)
            lines = [raw.decode(errors="replace") for raw in handle if raw.endswith(b"\n") and any(m in raw for m in _MARKERS)]
    except OSError:
        return None
    return _ids(server_log.parse(lines), model)


def _ids(entries: Iterable[server_log.LogEntry], model: str) -> set[str]:
    return {e.corrid for e in entries if e.code in _NAMING and e.corrid is not None and e.model == model}


def routed(served: list[int | None], named: list[set[str] | None]) -> dict[str, Any]:  # Any: as Routing.witness
    """The witness from each replica's served count (its statistics; None: not said) and the IDs its
    log named (None: not read). The logs are the source only where every replica's was read and
    each replica its statistics say served appears in its own log (a log that names nothing of a
    replica that served is not that replica's, or not at verbosity 1)."""
    serving = sum(1 for n in served if n)
    logs = all(ids is not None for ids in named) and all(
        ids or not n for n, ids in zip(served, named, strict=True))
    placed = split = None
    if logs:
        counts: dict[str, int] = {}
        for ids in named:
            for corrid in ids or ():
                counts[corrid] = counts.get(corrid, 0) + 1
        placed, split = len(counts), sum(1 for n in counts.values() if n > 1)
    exercised = serving >= 2
    why = None if exercised else NO_STATISTICS if any(n is None for n in served) else ONE_REPLICA_SERVED
    return {"source": LOG if logs else STATISTICS, "exercised": exercised, "why": why,
            "advice": None if exercised or why == NO_STATISTICS else ADVICE_SPREAD_REPLICAS,
            "replicas_serving": serving, "sequences_placed": placed, "sequences_split": split}
