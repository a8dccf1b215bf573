"""The checker's Python API (app.checker): docs/checker.md's worked example, run as written on the
session's embedded server; "could not check" is one exception, CheckError, with the problem's code."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from app import checker
from app.checker import CheckError, Report, Verdict, check

DOC = Path(__file__).parents[2] / "docs" / "checker.md"
MARKER = "<!-- checker api example -->"


def example() -> str:
    text = DOC.read_text()
    found = re.search(re.escape(MARKER) + r"\n```python\n(.*?)\n```", text, re.S)
    assert found, f"docs/checker.md has no python block after {MARKER}"
    return found.group(1)


def test_the_worked_example_in_the_docs_runs_against_the_embedded_server(server_env, capsys):
    names: dict = {}
    exec(compile(example(), str(DOC), "exec"), names)  # the example as a reader copies it
    report = names["report"]
    assert isinstance(report, Report) and all(isinstance(v, Verdict) for v in report.checks)
    assert (report.outcome, report.exit_code, report.failed_by) == ("held", 0, ())
    assert names["document"]["kind"] == "check" and names["document"]["exit_code"] == 0
    assert "<testsuites>" in names["xml"]
    assert capsys.readouterr().out.splitlines()[0] == "held 0 ()"


@pytest.mark.parametrize(("kwargs", "code"), [
    ({"url": "not an address"}, "address_bad"),
    ({"steps": 0}, "check_steps_range"),
    ({"replicas": ["127.0.0.1:1"], "url": None}, "check_replica_without_balancer"),
])
def test_what_cannot_be_checked_is_one_exception_with_the_problems_code(kwargs, code, monkeypatch):
    monkeypatch.delenv("TRITON_URL", raising=False)
    with pytest.raises(CheckError) as err:
        check("any_model", **kwargs)
    assert err.value.code == code and err.value.problems


def test_an_unknown_model_on_a_live_server_is_a_check_error(server_env):
    with pytest.raises(CheckError) as err:
        check("no_such_model", steps=2)
    assert err.value.code == "check_model_unknown" and err.value.values["model"] == "no_such_model"


def test_the_public_names_are_the_documented_ones():
    assert set(checker.__all__) >= {"check", "review_config", "CheckError", "Report", "Verdict", "Refusal", "RoutingReport"}
    assert "CheckError" in DOC.read_text() and "review_config" in DOC.read_text()
