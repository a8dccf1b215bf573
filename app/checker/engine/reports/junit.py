"""The check as JUnit XML, so a team's CI shows each check as a test case.

One <testcase> per verdict (name "<check>[<variant>]", in the order app/checker/engine/checks.py
declares the checks), a <failure> for a broken one and a <skipped> for a skipped one or one not
exercised (a <failure> of type not_exercised where --not-exercised-exit 1 fails it), inside one
<testsuite> named after the model; each case's property `judged_by` says what the check compares
replies with (reference, golden or finite). Where the config review found errors, one more case,
"config_review", lists them: a <failure> when they fail the check (CheckResult.failed_by), else
<skipped> (--allow-review-errors). The engine has no
words: `describe(verdict) -> str` comes from the edge (the CLI passes app/checker/words/summary.py's
sentence in the user's language); without it the message is the verdict's codes and values.
Written with the standard library's ElementTree.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import TYPE_CHECKING

from app.checker.engine import checks
from app.checker.engine.verdicts import CheckVerdict

if TYPE_CHECKING:
    from app.checker.engine.run import CheckResult


def to_xml(result: CheckResult, describe: Callable[[CheckVerdict], str] | None = None) -> str:
    describe = describe or (lambda v: json.dumps(v.to_json(), default=str))
    verdicts = result.verdicts
    fails_unexercised = "not_exercised" in result.failed_by  # --not-exercised-exit 1: a check not exercised fails
    suites = ET.Element("testsuites")
    suite = ET.SubElement(
        suites, "testsuite",
        name=f"batching-lab check {result.facts.name}",
        tests=str(len(verdicts) + bool(result.review_errors)),
        failures=str(sum(v.verdict == "broken" or (v.verdict == "not_exercised" and fails_unexercised) for v in verdicts)
                     + ("review" in result.failed_by)),
        errors="0",
        skipped=str(sum(v.verdict == "skipped" or (v.verdict == "not_exercised" and not fails_unexercised) for v in verdicts)
                    + bool(result.review_errors and "review" not in result.failed_by)),
        time=f"{result.wall_s:.3f}",
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (("server", result.url), ("where", result.where), ("scheduler", result.facts.scheduler),
                        ("instances", str(result.facts.instances)), ("requests", str(result.requests))):
        ET.SubElement(properties, "property", name=name, value=value)
    for v in verdicts:
        case = ET.SubElement(suite, "testcase", classname=f"check.{result.facts.name}", name=f"{v.check}[{v.variant}]")
        check = checks.get(v.check, checks.path_of(result.facts.sequence, result.facts.decoupled))
        ET.SubElement(ET.SubElement(case, "properties"), "property", name="judged_by", value=check.judged_by)
        if v.verdict == "broken":
            failure = ET.SubElement(case, "failure", message=describe(v), type=v.reason or "broken")
            failure.text = json.dumps(v.to_json(), indent=1, default=str)
        elif v.verdict == "not_exercised" and fails_unexercised:
            failure = ET.SubElement(case, "failure", message=describe(v), type="not_exercised")
            failure.text = json.dumps(v.to_json(), indent=1, default=str)
        elif v.verdict in ("skipped", "not_exercised"):  # JUnit has no fourth state: the message says which
            ET.SubElement(case, "skipped", message=describe(v))
    errors = result.review_errors
    if errors:
        case = ET.SubElement(suite, "testcase", classname=f"check.{result.facts.name}", name="config_review")
        message = ", ".join(f"{f.code} ({f.field})" for f in errors)
        if "review" in result.failed_by:
            failure = ET.SubElement(case, "failure", message=message, type="review_error")
            failure.text = json.dumps([f.to_json() for f in errors], indent=1, default=str)
        else:
            ET.SubElement(case, "skipped", message=message)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True)
