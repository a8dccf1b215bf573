"""The deployment checker's public Python API: `check` a model on a server (or through a load
balancer), `review_config` offline; typed results; CheckError when it could not check.
The implementation is app/lab/checker/api.py; docs/checker.md has a worked example."""
from app.lab.checker import CheckError, Refusal, Replica, Report, ReviewFinding, RoutingReport, Severity, Verdict, check, options, report_of, review_config

__all__ = ["CheckError", "Refusal", "Replica", "Report", "ReviewFinding", "RoutingReport", "Severity", "Verdict", "check", "options",
           "report_of", "review_config"]
