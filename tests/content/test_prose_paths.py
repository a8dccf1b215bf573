"""Every repository path named in prose exists: in README.md, docs/*.md, deploy/README.md,
lessons/COVERAGE.md and the docstrings of app/'s modules, classes and functions.

What counts as a path (one rule, `named_paths`):
- a token that starts with one of this repository's top folders (`app/`, `tests/`, `lessons/`, `quiz/`,
  `model_repository/`, `docs/`, `deploy/`, `benchmarks/`, `packaging/`, `.ci/`), backticked or not, not
  glued to what comes before it (so `../app/x` or a URL's `/docs/x` is not one), and made of letters,
  digits, `_ . - / * < >` and `{a,b}` groups; trailing `.` and `-` are sentence punctuation;
- unless the word before it names another repository (`server docs/user_guide/batcher.md` cites
  Triton's server, as lessons/COVERAGE.md does throughout).

How it must exist (`exists`):
- `<anything>` and `*` are placeholders: the pattern must match at least one path (`tests/lab/test_<name>.py`);
- `{a,b}` names each of its alternatives, and each must exist;
- a last part `module.Name` whose `.Name` is not a file suffix names something in a module:
  `module.py` or the package folder `module/` must exist (`app/text/errors.explain`);
- a last part with no dot may name a module without its `.py` (`app/text/problems`);
- anything else exists as written (a trailing `/` asks for a folder).

Markdown links (`[text](target)`, `<img src="target">`) in the markdown files resolve relative to the
file, as a reader's browser resolves them."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from app.lab.paths import REPO_ROOT

TOP_FOLDERS = ("app", "tests", "lessons", "quiz", "model_repository", "docs", "deploy", "benchmarks", "packaging", r"\.ci")
PATH = re.compile(r"(?<![\w./\-~$])(?:" + "|".join(TOP_FOLDERS) + r")/(?:[\w.*<>\-/]|\{[\w.\-,]+\})*")
# Citations of Triton's repositories name the repository first ("server docs/...", "perf_analyzer's docs/...").
OTHER_REPOSITORY = re.compile(
    r"\b(?:server|core|common|backend|python_backend|client|perf_analyzer|tensorrtllm_backend|third_party|model_analyzer)"
    r"(?:'s)?\s+$")
LINK = re.compile(r"\]\(([^)\s]+)\)|<img src=\"([^\"]+)\"")
FILE_SUFFIXES = {"py", "md", "yaml", "yml", "json", "pbtxt", "toml", "txt", "png", "po", "pot", "mo", "sh", "cfg", "ini", "html",
                 "js", "css", "lock", "csv", "xml", "sql", "pyi", "typed"}
MARKDOWN = ["README.md", "deploy/README.md", "lessons/COVERAGE.md"]


def named_paths(text: str) -> list[str]:
    """The repository paths a text names, by the rule above, in order."""
    found = []
    for match in PATH.finditer(text):
        if OTHER_REPOSITORY.search(text[max(0, match.start() - 40):match.start()]):
            continue
        found.append(match.group(0).rstrip(".-"))
    return found


def _alternatives(path: str) -> list[str]:
    group = re.search(r"\{([^}]*)\}", path)
    if not group:
        return [path]
    return [alt for option in group.group(1).split(",")
            for alt in _alternatives(path[:group.start()] + option + path[group.end():])]


def _exists_one(path: str, root: Path) -> bool:
    folder = path.endswith("/")
    parts = re.sub(r"<[^>]*>", "*", path.rstrip("/")).split("/")
    pattern = "/".join(part if part == "**" else re.sub(r"\*+", "*", part) for part in parts)
    if "*" in pattern:
        return any(p.is_dir() or not folder for p in root.glob(pattern))
    target = root / pattern
    if target.is_dir() or (target.exists() and not folder):
        return True
    head, _, last = pattern.rpartition("/")
    if "." not in last and not folder:  # a module named without .py
        return target.with_suffix(".py").is_file()
    module, dot, name = last.rpartition(".")
    if dot and module and name.isidentifier() and name not in FILE_SUFFIXES:  # module.Name
        base = root / head / module
        return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()
    return False


def exists(path: str, root: Path = REPO_ROOT) -> bool:
    """Whether a path named in prose exists under root (placeholders, {a,b} and module.Name as above)."""
    return all(_exists_one(alt, root) for alt in _alternatives(path))


def missing_in(text: str, where: Path, root: Path = REPO_ROOT) -> list[str]:
    """The paths a text names that do not exist; for a markdown file also its links that lead nowhere."""
    missing = [path for path in named_paths(text) if not exists(path, root)]
    if where.suffix == ".md":
        for match in LINK.finditer(text):
            target = (match.group(1) or match.group(2)).split("#", 1)[0]
            if not target or re.match(r"[a-z]+:", target):
                continue
            if not (root / where.parent / target).resolve().exists():
                missing.append(f"link {target}")
    return missing


def _docstrings(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = [node for node in ast.walk(tree) if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
    return [doc for node in nodes if (doc := ast.get_docstring(node, clean=False))]


def _sources(root: Path = REPO_ROOT) -> dict[Path, str]:
    """Every prose this test reads: file (relative to root) -> its text (for a module, its docstrings)."""
    sources = {Path(name): (root / name).read_text(encoding="utf-8") for name in MARKDOWN}
    sources |= {p.relative_to(root): p.read_text(encoding="utf-8") for p in sorted((root / "docs").glob("*.md"))}
    sources |= {p.relative_to(root): "\n\n".join(_docstrings(p)) for p in sorted((root / "app").rglob("*.py"))
                if "__pycache__" not in p.parts}
    return sources


def test_every_path_named_in_prose_exists():
    missing = [f"{where}: {path}" for where, text in _sources().items() for path in missing_in(text, where)]
    assert not missing, "paths named in prose that do not exist:\n" + "\n".join(missing)


def test_it_reads_the_readme_the_docs_coverage_and_the_docstrings():
    sources = _sources()
    assert {Path("README.md"), Path("deploy/README.md"), Path("lessons/COVERAGE.md")} <= set(sources)
    assert any(p.parent == Path("docs") for p in sources) and sum(p.suffix == ".py" for p in sources) > 50
    assert "docs/checker.md" in named_paths(sources[Path("README.md")])


def test_a_planted_missing_path_is_caught_and_the_rule_keeps_what_exists(tmp_path):
    (tmp_path / "app" / "text").mkdir(parents=True)
    (tmp_path / "app" / "text" / "errors.py").write_text("")
    (tmp_path / "app" / "lab" / "checker").mkdir(parents=True)
    (tmp_path / "app" / "lab" / "checker" / "__init__.py").write_text("")
    (tmp_path / "tests" / "lab").mkdir(parents=True)
    (tmp_path / "tests" / "lab" / "test_slots.py").write_text("")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "serving.md").write_text("")
    (tmp_path / ".ci").mkdir()
    (tmp_path / ".ci" / "run").write_text("")
    page = tmp_path / "docs" / "page.md"
    text = (
        "Words live in `app/text/errors.py`; `app/text/errors.explain` words them; the engine is app/lab/checker/.\n"
        "Tests: `tests/lab/test_<name>.py`, app/text/errors (a module), tests/lab/*.py and `app/text/{errors}.py`; CI: .ci/run.\n"
        "Triton's server docs/user_guide/batcher.md and perf_analyzer's docs/input_data.md are not ours;\n"
        "nor is ../app/elsewhere.py or https://example.org/docs/x.md. See [serving](serving.md).\n"
        "Planted: `app/text/gone.py`, app/lab/gone/, app/text/errors.py/, `app/text/{errors,vanished}.py`,\n"
        "tests/lab/test_<name>.yaml, app/text/errors.missing_attr.py, app/text/vanished and [a dead link](nowhere.md#anchor).\n"
    )
    assert missing_in(text, page.relative_to(tmp_path), tmp_path) == [
        "app/text/gone.py", "app/lab/gone/", "app/text/errors.py/", "app/text/{errors,vanished}.py",
        "tests/lab/test_<name>.yaml", "app/text/errors.missing_attr.py", "app/text/vanished", "link nowhere.md"]
