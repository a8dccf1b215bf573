"""README.md is the front door and stays true: the name, two sentences, the screenshot and the two
set-up commands on its first screen; the commands are the ones .ci/run runs; the rest of what it
once held lives in docs/ (tests/test_docs.py), so it stays short."""
from __future__ import annotations

import re
import subprocess

import pytest

from app.lab.paths import REPO_ROOT

README = REPO_ROOT / "README.md"
CI_RUN = REPO_ROOT / ".ci" / "run"
READ_COMMAND = REPO_ROOT / ".ci" / "readme-command"
FIRST_SCREEN = 30  # lines a newcomer sees before scrolling, on a laptop
FRONT_DOOR = 150  # lines: what it teaches, the picture, the commands, where to go next


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return README.read_text(encoding="utf-8").splitlines()


def _command(which: str) -> str:
    done = subprocess.run([str(READ_COMMAND), which], capture_output=True, text=True, check=True)
    return done.stdout.rstrip("\n")


def test_the_first_screen_is_the_name_what_it_teaches_the_screenshot_and_the_two_commands(lines):
    assert lines[0] == "# Triton Batching Lab"
    first = "\n".join(lines[:FIRST_SCREEN])
    paragraph = first.split("\n\n")[1].replace("\n", " ")
    assert len(re.findall(r"[.!?](?=\s|$)", paragraph)) == 2, f"two sentences on what it teaches, found: {paragraph}"
    image = re.search(r'<img src="([^"]+\.png)"', first)
    assert image, "the screenshot is on the first screen"
    png = REPO_ROOT / image.group(1)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    assert first.index("<img") < first.index("```bash"), "the screenshot comes before the commands"
    app, tests = _command("app"), _command("tests")
    assert app in first and tests in first
    assert app.endswith(".venv/bin/streamlit run app/main.py") and "pip install -e ." in app
    assert tests.endswith(".venv/bin/python -m pytest") and "pip install -e '.[test]'" in tests


def test_ci_runs_the_readme_commands_it_finds_by_their_marker_not_by_line_number(lines):
    marker = next(line for line in lines if line.startswith("<!-- set-up commands"))
    assert marker in READ_COMMAND.read_text(encoding="utf-8")
    block = lines[lines.index(marker) + 1: lines.index(marker) + 4]
    assert block[0] == "```bash" and [_command("app"), _command("tests")] == block[1:3]
    ci = CI_RUN.read_text(encoding="utf-8")
    # run as written, under the memory sampler (benchmarks/suite_memory.py), which passes its exit status on
    run = 'benchmarks/suite_memory.py --every 5 -- bash -c "$test_command"'
    assert "test_command=$(.ci/readme-command tests)" in ci and run in ci
    assert "first_command=$(.ci/readme-command app)" in ci
    assert "README.md" not in re.sub(r"#.*", "", ci.replace("README.md's", "")), ".ci/run reads README only through .ci/readme-command"
    # the linters run before the tests
    assert ci.index("ruff check") < ci.index(run) and ci.index("lint-imports") < ci.index(run)


def test_a_moved_block_is_still_found_and_a_missing_marker_is_an_error(tmp_path):
    (tmp_path / ".ci").mkdir()
    script = tmp_path / ".ci" / "readme-command"
    script.write_text(READ_COMMAND.read_text(encoding="utf-8"))
    script.chmod(0o755)
    marker = next(line for line in README.read_text(encoding="utf-8").splitlines() if line.startswith("<!-- set-up commands"))
    (tmp_path / "README.md").write_text(f"# X\n\nsome text\n\nmore\n\n{marker}\n```bash\napp here\ntests here\n```\n")
    assert subprocess.run([str(script), "tests"], capture_output=True, text=True, check=True).stdout == "tests here\n"
    (tmp_path / "README.md").write_text("# X\n```bash\napp here\ntests here\n```\n")
    missing = subprocess.run([str(script), "tests"], capture_output=True, text=True)
    assert missing.returncode == 1 and "has no line" in missing.stderr


def test_the_checkers_own_install_command_is_found_by_its_marker_in_its_docs():
    checker = _command("checker")
    docs = (REPO_ROOT / "docs" / "checker.md").read_text(encoding="utf-8").splitlines()
    marker = next(line for line in docs if line.startswith("<!-- set-up command: the checker alone"))
    assert marker in READ_COMMAND.read_text(encoding="utf-8")
    assert docs[docs.index(marker) + 1: docs.index(marker) + 3] == ["```bash", checker]
    assert checker.endswith("pip install ./packaging/checker") and (REPO_ROOT / "packaging" / "checker" / "pyproject.toml").is_file()
    assert "docs/checker.md" in README.read_text(encoding="utf-8")
    unknown = subprocess.run([str(READ_COMMAND), "nothing"], capture_output=True, text=True)
    assert unknown.returncode == 2 and "app|tests|checker" in unknown.stderr


def test_the_readme_is_a_front_door_that_leads_to_every_docs_page(lines):
    assert len(lines) <= FRONT_DOOR, f"README.md has {len(lines)} lines; what is not the front door goes to docs/"
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)", "\n".join(lines)))
    pages = {f"docs/{page.name}" for page in (REPO_ROOT / "docs").glob("*.md")}
    assert pages <= linked, f"docs pages the README does not lead to: {sorted(pages - linked)}"


def test_the_lesson_list_is_the_lesson_files_titles_in_order(lines):
    """README names every lesson, in teaching order, by the title its file gives: a new lesson file
    without its line here, or a line for a lesson that is gone, fails."""
    from app.content.lessons import load_lessons

    start = lines.index("## What it teaches")
    listed = []
    for line in lines[start:]:
        item = re.match(r"^(\d+)\. (.+)$", line)
        if item:
            listed.append((int(item.group(1)), item.group(2).replace("`", "")))
        elif listed and not line.strip():
            break
    titles = [lesson.title for lesson in load_lessons()]
    assert listed == list(enumerate(titles, start=1)), listed
