"""The deployment checker: a model's config reviewed and its replies verified under the batcher.

Callers outside this package import from here, by name (tests may reach the modules they test).
Where a module's own name for a function is only clear beside its module (report.to_json,
target.on_server), it is exported under a name that says what it is; `report_schema` is exported as a
namespace (`report_schema.validate`, docs/checker.md).

The engine by concern: the config review (review/), the sequence and stateless checks (sequences/),
the streaming checks (streaming/) and the written reports (reports/); at the top what they share (the
checks declared, the model's facts, its inputs, the target, the options, compare, witness, verdicts)
and the check run start to finish (run.py, api.py, routing.py).
"""
from app.checker.engine.api import CheckError, Refusal, Replica, Report, RoutingReport, Verdict, check, options, report_of, review_config
from app.checker.engine.checks import codes as check_codes
from app.checker.engine.compare import default_ignored as default_ignored_outputs
from app.checker.engine.facts import ModelFacts, TensorSpec
from app.checker.engine.inputs import DEFAULT_SIZES, InputsUsed, dims_text, parse_shape
from app.checker.engine.options import DEFAULT_STEPS, DEFAULT_THINK_MS, MAX_SESSIONS, MAX_STEPS, MAX_THINK_MS, CheckOptions
from app.checker.engine.reports import report_schema
from app.checker.engine.reports.junit import to_xml as junit_xml
from app.checker.engine.reports.report import dumps as check_report_text
from app.checker.engine.reports.report import errors as check_errors
from app.checker.engine.reports.report import review_exit_code
from app.checker.engine.reports.report import review_to_json as review_report_json
from app.checker.engine.reports.report import stream_timeline as check_stream_timeline
from app.checker.engine.reports.report import timeline as check_timeline
from app.checker.engine.reports.report import to_json as check_report_json
from app.checker.engine.reports.stream_export import failing_input_data
from app.checker.engine.review import LAB_TRITON_VERSION, ReviewCode, ReviewFinding, Severity
from app.checker.engine.review import LESSONS as REVIEW_LESSONS
from app.checker.engine.review_link import offline as review_offline
from app.checker.engine.routing import ROUTING_DIAGNOSES, Routing, check_through_balancer
from app.checker.engine.run import CheckResult, run_check
from app.checker.engine.target import COPY_SUFFIX, Target, open_target
from app.checker.engine.target import facts as target_facts
from app.checker.engine.target import on_server as target_on_server
from app.checker.engine.verdicts import CheckJudgement, CheckVerdict

__all__ = [
    "CheckError",
    "Refusal",
    "Replica",
    "Report",
    "RoutingReport",
    "Severity",
    "Verdict",
    "check",
    "options",
    "report_of",
    "review_config",
    "COPY_SUFFIX",
    "DEFAULT_SIZES",
    "DEFAULT_STEPS",
    "DEFAULT_THINK_MS",
    "LAB_TRITON_VERSION",
    "MAX_SESSIONS",
    "MAX_STEPS",
    "MAX_THINK_MS",
    "REVIEW_LESSONS",
    "ROUTING_DIAGNOSES",
    "CheckJudgement",
    "CheckOptions",
    "CheckResult",
    "CheckVerdict",
    "InputsUsed",
    "ModelFacts",
    "ReviewCode",
    "ReviewFinding",
    "Routing",
    "Target",
    "TensorSpec",
    "check_codes",
    "check_errors",
    "check_report_json",
    "check_report_text",
    "check_stream_timeline",
    "check_through_balancer",
    "check_timeline",
    "default_ignored_outputs",
    "dims_text",
    "failing_input_data",
    "junit_xml",
    "open_target",
    "parse_shape",
    "report_schema",
    "review_exit_code",
    "review_offline",
    "review_report_json",
    "run_check",
    "target_facts",
    "target_on_server",
]
