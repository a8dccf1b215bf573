"""The deployment checker: a model's config reviewed and its replies verified under the batcher.

Callers outside this package import from here, by name (tests may reach the modules they test).
Where a module's own name for a function is only clear beside its module (report.to_json,
target.on_server), it is exported under a name that says what it is.
"""
from app.lab.checker.api import CheckError, Refusal, Replica, Report, RoutingReport, Verdict, check, options, report_of, review_config
from app.lab.checker.checks import codes as check_codes
from app.lab.checker.compare import default_ignored as default_ignored_outputs
from app.lab.checker.engine import CheckResult, run_check
from app.lab.checker.facts import ModelFacts, TensorSpec
from app.lab.checker.inputs import DEFAULT_SIZES, dims_text, parse_shape
from app.lab.checker.judge import CheckJudgement, CheckVerdict
from app.lab.checker.junit import to_xml as junit_xml
from app.lab.checker.options import DEFAULT_STEPS, DEFAULT_THINK_MS, MAX_SESSIONS, MAX_STEPS, MAX_THINK_MS, CheckOptions
from app.lab.checker.report import dumps as check_report_text
from app.lab.checker.report import errors as check_errors
from app.lab.checker.report import review_exit_code
from app.lab.checker.report import review_to_json as review_report_json
from app.lab.checker.report import stream_timeline as check_stream_timeline
from app.lab.checker.report import timeline as check_timeline
from app.lab.checker.report import to_json as check_report_json
from app.lab.checker.review import LAB_TRITON_VERSION, ReviewCode, ReviewFinding, Severity
from app.lab.checker.review import LESSONS as REVIEW_LESSONS
from app.lab.checker.review_link import offline as review_offline
from app.lab.checker.routing import ROUTING_DIAGNOSES, Routing, check_through_balancer
from app.lab.checker.stream_export import failing_input_data
from app.lab.checker.target import COPY_SUFFIX, Target, open_target
from app.lab.checker.target import facts as target_facts
from app.lab.checker.target import on_server as target_on_server

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
    "review_exit_code",
    "review_offline",
    "review_report_json",
    "run_check",
    "target_facts",
    "target_on_server",
]
