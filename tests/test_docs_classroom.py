"""docs/classroom.md's classroom section says what the code does: the variables it names are the ones the
app reads, the defaults it states are the code's, the command's options exist, its links resolve."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from app.lab.deployment import loaded_models
from app.lab.paths import REPO_ROOT
from app.lab.traffic import run_queue
from app.quiz import access_rules

PAGE = REPO_ROOT / "docs" / "classroom.md"
HEADING = "## Classroom: one host for a class"


@pytest.fixture(scope="module")
def section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    assert HEADING in text
    rest = text.split(HEADING, 1)[1]
    return rest.split("\n## ", 1)[0]


def _app_source() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in (REPO_ROOT / "app").rglob("*.py"))


def test_every_variable_it_names_is_read_by_the_app(section):
    names = set(re.findall(r"\bTRITON_[A-Z_]+\b", section))
    assert {"TRITON_URL", "TRITON_LAB_INSTRUCTOR_KEY", "TRITON_LAB_PARALLEL_RUNS", "TRITON_LAB_MAX_STUBS",
            "TRITON_LAB_MEMORY_MB"} <= names
    source = _app_source()
    unread = sorted(n for n in names if f'"{n}"' not in source)
    assert not unread, f"named in docs/classroom.md's classroom section but read nowhere in app/: {unread}"
    assert access_rules.ENV_KEY in section and access_rules.SECRET_NAME in section


def test_the_defaults_it_states_are_the_codes(section, monkeypatch):
    monkeypatch.delenv(run_queue.PARALLEL_ENV, raising=False)
    monkeypatch.delenv(loaded_models.BUDGET_ENV, raising=False)
    assert "one per CPU\n  core" in section or "one per CPU core" in section
    assert run_queue.default_parallel() == max(1, os.cpu_count() or 1)
    assert f"(memory in GB − {loaded_models.RESERVED_GB:g}) / {loaded_models.STUB_GB:g}, at least 4" in section
    assert loaded_models.default_budget() >= 4
    assert f"waits up to {loaded_models.CAPACITY_WAIT_S:g} s" in section and "`capacity_full`" in section
    monkeypatch.delenv(loaded_models.MEMORY_ENV, raising=False)
    assert f"the host's memory less {loaded_models.RESERVED_MB / 1024:g} GB" in " ".join(section.split())
    assert loaded_models.default_memory_budget_mb() == max(1024, int(loaded_models.machine_memory_mb() - loaded_models.RESERVED_MB))
    assert "`memory_full`" in section and "a quarter for growth" in " ".join(section.split())
    assert loaded_models.GROWTH_MARGIN == 0.25


def test_its_command_uses_options_streamlit_has(section):
    from streamlit import config

    command = re.search(r"streamlit run (\S+) (.+)", section)
    assert command and (REPO_ROOT / command.group(1)).is_file()
    options = re.findall(r"--([a-zA-Z]+\.[a-zA-Z]+)", command.group(2))
    assert options == ["server.address", "server.port"]
    for option in options:
        config.get_option(option)  # raises RuntimeError for an option streamlit does not have


def test_the_capacity_table_has_the_benchmarks_rows_and_links_resolve(section):
    rows = re.findall(r"^\| (\d+) \| ([\d.]+) s \| ([\d.]+) s \|", section, flags=re.M)
    assert [int(r[0]) for r in rows] == [5, 10, 15, 20]
    assert all(float(p50) <= float(p95) for _, p50, p95 in rows)
    for target in re.findall(r"\]\(([^)#]+)", section):  # relative to the page, as a reader's browser reads it
        assert (PAGE.parent / target).exists(), target
    assert Path(REPO_ROOT / "benchmarks" / "classroom.py").is_file()
