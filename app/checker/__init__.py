"""The deployment checker (`batching-lab check`): a model's config reviewed and its replies verified
under the batcher, on any Triton server.

Its public Python API is here: `check` a model on a server (or through a load balancer),
`review_config` offline; typed results; CheckError when it could not check. docs/checker.md has a
worked example. The package holds the engine (engine/, free of Streamlit and of words: codes and
values), its words (words/), its figures (figures.py) and the "Check a deployment" page's parts
(page/); the page itself is app/views/check.py. This module imports the engine's API only, so the
checker installed alone (packaging/checker: no Streamlit, no plotly) imports it.
"""
from app.checker.engine import CheckError, Refusal, Replica, Report, ReviewFinding, RoutingReport, Severity, Verdict, check, options, report_of, review_config

__all__ = ["CheckError", "Refusal", "Replica", "Report", "ReviewFinding", "RoutingReport", "Severity", "Verdict", "check", "options",
           "report_of", "review_config"]
