"""One check, start to finish: read the model from the server, plan its inputs, measure, judge.

The CLI (`batching-lab check`) and the "Check a deployment" page both call `run_check`; they
differ only in how they show the result. Everything here is codes and values.

For a page:
    from app.checker.engine import run, target
    from app.checker.engine.reports import export, report
    t = target.on_server(lab_server, model)            # the app's server; the model must be loaded
    result = engine.run_check(t, CheckOptions(...), progress=lambda done, planned, stage: ...,
                              on_wait=lambda wait: ...)  # run_queue.Wait while another run holds the model
    result.verdicts                  # verdicts.CheckVerdict per check: check, variant, verdict, reason, values
                                     # (which checks there are, and what each judges: checks.CHECKS)
    result.judgement.diagnoses       # [{code, checks}]: what the broken checks say about the model
    result.judgement.notes           # [{code, values}]: what to know beside the verdicts (streams_wrap)
    result.judgement.verdict(check, variant).values["diagnosis"]  # a broken sequence check's sessions,
                                     # each lost, stale, foreign (with its source) or other, from
                                     # replayed hypotheses (app/checker/engine/sequences/diagnosis.py, replay.py)
    export.input_data(result)        # the failing sessions as perf_analyzer --input-data JSON, or None
                                     # (stream_export.failing_input_data: a decoupled model's broken requests too)
    result.streams                   # a decoupled model's response streams, alone and staggered (streams.StreamTables;
                                     # its checks and diagnosis: streaming/stream_check.py, stream_judge.py, stream_diagnosis.py)
    result.judgement.refusals        # refused requests: Triton's message and its cause
    result.judgement.tolerances      # per compared output: value, source, measured noise
    result.review                    # the config review's findings (ReviewFinding.to_json())
    result.triton_version            # the server's version the review used (None: it reported none)
    result.failed_by, result.exit_code  # ["checks"] a verdict broke (a refused request breaks its check),
                                     # ["review"] an error-level finding (unless options.allow_review_errors)
    result.routing                   # through a balancer (routing.check_through_balancer): spread, direct run, diagnosis
    result.inputs                    # inputs.InputsUsed: each input's shapes, and the sizes drawn where no --shape gave them
    report.to_json(result)           # the JSON the CLI writes; junit.to_xml(result, describe) the XML
    report.timeline(result)          # executions over time: lane (instance) x exec_start..exec_end,
                                     # session for colour, diverged marks the steps beyond tolerance
    report.errors(result)            # each broken session's difference from its reference per step
progress (app/lab/progress.Progress) is called from the calling thread, at most five times a
second, with the request count so far, the planned count (an estimate), and the stage: the phase
code with the variant in its values (measure.stage; words: app/checker/words.PHASES, VARIANTS).
A LabError says why a check could not run (words: app/text/problems).
The one-instance copy is one model process outside app/lab/deployment/loaded_models.py's budget while
the check runs, and is unloaded before run_check returns.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.checker.engine import endpoints, input_data, inputs, review, review_link
from app.checker.engine import target as targets
from app.checker.engine.facts import ModelFacts
from app.checker.engine.inputs import InputSource
from app.checker.engine.options import DEFAULT_STEPS, MAX_SESSIONS, MIN_SESSIONS, CheckOptions
from app.checker.engine.review import ReviewFinding
from app.checker.engine.sequences import measure, replay
from app.checker.engine.sequences.judge import judge
from app.checker.engine.streaming import stream_check, streams
from app.checker.engine.verdicts import CheckJudgement, CheckVerdict
from app.lab.problems import LabError, Problem
from app.lab.progress import Progress
from app.lab.traffic import run_queue


@dataclass
class CheckResult:
    facts: ModelFacts
    options: CheckOptions
    tables: measure.Tables
    judgement: CheckJudgement
    where: str  # "embedded" or "external"
    url: str
    wall_s: float
    review: list[ReviewFinding] = field(default_factory=list)  # the config review's findings
    triton_version: str | None = None  # the server's version, which the review used (None: none it could read)
    inputs: inputs.InputsUsed = field(default_factory=inputs.InputsUsed)  # the shapes sent and how they were sized
    source: InputSource | None = None  # the sessions' inputs (inputs.Generated or inputs.FromData): what export.py writes
    streams: streams.StreamTables | None = None  # a decoupled model's response streams (stream_check.py); None otherwise
    # routing.Routing where the check ran through a balancer with --replica, else None; Any, as routing.py depends on this module.
    routing: Any = None

    @property
    def review_errors(self) -> list[ReviewFinding]:
        """The config review's error-level findings (review.Severity.ERROR)."""
        return [f for f in self.review if f.severity == review.Severity.ERROR]

    @property
    def failed_by(self) -> list[str]:
        """What fails the check: "checks" (a verdict broke), "review" (an error-level finding, unless
        options.allow_review_errors), "not_exercised" (a check's situation never happened, where
        options.not_exercised_exit is 1). Empty: it passed, or ended as not_exercised with exit 0 or 3."""
        out = ["checks"] if self.judgement.exit_code else []
        if self.review_errors and not self.options.allow_review_errors:
            out.append("review")
        if self.not_exercised and self.options.not_exercised_exit == 1:
            out.append("not_exercised")
        return out

    @property
    def not_exercised(self) -> list[str]:
        """The checks (check/variant) that held without their situation ever happening (witness.py),
        and "routing" where the routing held without two replicas serving (routing.diagnose)."""
        routing = ["routing"] if self.routing is not None and self.routing.not_exercised else []
        return [v.id for v in self.judgement.not_exercised] + routing

    @property
    def outcome(self) -> str:
        """"broken" (a check broke or the review failed it), "not_exercised" (nothing broke, but a
        check's situation never happened) or "held" (every check held with its witness)."""
        if self.judgement.exit_code or "review" in self.failed_by:
            return "broken"
        return "not_exercised" if self.not_exercised else "held"

    @property
    def exit_code(self) -> int:
        """0 passed, 1 failed (failed_by says by what), options.not_exercised_exit (3 by default) when
        nothing broke but a check was not exercised; 2, could not check, is a LabError raised before."""
        if self.failed_by:
            return 1
        return self.options.not_exercised_exit if self.not_exercised else 0

    @property
    def verdicts(self) -> list[CheckVerdict]:
        return self.judgement.verdicts

    @property
    def requests(self) -> int:
        return len(self.tables.steps)


def default_sessions(facts: ModelFacts) -> int:
    """Enough sessions to fill every slot of every instance and overflow into the backlog."""
    if not facts.sequence:
        return MIN_SESSIONS
    return min(MAX_SESSIONS, max(MIN_SESSIONS, facts.capacity + max(2, math.ceil(facts.capacity / 2))))


def input_source(facts: ModelFacts, options: CheckOptions) -> InputSource:
    """The sessions' inputs and lengths: from the data file (with its golden outputs, if it has
    validation_data), else generated from the metadata."""
    if options.input_data is not None:
        document = options.input_data if isinstance(options.input_data, dict) else input_data.load(Path(options.input_data))
        label = "input data" if isinstance(options.input_data, dict) else str(options.input_data)
        dims = inputs.concrete_shapes(facts, options.shapes)
        sequences = input_data.sequences(document, facts, dims, source=label)
        golden = input_data.golden(document, facts, source=label)
        count = options.sessions or len(sequences)
        lengths = [options.steps or len(sequences[i % len(sequences)]) for i in range(count)]
        return inputs.FromData(facts, sequences, lengths, golden, dict(options.shapes))
    dims = inputs.concrete_shapes(facts, options.shapes)
    count = options.sessions or default_sessions(facts)
    lengths = inputs.session_lengths(count, options.steps or DEFAULT_STEPS, options.seed, mixed=facts.sequence)
    return inputs.Generated(facts, dims, lengths, options.seed, inputs.drawn_sizes(facts, dims, options.seed))


def preflight(target: targets.Target, options: CheckOptions) -> tuple[ModelFacts, InputSource]:
    """Everything that can be refused before a request is sent: the options, the model (known,
    ready), the outputs to ignore, the inputs (a decoupled model's: one request per session). LabError otherwise."""
    options.check()
    facts = targets.facts(target)
    names = {o.name for o in facts.outputs}
    unknown = [n for n in options.ignore_outputs if n not in names]
    if unknown:
        raise LabError([Problem("check_ignore_unknown_output", {"name": n, "outputs": ", ".join(sorted(names))}) for n in unknown])
    if names and not (names - set(options.ignore_outputs)):
        raise LabError("check_nothing_to_compare", model=facts.name)
    if facts.decoupled and stream_option_problems(facts, options):
        raise LabError(stream_option_problems(facts, options))
    return facts, streams.input_source(facts, options) if facts.decoupled else input_source(facts, options)


def stream_option_problems(facts: ModelFacts, options: CheckOptions) -> list[Problem]:
    """A decoupled model's check sends each request once, alone and staggered (streams.py), and the
    model decides how many responses it streams: a number of steps has nothing to set, and a think
    time only means something to the config review of a sequence whose clients send several
    requests (not an iterative one, which is one request). The problems name what was given."""
    problems = []
    if options.steps is not None:
        problems.append(Problem("check_stream_steps", {"model": facts.name, "steps": options.steps}))
    if options.think_ms is not None and not (facts.sequence and not facts.iterative):
        problems.append(Problem("check_stream_think", {"model": facts.name, "think_ms": options.think_ms}))
    return problems


def run_check(target: targets.Target, options: CheckOptions | None = None, progress: Progress | None = None,
              on_wait: run_queue.OnWait | None = None) -> CheckResult:
    """Check target.model on target.server. progress(done, planned, stage) is called
    from this thread while requests go out; on_wait hears this check's place while another run
    holds the model (the run queue's lease, held for the whole check so a class is not disturbed).
    LabError for anything that stops the check (exit code 2): an unknown or failing model, bad
    inputs, a server that went away. Nothing the checker loaded stays loaded."""
    options = options or CheckOptions()
    started = time.perf_counter()
    facts, source = preflight(target, options)
    if facts.decoupled or options.transport != "http":  # streams and the grpc transports go to --grpc-url
        endpoints.probe_grpc(target.grpc_url)
    version = review_link.live_version(targets.server_version(target))
    findings = review_link.findings(facts, options, version)
    with run_queue.for_server(target.server.url).lease(target.model, on_wait):
        if facts.decoupled:  # response streams, alone and staggered (stream_check.py)
            tables, judgement, measured = stream_check.run(target, facts, source, options, progress)
            return CheckResult(facts, options, tables, judgement, target.where, target.server.url, time.perf_counter() - started,
                               findings, version, source.used(), source, measured)
        tables = measure.measure(target, facts, source, source.lengths, options, progress,
                                 copy=lambda: targets.one_instance_copy(target, facts))
        # still under the lease: the broken sessions' hypotheses replay on the model undisturbed
        judgement = replay.diagnose(target, facts, source, tables, judge(tables), progress)
    return CheckResult(facts, options, tables, judgement, target.where, target.server.url,
                       time.perf_counter() - started, findings, version, source.used(), source)
