"""The JSON Schema (Draft 2020-12) of the check's report, shipped beside the code that writes it.

`schemas/check-report-<SCHEMA>.schema.json` describes what report.to_json writes for a check on a
server (kind "check", report.SCHEMA). Fields may be added within a schema number; a field that
changes its meaning or type, or goes, raises it, with a new file beside the old. validate() needs
the `jsonschema` package (the test extra, or `pip install jsonschema`): the checker itself never
validates what it writes. An older report validates against the schema of its own number, whose file
stays shipped (check-report-1: before the not_exercised verdict and the witnesses).
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources

from app.checker.engine.reports.report import SCHEMA
from app.lab.json_value import JSONObject

FILE = f"schemas/check-report-{SCHEMA}.schema.json"


@cache
def schema(number: int = SCHEMA) -> JSONObject:
    """The report's JSON Schema (of schema `number`, default the one report.py writes), read from the installed package."""
    path = f"schemas/check-report-{number}.schema.json"
    loaded: JSONObject = json.loads(resources.files("app.checker.engine.reports").joinpath(path).read_text(encoding="utf-8"))
    return loaded


def validate(report: Mapping[str, object]) -> None:
    """Raise jsonschema.ValidationError where `report` breaks the schema of its own number."""
    import jsonschema  # optional: only who validates needs it

    number = 1 if report.get("schema") == 1 else SCHEMA
    jsonschema.Draft202012Validator(schema(number), format_checker=jsonschema.FormatChecker()).validate(report)
