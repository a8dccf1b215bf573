"""The check report's JSON Schema, shipped in the package: a valid Draft 2020-12 schema for the
report's own schema number, named in the package data, and strict where a report could lie (a
held check with refusals). Every report the suite writes is validated against it besides
(tests/conftest.py, tests/checker/conftest.read_report)."""
from __future__ import annotations

import copy
import sys
from pathlib import Path

import jsonschema
import pytest

from app.checker.engine import report_schema
from app.checker.engine.reports import report
from tests.checker.conftest import as_json
from tests.checker.tables import Rows, facts, tables

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_the_schema_is_draft_2020_12_for_the_reports_own_schema_number():
    schema = report_schema.schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["schema"] == {"const": report.SCHEMA} and schema["$id"].endswith(f"/{report.SCHEMA}")


def test_the_schema_file_is_package_data():
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["app.checker.engine.reports"]
    assert any(Path(report_schema.FILE).match(p) for p in patterns)


def _report() -> dict:
    from app.checker.engine import CheckOptions, CheckResult
    from app.checker.engine.sequences.judge import judge

    rows = Rows().reference()
    rows.add("interleaved", "interleaved", 10, 0, 0, 0.0, variant="all_instances", t=1.0)
    rows.add("interleaved", "interleaved", 10, 0, 1, error="inference request for sequence 7 to model 'm' must specify the START flag "
                                                            "on the first request of the sequence", variant="all_instances", t=1.1)
    made = tables(rows, facts())
    return as_json(CheckResult(made.facts, CheckOptions(), made, judge(made), "external", "h:8000", 0.5))


def test_a_report_validates_and_a_held_check_with_refusals_does_not():
    data = _report()
    report_schema.validate(data)
    lying = copy.deepcopy(data)
    interleaved = next(c for c in lying["checks"] if c["check"] == "interleaved")
    assert interleaved["verdict"] == "broken"
    interleaved.update(verdict="held", reason="")
    with pytest.raises(jsonschema.ValidationError):
        report_schema.validate(lying)
    passed = copy.deepcopy(data)
    passed.update(exit_code=0)  # outcome "broken" with exit 0 contradicts itself
    with pytest.raises(jsonschema.ValidationError):
        report_schema.validate(passed)
