"""What the user may set for a check (the CLI's options and the page's controls), validated as codes."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from app.checker.engine import checks, review
from app.lab.problems import LabError, Problem

MAX_SESSIONS = 256
MAX_STEPS = 200
MAX_THINK_MS = 5000.0
DEFAULT_STEPS = 24
DEFAULT_THINK_MS = 5.0
MIN_SESSIONS = 16  # the default count when the model's capacity does not ask for more
MAX_SEED = 2**32 - 1  # numpy's SeedSequence takes an unsigned 32-bit seed here
TRANSPORTS = ("http", "grpc", "grpc_stream")  # app/lab/scenario/transport.Transport's values
# The exit status when nothing broke but a check's situation never happened (its verdict
# not_exercised, app/checker/engine/witness.py): 3 by default, told apart from held (0), broken (1)
# and could not check (2); a team may choose 0 (accept it) or 1 (fail on it) with --not-exercised-exit.
NOT_EXERCISED_EXIT = 3
NOT_EXERCISED_EXITS = (0, 1, 3)
METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")  # a Prometheus metric name
HEADER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")  # a header nginx reads as $http_<name, lower case, - as _>

# Check codes (declared in app/checker/engine/checks.py; words: app/checker/words/labels.py). Sequence
# batcher: each runs on all instances and on one; the reference runs once. Dynamic or no
# batcher: the stateless checks.
SEQUENCE_CHECKS = checks.codes(checks.SEQUENCE)
STATELESS_CHECKS = checks.codes(checks.STATELESS)
VARIANTS = tuple(v for v in checks.variants() if v != checks.ALONE)  # the traffic runs'


@dataclass(frozen=True)
class CheckOptions:
    sessions: int | None = None  # None: enough to fill every slot and overflow into the backlog
    steps: int | None = None  # None: DEFAULT_STEPS (a data file: its streams' lengths)
    think_ms: float | None = None  # mean gap between a reply and a session's next request; None: DEFAULT_THINK_MS, unstated
    seed: int = 0
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)  # --shape NAME:d1,d2
    input_data: Path | dict[str, Any] | None = None  # perf_analyzer --input-data JSON: a path or the parsed document (input_data.load)
    ignore_outputs: tuple[str, ...] = ()
    tolerance: float | None = None  # float outputs: |got - ref| <= tolerance x max(1, |ref|)
    one_instance: bool = True  # also run on a temporary one-instance copy where the checker can load one
    only: tuple[str, ...] = ()  # run only these checks (empty: all); the reference always runs
    # What the user says about their clients and server, for the config review only (see
    # review.Expectations): the largest integer ID and longest string ID their clients send, the
    # backend when the config names none, and the GPUs an instance group may use. The Triton
    # version ("2.51.0") is for the offline review: a live check reviews for the server's own.
    max_corrid: int | None = None
    string_id_bytes: int | None = None
    backend: str | None = None
    gpus: int | None = None
    triton_version: str | None = None
    # An error-level finding of the config review fails the check (exit 1) as a broken check does;
    # True lets the verdicts alone decide (--allow-review-errors). The findings are reported either way.
    allow_review_errors: bool = False
    # How the requests travel, as a team's clients send them: "http", "grpc" or "grpc_stream" (one
    # gRPC stream per sequence); and the header that carries each session's ID (None: none), which
    # a balancer may hash on to keep a sequence on one replica.
    transport: str = "http"
    session_header: str | None = None
    not_exercised_exit: int = NOT_EXERCISED_EXIT  # the exit status when nothing broke but a check was not exercised
    # Client faults (app/checker/engine/streaming/faults.py, slow_client.py), on by default: a decoupled model's request
    # cancelled mid-stream, or its client gone; a sequence model's client quiet past the idle timeout; and the
    # model's own gauge of the state it holds (a Prometheus metric on Triton's metrics endpoint, labelled by
    # model), which must fall back to its reading before the fault.
    faults: bool = True
    state_metric: str | None = None

    @property
    def think_ms_used(self) -> float:
        """The think time the traffic runs use and the review compares: the stated one, else the default."""
        return DEFAULT_THINK_MS if self.think_ms is None else self.think_ms

    def _clients(self) -> review.Expectations:
        """The figures about the user's clients and server alone (think time and sessions are
        this check's own options, validated with their upper bounds below)."""
        return review.Expectations(max_corrid=self.max_corrid, string_corrid_length=self.string_id_bytes,
                                   backend=self.backend or None, gpus=self.gpus, triton_version=self.triton_version)

    def expectations(self) -> review.Expectations:
        """What the user stated, in the review's terms; figures not given stay None."""
        return replace(self._clients(), think_ms=self.think_ms_used, sessions=self.sessions)

    def problems(self) -> list[Problem]:
        out = []
        if self.sessions is not None and not 1 <= self.sessions <= MAX_SESSIONS:
            out.append(Problem("check_sessions_range", {"low": 1, "high": MAX_SESSIONS, "value": self.sessions}))
        if self.steps is not None and not 1 <= self.steps <= MAX_STEPS:
            out.append(Problem("check_steps_range", {"low": 1, "high": MAX_STEPS, "value": self.steps}))
        if self.think_ms is not None and not 0 <= self.think_ms <= MAX_THINK_MS:
            out.append(Problem("think_ms_range", {"low": 0, "high": int(MAX_THINK_MS), "value": self.think_ms}))
        if not 0 <= self.seed <= MAX_SEED:
            out.append(Problem("check_seed_range", {"low": 0, "high": MAX_SEED, "value": self.seed}))
        out += self._clients().problems()
        if self.tolerance is not None and not self.tolerance >= 0:
            out.append(Problem("check_tolerance_range", {"value": self.tolerance}))
        if self.transport not in TRANSPORTS:
            out.append(Problem("check_transport_unknown", {"value": self.transport, "choices": ", ".join(TRANSPORTS)}))
        if self.not_exercised_exit not in NOT_EXERCISED_EXITS:
            out.append(Problem("check_not_exercised_exit", {"value": self.not_exercised_exit,
                                                            "choices": ", ".join(map(str, NOT_EXERCISED_EXITS))}))
        if self.state_metric is not None and not METRIC_NAME.fullmatch(self.state_metric):
            out.append(Problem("check_state_metric_bad", {"value": self.state_metric}))
        if self.session_header is not None and not HEADER_NAME.fullmatch(self.session_header):
            out.append(Problem("check_session_header_bad", {"value": self.session_header}))
        unknown = [c for c in self.only if c not in checks.codes()]
        if unknown:
            out.append(Problem("check_unknown", {"value": ", ".join(unknown), "choices": ", ".join(checks.codes())}))
        return out

    def check(self) -> None:
        problems = self.problems()
        if problems:
            raise LabError(problems)

    def wants(self, check: str) -> bool:
        return not self.only or check in self.only or check in checks.always()

    def runs(self, phase: str, sequence: bool, variant: str | None = None) -> bool:
        """Whether a check asked for judges `phase` (in the verdict variant `variant`, if given):
        the measurement runs it only then."""
        return any(self.wants(c.code) and any(phase in s.phases and variant in (None, s.variant) for s in c.scopes)
                   for c in checks.for_path(sequence))

    def to_json(self) -> dict[str, object]:
        data = self.input_data
        return {
            "sessions": self.sessions, "steps": self.steps, "think_ms": self.think_ms_used, "seed": self.seed,
            "shapes": {k: list(v) for k, v in self.shapes.items()},
            "input_data": str(data) if isinstance(data, Path) else ("inline" if data is not None else None),
            "ignore_outputs": list(self.ignore_outputs), "tolerance": self.tolerance, "one_instance": self.one_instance,
            "only": list(self.only), "max_corrid": self.max_corrid, "string_id_bytes": self.string_id_bytes,
            "backend": self.backend, "gpus": self.gpus, "triton_version": self.triton_version,
            "allow_review_errors": self.allow_review_errors, "transport": self.transport, "session_header": self.session_header,
            "not_exercised_exit": self.not_exercised_exit, "faults": self.faults, "state_metric": self.state_metric,
        }
