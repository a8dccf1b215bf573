"""One name per idea in code (lessons/code-glossary.yaml): no module, class, function, parameter,
class field or module constant under app/ uses a synonym the code glossary forbids.

The names are read with `ast`, so words in strings, comments and docstrings (which follow the
learner's glossary) and names Streamlit or Triton own (st.session_state, a model's SESSION input)
are never names here. A failure lists each offending name as path:line.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "app"
CODE_GLOSSARY = REPO / "lessons" / "code-glossary.yaml"
KINDS = ("module", "class", "function", "parameter", "field", "constant")

# Known exceptions: (folders, forbidden words) where a rename belongs to a change that moves the
# code. Each must still excuse a name (test_every_exception_still_excuses_a_name), so an entry is
# deleted as soon as its names are gone. Keep this list short.
EXCEPTIONS = [
    # The checker calls a session's request count its "length" and the text of its generated
    # inputs "letters" (report keys of schema 1 carry the same words).
    (("app/checker/",), ("length", "letters")),
]


@dataclass(frozen=True)
class Name:
    path: str  # relative to the repository, with "/"
    line: int
    kind: str  # one of KINDS
    name: str


def words(name: str) -> tuple[str, ...]:
    """A name's words, lower-cased: split at "_" and where capitals start a word (QuizSession,
    HTTPServer, TEXT_LETTERS -> quiz session, http server, text letters)."""
    found: list[str] = []
    for part in name.split("_"):
        found += re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", part)
    return tuple(w.lower() for w in found)


def _parameters(node: ast.arguments) -> list[ast.arg]:
    return [*node.posonlyargs, *node.args, *node.kwonlyargs, *(a for a in (node.vararg, node.kwarg) if a)]


def _assigned(statement: ast.stmt) -> list[str]:
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return [statement.target.id]
    if isinstance(statement, ast.Assign):
        return [t.id for t in statement.targets if isinstance(t, ast.Name)]
    return []


def names_in(source: str, path: str) -> list[Name]:
    """Every name the source defines that names an idea: the module (each folder of its path below
    app/ and its file), classes, functions, parameters, class fields, module constants."""
    parts = Path(path).with_suffix("").parts
    found = [Name(path, 1, "module", part) for part in parts[1:] if part != "__init__"]
    tree = ast.parse(source, filename=path)
    for statement in tree.body:
        found += [Name(path, statement.lineno, "constant", n) for n in _assigned(statement)]
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            found.append(Name(path, node.lineno, "class", node.name))
            for statement in node.body:
                found += [Name(path, statement.lineno, "field", n) for n in _assigned(statement)]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append(Name(path, node.lineno, "function", node.name))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            found += [Name(path, a.lineno, "parameter", a.arg) for a in _parameters(node.args)]
    return found


@dataclass(frozen=True)
class Rule:
    term: str
    words: tuple[str, ...]
    use: str
    exact: bool = False
    kinds: tuple[str, ...] = KINDS
    outside: tuple[str, ...] = ()

    def breaks(self, name: Name) -> bool:
        if name.kind not in self.kinds or name.path.startswith(self.outside):
            return False
        have, n = words(name.name), len(self.words)
        if self.exact:
            return have == self.words
        return any(have[i : i + n] == self.words for i in range(len(have) - n + 1))


@lru_cache(maxsize=1)
def glossary() -> dict:
    return yaml.safe_load(CODE_GLOSSARY.read_text(encoding="utf-8"))


def rules(data: dict | None = None) -> list[Rule]:
    out = []
    for term in (data or glossary())["terms"]:
        for entry in term.get("forbidden", []):
            out.append(Rule(term["id"], tuple(entry["words"].split()), entry["use"], bool(entry.get("exact")),
                            tuple(entry.get("kinds", KINDS)), tuple(entry.get("outside", ()))))
    return out


def findings(names: list[Name], active: list[Rule]) -> list[tuple[Name, Rule]]:
    found = [(name, rule) for name in names for rule in active if rule.breaks(name)]
    return sorted(found, key=lambda pair: (pair[0].path, pair[0].line))


def excused(name: Name, rule: Rule) -> bool:
    return any(name.path.startswith(folders) and " ".join(rule.words) in forbidden for folders, forbidden in EXCEPTIONS)


def shown(found: list[tuple[Name, Rule]]) -> list[str]:
    return [f"{n.path}:{n.line}: {n.kind} {n.name!r} says {' '.join(r.words)!r} (use {r.use}; term {r.term})"
            for n, r in found]


@lru_cache(maxsize=1)
def app_names() -> tuple[Name, ...]:
    found: list[Name] = []
    for path in sorted(APP.rglob("*.py")):
        found += names_in(path.read_text(encoding="utf-8"), path.relative_to(REPO).as_posix())
    return tuple(found)


def test_no_name_in_app_uses_a_forbidden_synonym():
    names = list(app_names())
    assert len(names) > 5000, "the walk found too few names to prove anything"
    wrong = [(n, r) for n, r in findings(names, rules()) if not excused(n, r)]
    assert not wrong, "names that the code glossary rules out:\n" + "\n".join(shown(wrong))


def test_every_exception_still_excuses_a_name():
    found = findings(list(app_names()), rules())
    for folders, forbidden in EXCEPTIONS:
        for word in forbidden:
            assert any(n.path.startswith(folders) and " ".join(r.words) == word for n, r in found), (
                f"nothing in {folders} says {word!r} any more: delete it from EXCEPTIONS")


PLANTED = '''
TURNS = "CHAT"
session_count = 3


class QuizSession:
    length: int = 24
    sessions: int = 8

    def submit(self, conversation_id, *, chunks=24):
        return lambda turn: turn


class Check:
    pass


def browser_session_key(length):
    def letters(): ...
    return [session for session in ()]
'''


def test_the_check_finds_each_planted_synonym_where_it_is():
    found = shown(findings(names_in(PLANTED, "app/ui/session.py"), rules()))
    assert [line.split(" (use")[0] for line in found] == [
        "app/ui/session.py:1: module 'session' says 'session'",
        "app/ui/session.py:2: constant 'TURNS' says 'turns'",
        "app/ui/session.py:6: class 'QuizSession' says 'quiz session'",
        "app/ui/session.py:7: field 'length' says 'length'",
        "app/ui/session.py:10: parameter 'conversation_id' says 'conversation'",
        "app/ui/session.py:11: parameter 'turn' says 'turn'",
        "app/ui/session.py:14: class 'Check' says 'check'",
        "app/ui/session.py:18: function 'browser_session_key' says 'browser session'",
        "app/ui/session.py:18: parameter 'length' says 'length'",
        "app/ui/session.py:19: function 'letters' says 'letters'",
    ], "\n".join(found)


def test_the_right_names_pass():
    right = '''
class SelfCheck:
    chunks: int = 24
    sessions: int = 8


def lesson_session_count(session, text, letter, sequence, return_code):
    length = len(text)  # a local, not a name the check reads
    return length
'''
    assert findings(names_in(right, "app/lab/traffic/session_plan.py"), rules()) == []
    assert findings(names_in("class Check:\n    pass\n", "app/checker/engine/checks.py"), rules()) == []


def test_words_split_names_as_a_reader_does():
    assert words("QuizSession") == ("quiz", "session")
    assert words("_Conversation") == ("conversation",)
    assert words("TEXT_LETTERS") == ("text", "letters")
    assert words("HTTPServer2") == ("http", "server", "2")
    assert words("mixing_broke_chunks") == ("mixing", "broke", "chunks")


def test_the_code_glossary_is_well_formed():
    terms = glossary()["terms"]
    ids = [t["id"] for t in terms]
    assert len(ids) == len(set(ids)), "a term id twice"
    for term in terms:
        assert set(term) <= {"id", "code", "means", "forbidden"} and term["code"] and term["means"], term["id"]
        for entry in term.get("forbidden", []):
            assert set(entry) <= {"words", "use", "exact", "kinds", "outside"} and entry["words"] and entry["use"], entry
            assert set(entry.get("kinds", KINDS)) <= set(KINDS), entry
            assert words(entry["words"].replace(" ", "_")) == tuple(entry["words"].split()), f"not lower-case words: {entry}"
    assert len(rules()) >= 10


def test_a_class_named_problem_is_the_learners_problem_alone():
    planted = "class Problem:\n    pass\n"
    assert [f.name for f, _rule in findings(names_in(planted, "app/quiz/bank.py"), rules())] == ["Problem"]
    assert findings(names_in(planted, "app/lab/problems.py"), rules()) == []
