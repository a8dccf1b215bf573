"""The checker installed without the course (packaging/checker/pyproject.toml): the CLI checks a live
server and reviews configs with Streamlit, torch, plotly and the embedded server's package
(nvidia-pytriton) and psutil impossible to import, as in a venv that has only the checker's dependencies."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.checker.conftest import ZOO, read_report

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).parents[2]
ABSENT = ("streamlit", "torch", "plotly", "pytriton", "altair", "psutil")
RUN_WITHOUT = f"""
import runpy, sys
class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {ABSENT!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (not installed with the checker alone)")
        return None
sys.meta_path.insert(0, Absent())
sys.argv = ["batching-lab", *sys.argv[1:]]
runpy.run_module("app.cli", run_name="__main__")
"""


def without_the_course(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", RUN_WITHOUT, *args], capture_output=True, text=True, timeout=600)


@pytest.mark.server
def test_a_live_check_with_its_json_junit_and_export_runs_without_the_course(lab_server, tmp_path):
    report, xml, failures = tmp_path / "check.json", tmp_path / "check.xml", tmp_path / "failures.json"
    done = without_the_course("check", "--url", lab_server.url, "--model", "asr_sequence_direct", "--steps", "4", "--only", "interleaved",
                              "--json", str(report), "--junit-xml", str(xml), "--export-failures", str(failures))
    assert done.returncode == 0, done.stdout + done.stderr
    assert read_report(report)["outcome"] == "held" and xml.read_text().startswith("<?xml")


def test_the_offline_review_runs_without_the_course(tmp_path):
    report = tmp_path / "review.json"
    done = without_the_course("check", "--config", str(ZOO / "zoo_corrid_oldest"), "--triton-version", "2.51.0", "--json", str(report))
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(report.read_text())["kind"] == "check_config"


def test_the_checker_distribution_asks_only_for_what_the_project_asks_and_packs_its_sources():
    def names(deps):
        return {d.split("[")[0].split(">")[0].split("<")[0].split("=")[0].strip().lower() for d in deps}

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    alone = tomllib.loads((ROOT / "packaging" / "checker" / "pyproject.toml").read_text())
    assert names(alone["project"]["dependencies"]) - {"numpy"} <= names(project["dependencies"])
    assert not names(alone["project"]["dependencies"]) & {"streamlit", "torch", "nvidia-pytriton", "plotly"}
    assert alone["project"]["scripts"] == project["scripts"]
    assert alone["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"] == {"../../app": "app"}
