"""The checker called from Python: what `batching-lab check` takes, as keyword arguments; the report
as typed objects; one exception, CheckError, for "could not check".

    from app.checker import CheckError, check

    try:
        report = check("my_model", url="triton:8000", think_ms=200, steps=12)
    except CheckError as err:          # exit status 2: nothing was judged
        print("could not check:", err.code, err.values)
    else:
        print(report.outcome, report.failed_by)            # "held" / "broken" / "not_exercised", ("checks", "review")
        for v in report.not_exercised:                     # held without its situation happening: v.values["witness"]
            print(v.check, v.reason, v.values["witness"])
        for v in report.broken:                            # Verdict(check, variant, verdict, reason, values)
            print(v.check, v.variant, v.reason)
        report.to_json()                                   # the JSON `--json` writes (docs/checker.md)
        report.junit_xml()                                 # the XML `--junit-xml` writes (messages: codes)

`check` runs on an external server (url, or TRITON_URL), or on the embedded server serving
model_repository (the lab's own by default) when neither is given. With replicas (the url is
then a load balancer in front of them) it runs through the balancer and directly on the first
replica, and `report.routing` says which one breaks; replica_logs (their log files, in the same
order, where this machine can read them) let its witness say which replicas each sequence reached. `review_config` is the offline config review
(`check --config`). The CLI (app/cli.py) is a shell over these two: it turns their objects into
words and exit statuses (report.exit_code: 0 passed, 1 failed, 3 nothing broke but a check was not
exercised (not_exercised_exit chooses 0, 1 or 3); CheckError: 2).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tritonclient.utils import InferenceServerException

from app.checker.engine import review_link
from app.checker.engine import target as targets
from app.checker.engine.options import DEFAULT_THINK_MS, CheckOptions
from app.checker.engine.reports import junit, report
from app.checker.engine.review import ReviewFinding
from app.checker.engine.routing import check_through_balancer
from app.checker.engine.run import CheckResult, run_check
from app.checker.engine.verdicts import CheckVerdict
from app.lab.database import DatabaseError
from app.lab.errors import BatchingLabError
from app.lab.problems import CarriesProblems, LabError, Problem
from app.lab.server import ServerError, address

# What stops a check before anything is judged: the lab's problems (bad options, an unknown model,
# an address that is none), the server's (unreachable, gone), Triton refusing a call, a file.
_COULD_NOT = (LabError, ServerError, DatabaseError, InferenceServerException, OSError, ValueError)


class CheckError(BatchingLabError):
    """The check could not be made (the CLI's exit status 2). `.code` and `.values` are the first
    problem's (app/text/problems.py words them), or None and {} where the cause is no problem of
    the lab's (a socket error, Triton's own refusal: `str(err)` quotes it); `.problems` all of
    them; `.cause` the exception that stopped it."""

    def __init__(self, cause: BaseException):
        self.cause = cause
        self.problems: list[Problem] = list(cause.problems) if isinstance(cause, CarriesProblems) else []
        super().__init__(str(cause))

    @property
    def code(self) -> str | None:
        return self.problems[0].code if self.problems else None

    @property
    def values(self) -> dict[str, Any]:
        return dict(self.problems[0].values) if self.problems else {}


@dataclass(frozen=True)
class Verdict:
    check: str  # a check code (app/checker/engine/checks.py)
    variant: str  # "alone", "all_instances" or "one_instance"
    verdict: Literal["held", "broken", "skipped", "not_exercised"]
    reason: str  # broken: the diagnosis code; skipped: why; not_exercised: what did not happen (witness.py); held: ""
    values: Mapping[str, Any]  # as in the JSON report's checks[].values: keys by check, so Any (aliases.Values)


@dataclass(frozen=True)
class Refusal:
    phase: str
    variant: str
    role: str
    session: int
    step: int
    corrid: str
    error: str  # Triton's own message
    cause: str  # refusals.refusal_cause's code


@dataclass(frozen=True)
class Replica:
    url: str
    served: int | None  # successful inferences during the run through the balancer (None: its statistics did not say)
    sequences: int | None = None  # correlation IDs its log named during that run (None: its log was not read)


@dataclass(frozen=True)
class RoutingReport:
    balancer: str
    transport: str
    session_header: str | None
    replicas: tuple[Replica, ...]
    diagnosis: str  # routing.ROUTING_DIAGNOSES
    direct_exit_code: int  # the same check directly on replicas[0]
    witness: Mapping[str, Any] = field(default_factory=dict)  # routing.routed: replicas serving, sequences split


@dataclass(frozen=True)
class Report:
    model: str
    url: str
    outcome: Literal["held", "broken", "not_exercised"]
    exit_code: int  # 0 passed, 1 failed, 3 (options' not_exercised_exit) nothing broke but a check was not exercised
    failed_by: tuple[str, ...]  # "checks", "review", "not_exercised" (with not_exercised_exit=1)
    checks: tuple[Verdict, ...]
    diagnoses: tuple[str, ...]  # what the broken checks say (words: app/checker/words.DIAGNOSES)
    refusals: tuple[Refusal, ...]
    review: tuple[ReviewFinding, ...]  # the config review's findings: code, severity (review.Severity), field, values
    routing: RoutingReport | None
    result: CheckResult = field(repr=False, compare=False)  # the engine's whole result (tables, tolerances, diagnosis)

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    @property
    def broken(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.checks if v.verdict == "broken")

    @property
    def not_exercised(self) -> tuple[Verdict, ...]:
        """Checks that held without their situation ever happening: values["witness"] says what was
        seen, and its advice what would exercise them (app/checker/engine/witness.py)."""
        return tuple(v for v in self.checks if v.verdict == "not_exercised")

    def to_json(self) -> dict[str, object]:
        """The report as `--json` writes it (its JSON Schema: app/checker/engine/reports/report_schema.py)."""
        return report.to_json(self.result)

    def junit_xml(self, describe: Callable[[CheckVerdict], str] | None = None) -> str:
        """The JUnit XML `--junit-xml` writes; describe(verdict) words each message (default: its codes)."""
        return junit.to_xml(self.result, describe)


def report_of(result: CheckResult) -> Report:
    """The typed report of an engine result."""
    routing = None
    if result.routing is not None:
        r = result.routing
        routing = RoutingReport(r.balancer, r.transport, r.session_header, tuple(Replica(x.url, x.served, x.sequences) for x in r.replicas),
                                r.diagnosis, r.direct.exit_code, dict(r.witness))
    refusals = tuple(Refusal(str(x.phase), str(x.variant), str(x.role), int(x.session), int(x.step), str(x.corrid), str(x.error),
                             str(x.cause)) for x in result.judgement.refusals.itertuples())
    checks = tuple(Verdict(v.check, v.variant, v.verdict, v.reason, dict(v.values)) for v in result.verdicts)  # type: ignore[arg-type]
    return Report(result.facts.name, result.url, result.outcome, result.exit_code, tuple(result.failed_by),  # type: ignore[arg-type]
                  checks, tuple(d["code"] for d in result.judgement.diagnoses), refusals, tuple(result.review), routing, result)


def options(*, sessions: int | None = None, steps: int | None = None, think_ms: float = DEFAULT_THINK_MS, seed: int = 0,
            shapes: Mapping[str, Sequence[int]] | None = None, input_data: Path | str | dict[str, Any] | None = None,
            ignore_outputs: Sequence[str] = (), tolerance: float | None = None, one_instance: bool = True, only: Sequence[str] = (),
            max_corrid: int | None = None, string_id_bytes: int | None = None, backend: str | None = None, gpus: int | None = None,
            triton_version: str | None = None, allow_review_errors: bool = False, transport: str = "http",
            session_header: str | None = None, not_exercised_exit: int = 3, faults: bool = True,
            state_metric: str | None = None) -> CheckOptions:
    """CheckOptions from the CLI's options by their names (validated when the check starts)."""
    data = Path(input_data) if isinstance(input_data, str) else input_data
    return CheckOptions(sessions=sessions, steps=steps, think_ms=think_ms, seed=seed,
                        shapes={k: tuple(v) for k, v in (shapes or {}).items()}, input_data=data,
                        ignore_outputs=tuple(ignore_outputs), tolerance=tolerance, one_instance=one_instance, only=tuple(only),
                        max_corrid=max_corrid, string_id_bytes=string_id_bytes, backend=backend, gpus=gpus,
                        triton_version=triton_version, allow_review_errors=allow_review_errors, transport=transport,
                        session_header=session_header, not_exercised_exit=not_exercised_exit, faults=faults,
                        state_metric=state_metric)


def check(model: str, *, url: str | None = None, model_repository: Path | str | None = None, replicas: Sequence[str] = (),
          replica_logs: Sequence[Path | str] = (), grpc_url: str | None = None, progress: Callable[..., None] | None = None,
          on_start: Callable[[], None] | None = None, **option_values: Any) -> Report:  # Any: each CheckOptions field's own type
    """Check `model` (keyword options: those of options() above, as the CLI names them). Server
    addresses take host:port or http://host:port. CheckError when it could not check."""
    try:
        chosen = options(**option_values)
        if chosen.triton_version is not None:
            raise LabError("check_triton_version_live", version=chosen.triton_version)
        chosen.check()
        url = address.host_port(url, "url") if url else None
        grpc_url = address.host_port(grpc_url, "grpc_url", kind="grpc") if grpc_url else None
        replicas = [address.host_port(r, "replicas") for r in replicas]
        if replicas and not (url or address.from_environment("TRITON_URL")):
            raise LabError("check_replica_without_balancer")
        if len(replica_logs) > len(replicas):  # before an embedded server starts
            raise LabError("check_replica_log_unmatched", logs=len(replica_logs), replicas=len(replicas))
        target = targets.open_target(model, url=url, repository=Path(model_repository) if model_repository else None,
                                     on_start=on_start, grpc_url=grpc_url)
        try:
            logs = [Path(p) for p in replica_logs]
            result = (check_through_balancer(target, list(replicas), chosen, progress, logs=logs) if replicas
                      else run_check(target, chosen, progress))
        finally:
            target.close()
    except _COULD_NOT as err:
        raise CheckError(err) from err
    return report_of(result)


def review_config(path: Path | str, **option_values: Any) -> dict[str, list[ReviewFinding]]:
    """The offline config review of a config.pbtxt, a model folder or a repository: findings per
    model (an error among them is the CLI's exit 1). CheckError when it could not review."""
    try:
        chosen = options(**option_values)
        chosen.check()
        return review_link.offline(Path(path), chosen)
    except _COULD_NOT as err:
        raise CheckError(err) from err
