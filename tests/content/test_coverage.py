"""lessons/COVERAGE.md: every fact the course teaches, where it comes from, how it is proven, and
which lesson sentences say it.

Two kinds of table, told apart by their header:

- fact rows (`Id | Fact | Lesson section | Quiz items | Source | Proof`): each names the lesson
  sections and quiz items that teach the fact, its sources (a Triton file with a line range at a
  release, an issue, NVIDIA's documentation, a seed or the lab) and its proof (a test, a live
  element, or why it is not shown);
- sentence rows (`Section | English | Chinese | Fact`): each maps one lesson sentence, in each
  language, to fact rows by a short fragment quoted from that sentence; there is one column per
  language of app.i18n.languages(), named by the language's English name (column_name);
- text rows (`Module | English | Fact`): each maps one message of a words module (app/text/, app/checker/words/,
  the recogniser's app/recogniser/words/ and app/recogniser/exercises/<name>/words.py, or a live element's
  app/live/<name>/words.py: the words
  around the lessons: review findings, checker words, log readings, presets, problems, exercise
  and rollout words), by a fragment of its English msgid, to fact rows; the row covers that
  message in every language, since each catalog holds the translation of that same message.

The rule for which sentences must be mapped ("behavioural" sentences) is written once, in the
"Which sentences need a row" block of COVERAGE.md, and read from there: this module implements
it (units(), behavioural()) and fails for every behavioural sentence that no row maps, in the
lessons and in the words modules (a message is behavioural when a sentence of it is, in any language).

`.venv/bin/python -m tests.content.test_coverage` prints the unmapped sentences and messages with a
suggested fragment for each, ready to be given a fact.
"""
from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

import pytest
from tritonclient.grpc import model_config_pb2

from app.content import yaml_text
from app.content.lessons import heading_parts, lessons_dir, load_lessons
from app.i18n import SOURCE_LANGUAGE, languages, words
from app.i18n.catalogs import extract
from app.views.lesson_parts.body import split_sections
from tests import mirrors

REPO = Path(__file__).resolve().parents[2]
COVERAGE = REPO / "lessons" / "COVERAGE.md"
BANK = REPO / "quiz" / "bank.yaml"
LIVE_FILE = REPO / "app" / "registry" / "live.py"
# Every language the app has; the sentence rows hold one fragment column per language (MAP_COLUMNS)
# and the rule block one word list each, so a language added without them fails here.
LANGS = languages()


def column_name(lang: str) -> str:
    """A language's column in COVERAGE.md: its English name ('Chinese'), or its code where CLDR has none."""
    from babel import Locale, UnknownLocaleError

    try:
        return Locale.parse(lang).get_display_name(SOURCE_LANGUAGE) or lang
    except (ValueError, UnknownLocaleError):
        return lang


FACT_COLUMNS = ["Id", "Fact", "Lesson section", "Quiz items", "Source", "Proof"]
MAP_COLUMNS = ["Section", *map(column_name, LANGS), "Fact"]
TEXT_COLUMNS = ["Module", "English", "Fact"]
# The modules whose messages text rows map: the shared words in app/text/, a feature's beside its engine
# (the recogniser's app/recogniser/words/ and its exercises' words.py).
# Of the generator's exercises only the paged engine's (kv_*) are mapped so far: the four before them
# have no rows yet, and would fail here until they get theirs.
WORDS_MODULE = re.compile(r"app/(text/[\w/]+|checker/words/\w+|live/\w+/words|recogniser/(?:words/\w+|exercises/\w+/words)"
                          r"|generation/exercises/kv_\w+/words|presenter/words)\.py")
SKIPPED_SECTIONS = {"try-it"}  # says what the live element below shows, not what Triton does

REPOS = r"server|core|common|client|python_backend|backend|vllm_backend|tensorrtllm_backend"
FILE_SOURCE = re.compile(
    rf"^(?P<repo>{REPOS}) (?P<path>[\w./-]+\.(?:md|proto|cc|h|py|rst|txt|pbtxt))"
    r":(?P<ranges>L\d+-L\d+(?:,L\d+-L\d+)*) @(?P<tag>r\d\d\.\d\d)$"
)
OTHER_SOURCE = re.compile(
    rf"^(?:(?:{REPOS})#\d+"
    r"|docs\.nvidia\.com/\S+"
    # Lesson 9's sources outside Triton: the engines' own repositories, papers and docs, and the
    # transformers source the lab's engine runs (checked against the installed package below).
    r"|(?:NVIDIA/TensorRT-LLM|vllm-project/vllm|huggingface/transformers)#\d+"
    r"|(?:arxiv\.org|docs\.vllm\.ai|huggingface\.co)/\S+"
    r"|github\.com/(?:NVIDIA/TensorRT-LLM|vllm-project/vllm|huggingface/transformers)/\S+"
    r"|transformers [\w./-]+\.py:L\d+-L\d+(?:,L\d+-L\d+)* @v\d+\.\d+\.\d+"
    r"|lab: .+"
    r"|seed: (?:sequence batcher explainer \(000\)|NCP-GENL guide \(001\)|Chinese deployment guide \(002\)))$"
)
SECTION_LINK = re.compile(r"^`([a-z0-9-]+)#([a-z0-9-]+)`$")
ITEM_CELL = re.compile(r"^`([a-z0-9]+(?:-[a-z0-9]+)*)`$")
FACT_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
TEST_PROOF = re.compile(r"^`(tests/[\w/]+\.py)::(test_\w+)`$")
MODULE_CELL = re.compile(rf"^`({WORDS_MODULE.pattern})`$")
FRAGMENT = re.compile(r'^"(.+)"$')
NONE = "—"


# ------------------------------------------------------------------ the rule


@dataclass(frozen=True)
class Rule:
    prefixes: dict[str, tuple[str, ...]]  # language -> words or stems matched at a word start
    exact: tuple[str, ...]  # Triton's own flag and tensor names, matched case-sensitively as words


@lru_cache(maxsize=4)
def rule(path: Path = COVERAGE) -> Rule:
    """The word lists of COVERAGE.md's fenced `rule` block: `en:`, `zh:` and `exact:` lines."""
    text = path.read_text(encoding="utf-8")
    block = re.search(r"^```rule\n(.*?)^```", text, re.S | re.M)
    assert block, "COVERAGE.md has no ```rule block saying which sentences need a row"
    lists: dict[str, tuple[str, ...]] = {}
    for line in block.group(1).strip().split("\n"):
        key, _, words = line.partition(":")
        lists[key.strip()] = tuple(w.strip() for w in words.split(",") if w.strip())
    assert set(lists) == {*LANGS, "exact"}, f"rule block keys {sorted(lists)}"
    return Rule({lang: lists[lang] for lang in LANGS}, lists["exact"])


@lru_cache(maxsize=1)
def config_names() -> frozenset[str]:
    """Every field and enum value name of ModelConfig in model_config.proto, nested ones included."""
    names: set[str] = set()
    seen: set[str] = set()

    def walk(message) -> None:
        if message.full_name in seen:
            return
        seen.add(message.full_name)
        for field in message.fields:
            names.add(field.name)
            if field.message_type is not None:
                walk(field.message_type)
            if field.enum_type is not None:
                names.update(value.name for value in field.enum_type.values)
        for nested in message.nested_types:
            walk(nested)
        for enum in message.enum_types:
            names.update(value.name for value in enum.values)

    walk(model_config_pb2.ModelConfig.DESCRIPTOR)
    return frozenset(names)


_CODE = re.compile(r"`([^`]*)`")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def behavioural(sentence: str, lang: str, the_rule: Rule | None = None) -> bool:
    """Does the sentence name a config field (in backticks) or one of the rule's behaviour words?"""
    the_rule = the_rule or rule()
    if any(set(_IDENT.findall(code)) & config_names() for code in _CODE.findall(sentence)):
        return True
    prose = _CODE.sub(" ", sentence)
    if any(re.search(rf"\b{re.escape(word)}\b", prose) for word in the_rule.exact):
        return True
    # A word or stem at a word start: after no ASCII letter or digit, so a script without spaces
    # between words (序列 in 积压队列里的序列) matches inside a run of its own letters.
    return any(re.search(r"(?<![A-Za-z0-9_])" + r"\s+".join(map(re.escape, w.split())), prose, re.I)
               for w in the_rule.prefixes[lang])


# ------------------------------------------------------------- lesson units


_FENCED = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.S | re.M)
_ITEM = re.compile(r"^\s*(?:[-*]|\d+\.)\s+")
# A sentence ends at a full stop, ! or ? (a closing quote or bracket stays with it): in a script
# that spaces its words, before a space and a capital; in one whose full stop is its own (。！？), there.
_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"”)]))\s+(?=[A-Z0-9`\"“(*\[])|(?<=[。！？])(?![”」）])|(?<=[。！？][”」）])")


def split_sentences(text: str) -> list[str]:
    """The sentences of text, in any language."""
    return [p.strip() for p in _END.split(text) if p.strip()]


def units(body: str) -> list[str]:
    """The sentences of a section body: code blocks dropped, each list item and table row on its own."""
    found: list[str] = []
    for block in re.split(r"\n\s*\n", _FENCED.sub("\n\n", body)):
        lines = [line.rstrip() for line in block.split("\n") if line.strip()]
        if not lines:
            continue
        if lines[0].lstrip().startswith("|"):
            rows = [line for line in lines if not set(line) <= set("|-: ")]
            found += [" ".join(cell.strip() for cell in row.strip().strip("|").split("|")) for row in rows[1:]]
            continue
        items: list[str] = []
        for line in lines:
            if _ITEM.match(line) or not items:
                items.append(_ITEM.sub("", line).strip())
            else:
                items[-1] += " " + line.strip()
        for item in items:
            found += split_sentences(item)
    return found


@lru_cache(maxsize=2)
def lesson_units(lang: str) -> dict[str, list[str]]:
    """'lesson-id#anchor' -> the sentences of that section, in lang, for every mapped section."""
    sections: dict[str, list[str]] = {}
    for lesson in load_lessons(lessons_dir(lang)):
        for level, heading, text in split_sections(lesson.body):
            if level != 2:
                continue
            anchor = heading_parts(heading)[1]
            if anchor not in SKIPPED_SECTIONS:
                sections[f"{lesson.id}#{anchor}"] = units(text)
    return sections


# --------------------------------------------------------------- text units


_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


@lru_cache(maxsize=1)
def text_messages() -> dict[str, list[str]]:
    """'app/text/<path>.py' (or another WORDS_MODULE) -> the English messages (msgids) marked in that module, in order, as the
    catalog build extracts them (app/i18n/catalogs.py)."""
    found: dict[str, list[str]] = {}
    for message in extract():
        if not message.id:
            continue
        for ident in message.id if isinstance(message.id, tuple) else (message.id,):
            for filename, _line in message.locations:
                if WORDS_MODULE.fullmatch(filename) and ident not in found.setdefault(filename, []):
                    found[filename].append(ident)
    return found


def message_texts(message: str) -> dict[str, str]:
    """A message in every language, its {placeholders} blanked so their names count as no words."""
    return {lang: _PLACEHOLDER.sub("…", message if lang == SOURCE_LANGUAGE else words(lang)(message)) for lang in LANGS}


def behavioural_message(message: str) -> bool:
    """A message needs a row when a sentence of it is behavioural in any language."""
    return any(behavioural(sentence, lang) for lang, text in message_texts(message).items() for sentence in split_sentences(text))


def normal(text: str, lang: str) -> str:
    """What a fragment is compared on: no backticks or emphasis, single spaces, no case."""
    return " ".join(text.replace("`", "").replace("**", "").split()).casefold()


# ------------------------------------------------------------ the document


@dataclass(frozen=True)
class Row:
    line: int
    cells: tuple[str, ...]


def tables(path: Path = COVERAGE) -> dict[tuple[str, ...], list[Row]]:
    """Rows of every markdown table in the file, grouped by the table's header."""
    grouped: dict[tuple[str, ...], list[Row]] = {}
    header: tuple[str, ...] | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if not line.startswith("|"):
            header = None
            continue
        if set(line) <= set("|-: "):
            continue
        cells = tuple(cell.strip() for cell in line.strip().strip("|").split("|"))
        if header is None:
            header = cells
            grouped.setdefault(header, [])
            continue
        grouped[header].append(Row(number, cells))
    return grouped


def fact_rows(path: Path = COVERAGE) -> list[Row]:
    found = tables(path)
    unknown = [h for h in found if list(h) not in (FACT_COLUMNS, MAP_COLUMNS, TEXT_COLUMNS)]
    assert not unknown, f"COVERAGE.md tables must have the columns {FACT_COLUMNS}, {MAP_COLUMNS} or {TEXT_COLUMNS}: {unknown}"
    return found.get(tuple(FACT_COLUMNS), [])


def map_rows(path: Path = COVERAGE) -> list[Row]:
    return tables(path).get(tuple(MAP_COLUMNS), [])


def text_rows(path: Path = COVERAGE) -> list[Row]:
    return tables(path).get(tuple(TEXT_COLUMNS), [])


def split_cell(cell: str, separator: str) -> list[str]:
    return [part.strip() for part in cell.split(separator) if part.strip()]


def live_elements() -> set[str]:
    """Keys of app/registry/live.py's LIVE mapping, read from the source so this test imports no Streamlit."""
    for node in ast.walk(ast.parse(LIVE_FILE.read_text(encoding="utf-8"))):
        # `LIVE: dict[...] = {...}` (annotated) or `LIVE = {...}`
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        if any(getattr(t, "id", "") == "LIVE" for t in targets) and isinstance(node.value, ast.Dict):
            return {key.value for key in node.value.keys}
    raise AssertionError("app/registry/live.py defines no LIVE mapping")


def functions_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


@lru_cache(maxsize=1)
def anchors() -> dict[str, set[str]]:
    return {lesson.id: set(lesson.anchors) for lesson in load_lessons()}


@lru_cache(maxsize=1)
def bank_ids() -> set[str]:
    return {item["id"] for item in yaml_text.parse(BANK.read_text(encoding="utf-8"))["items"]}


# ------------------------------------------------------------------ checks


def fact_problems(path: Path = COVERAGE) -> tuple[list[str], list[str]]:
    """(problems with the fact rows, proofs naming a test that does not exist)."""
    problems: list[str] = []
    missing_tests: list[str] = []
    cited: set[str] = set()
    ids: set[str] = set()
    for row in fact_rows(path):
        where = f"COVERAGE.md:{row.line}"
        if len(row.cells) != len(FACT_COLUMNS):
            problems.append(f"{where}: {len(row.cells)} cells, want {len(FACT_COLUMNS)}")
            continue
        fact_id, fact, sections, quiz, sources, proofs = row.cells
        if not FACT_ID.match(fact_id) or fact_id in ids:
            problems.append(f"{where}: id {fact_id!r} must be a new [a-z0-9-] id")
        ids.add(fact_id)
        if not fact:
            problems.append(f"{where}: empty fact")
        # `none`: no lesson teaches the fact; only words of app/text/ say it (a text row must map it).
        links = [] if sections == "none" else split_cell(sections, ",")
        if not links and sections != "none":
            problems.append(f"{where}: no lesson section")
        for link in links:
            match = SECTION_LINK.match(link)
            if not match or match.group(2) not in anchors().get(match.group(1), set()):
                problems.append(f"{where}: section {link!r} is not an existing `lesson-id#anchor`")
        if quiz != "none":
            for cell in split_cell(quiz, ","):
                match = ITEM_CELL.match(cell)
                if not match or match.group(1) not in bank_ids():
                    problems.append(f"{where}: quiz item {cell!r} is not a backticked id of quiz/bank.yaml")
                else:
                    cited.add(match.group(1))
        named = split_cell(sources, ";")
        if not named:
            problems.append(f"{where}: no source")
        for source in named:
            file_source = FILE_SOURCE.match(source)
            if file_source:
                for lo, hi in re.findall(r"L(\d+)-L(\d+)", file_source.group("ranges")):
                    if not 0 < int(lo) <= int(hi):
                        problems.append(f"{where}: line range L{lo}-L{hi} is empty")
            elif not OTHER_SOURCE.match(source):
                problems.append(f"{where}: source {source!r} is not '<repo> <path>:L<a>-L<b> @r<NN.NN>', an issue, a seed or lab")
        listed = split_cell(proofs, ";")
        if not listed:
            problems.append(f"{where}: no proof")
        for proof in listed:
            if proof == "not behavioural" or (proof.startswith("not shown on this server: ") and len(proof) > 30):
                continue
            if proof.startswith("live: "):
                if proof[6:] not in live_elements():
                    problems.append(f"{where}: no live element {proof[6:]!r}")
                continue
            match = TEST_PROOF.match(proof)
            if not match:
                problems.append(f"{where}: proof {proof!r} must be a test, a live element or say why it is not shown")
                continue
            test_file, name = REPO / match.group(1), match.group(2)
            if not test_file.is_file() or name not in functions_in(test_file):
                missing_tests.append(f"{where}: {match.group(1)}::{name}")
    missing = bank_ids() - cited
    if missing:
        problems.append(f"quiz items missing from COVERAGE.md: {sorted(missing)}")
    return problems, missing_tests


def map_problems(path: Path = COVERAGE, units_by_lang: dict[str, dict[str, list[str]]] | None = None) -> list[str]:
    """Rows that do not resolve, and behavioural sentences that no row maps, in every language."""
    units_by_lang = units_by_lang or {lang: lesson_units(lang) for lang in LANGS}
    facts = {row.cells[0]: row for row in fact_rows(path) if len(row.cells) == len(FACT_COLUMNS)}
    problems: list[str] = []
    mapped: dict[str, set[tuple[str, int]]] = {lang: set() for lang in LANGS}
    used_facts: set[str] = set()
    for row in map_rows(path):
        where = f"COVERAGE.md:{row.line}"
        if len(row.cells) != len(MAP_COLUMNS):
            problems.append(f"{where}: {len(row.cells)} cells, want {len(MAP_COLUMNS)}")
            continue
        section_cell, *fragments, fact_cell = row.cells
        match = SECTION_LINK.match(section_cell)
        if not match:
            problems.append(f"{where}: section {section_cell!r} is not `lesson-id#anchor`")
            continue
        section = f"{match.group(1)}#{match.group(2)}"
        for fact_id in split_cell(fact_cell, ","):
            fact = facts.get(fact_id)
            if fact is None:
                problems.append(f"{where}: no fact row {fact_id!r}")
            elif f"`{section}`" not in split_cell(fact.cells[2], ","):
                problems.append(f"{where}: fact {fact_id} does not list section {section}")
            used_facts.add(fact_id)
        if all(cell == NONE for cell in fragments):
            problems.append(f"{where}: quote a fragment in at least one language")
        for lang, cell in zip(LANGS, fragments, strict=True):
            if cell == NONE:
                continue
            quoted = FRAGMENT.match(cell)
            if not quoted:
                problems.append(f"{where}: {lang} fragment must be quoted with \"...\" or be {NONE}")
                continue
            sentences = units_by_lang[lang].get(section)
            if sentences is None:
                problems.append(f"{where}: {lang} has no mapped section {section}")
                continue
            fragment = normal(quoted.group(1), lang)
            hits = [i for i, sentence in enumerate(sentences) if fragment in normal(sentence, lang)]
            if len(hits) != 1:
                problems.append(f"{where}: {lang} fragment {quoted.group(1)!r} matches {len(hits)} sentences of {section}, want 1")
            mapped[lang].update((section, i) for i in hits)
    text_problems, text_facts = text_map_problems(path, facts)
    problems += text_problems
    for fact_id in sorted(set(facts) - used_facts - text_facts):
        problems.append(f"COVERAGE.md:{facts[fact_id].line}: fact {fact_id} maps no lesson sentence or text message")
    for lang in LANGS:
        for section, sentences in units_by_lang[lang].items():
            for i, sentence in enumerate(sentences):
                if (section, i) not in mapped[lang] and behavioural(sentence, lang):
                    problems.append(f"{lang} {section}: no row maps {sentence[:90]!r}")
    return problems


@cache
def chart_summaries(module: str) -> frozenset[str]:
    """The messages a words module lists in CHART_SUMMARIES (each feature's chart words): sentences that read a chart's
    numbers aloud beside it, naming no behaviour, so they need no row (COVERAGE.md says so)."""
    found = importlib.import_module(module.removesuffix(".py").removesuffix("/__init__").replace("/", "."))
    return frozenset(getattr(found, "CHART_SUMMARIES", {}).values())


def text_map_problems(path: Path, facts: dict[str, Row], messages: dict[str, list[str]] | None = None) -> tuple[list[str], set[str]]:
    """(problems, facts used) of the text rows: each names a module of app/text/, a fragment found in
    exactly one of its messages and existing facts; every behavioural message has a row."""
    messages = messages if messages is not None else text_messages()
    problems: list[str] = []
    used: set[str] = set()
    mapped: set[tuple[str, int]] = set()
    for row in text_rows(path):
        where = f"COVERAGE.md:{row.line}"
        if len(row.cells) != len(TEXT_COLUMNS):
            problems.append(f"{where}: {len(row.cells)} cells, want {len(TEXT_COLUMNS)}")
            continue
        module_cell, fragment_cell, fact_cell = row.cells
        module, quoted = MODULE_CELL.match(module_cell), FRAGMENT.match(fragment_cell)
        if not module or module.group(1) not in messages:
            problems.append(f"{where}: {module_cell!r} is not a backticked words module (app/text/, app/checker/words/, app/<feature>/<name>/words.py) "
                            "with marked words")
            continue
        if not quoted:
            problems.append(f"{where}: the English fragment must be quoted with \"...\"")
            continue
        fragment = normal(quoted.group(1), "en")
        texts = messages[module.group(1)]
        hits = [i for i, message in enumerate(texts) if fragment in normal(message, "en")]
        if len(hits) > 1:  # a whole short message ("one instance") picks itself among longer ones holding it
            hits = [i for i in hits if normal(texts[i], "en") == fragment] or hits
        if len(hits) != 1:
            problems.append(f"{where}: fragment {quoted.group(1)!r} matches {len(hits)} messages of {module.group(1)}, want 1")
        mapped.update((module.group(1), i) for i in hits)
        ids = split_cell(fact_cell, ",")
        if not ids:
            problems.append(f"{where}: no fact")
        for fact_id in ids:
            if fact_id not in facts:
                problems.append(f"{where}: no fact row {fact_id!r}")
            used.add(fact_id)
    for module, texts in messages.items():
        for i, message in enumerate(texts):
            if (module, i) not in mapped and message not in chart_summaries(module) and behavioural_message(message):
                problems.append(f"{module}: no row maps {message[:90]!r}")
    return problems, used


def test_the_rule_block_lists_words_for_every_language():
    the_rule = rule()
    assert all(the_rule.prefixes[lang] for lang in LANGS) and the_rule.exact


def test_fact_rows_name_sections_items_sources_and_proofs():
    problems, _ = fact_problems()
    assert len(fact_rows()) >= 60, f"COVERAGE.md maps only {len(fact_rows())} facts"
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:60])


def test_every_proof_names_a_test_that_exists():
    _, missing = fact_problems()
    assert not missing, f"{len(missing)} proofs name tests that do not exist:\n" + "\n".join(missing)


def test_every_behavioural_sentence_is_mapped_in_every_language():
    problems = map_problems()
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:80])


@cache
def lines_at(mirror: Path, tag: str, path: str) -> int | str:
    """How many lines path has at tag in the mirror, or git's complaint when it is not there."""
    shown = subprocess.run(["git", "-C", str(mirror), "show", f"{tag}:{path}"], capture_output=True, text=True)
    return shown.stdout.count("\n") + 1 if shown.returncode == 0 else shown.stderr.strip()[:80]


def source_range_problems(path: Path = COVERAGE) -> tuple[int, list[str]]:
    """(sources checked, problems): each cited line range must lie inside the cited file at the cited
    release, in the local mirror of that repository; sources without a mirror are not checked."""
    checked, problems = 0, []
    for row in fact_rows(path):
        for source in split_cell(row.cells[4], ";"):
            match = FILE_SOURCE.match(source)
            mirror = mirrors.mirror(match.group("repo")) if match else None
            if mirror is None or not mirror.is_dir():
                continue
            length = lines_at(mirror, match.group("tag"), match.group("path"))
            checked += 1
            if isinstance(length, str):
                problems.append(f"COVERAGE.md:{row.line}: {source}: not in the mirror ({length})")
                continue
            for _first, last in re.findall(r"L(\d+)-L(\d+)", match.group("ranges")):
                if int(last) > length:
                    problems.append(f"COVERAGE.md:{row.line}: {source}: the file has {length} lines")
    return checked, problems


PACKAGE_SOURCE = re.compile(r"^transformers (?P<path>[\w./-]+\.py):(?P<ranges>L\d+-L\d+(?:,L\d+-L\d+)*) @v(?P<version>\S+)$")


def transformers_files() -> tuple[Path, str]:
    """Where the installed transformers lies and its version, read without importing it (which
    would import torch into the test worker: about 280 MB with README's CUDA build). The lab's engine
    runs it (model_repository/kv_engine), so it is installed."""
    import importlib.metadata
    import importlib.util

    spec = importlib.util.find_spec("transformers")
    assert spec is not None and spec.origin is not None, "transformers is not installed"
    return Path(spec.origin).parent, importlib.metadata.version("transformers")


def package_range_problems(path: Path = COVERAGE) -> tuple[int, list[str]]:
    """(sources checked, problems) for citations of transformers' source: at the installed version,
    the file must exist in the package and hold the cited lines. Another version is not checked."""
    root, version = transformers_files()
    checked, problems = 0, []
    for row in fact_rows(path):
        for source in split_cell(row.cells[4], ";"):
            match = PACKAGE_SOURCE.match(source)
            if not match or match.group("version") != version:
                continue
            checked += 1
            file = root / match.group("path")
            if not file.is_file():
                problems.append(f"COVERAGE.md:{row.line}: {source}: no such file in transformers {version}")
                continue
            length = file.read_text(encoding="utf-8").count("\n") + 1
            for _first, last in re.findall(r"L(\d+)-L(\d+)", match.group("ranges")):
                if int(last) > length:
                    problems.append(f"COVERAGE.md:{row.line}: {source}: the file has {length} lines")
    return checked, problems


def test_transformers_sources_lie_inside_the_installed_files():
    checked, problems = package_range_problems()
    if not checked:
        pytest.skip("no transformers source is cited at the installed version")
    assert not problems, "\n".join(problems)


def test_a_transformers_range_past_the_end_of_its_file_fails(tmp_path):
    _, version = transformers_files()
    text = COVERAGE.read_text(encoding="utf-8")
    cited = next((m.group(0) for m in re.finditer(r"transformers \S+\.py:L\d+-L\d+ @v" + re.escape(version), text)), None)
    if cited is None:
        pytest.skip("no transformers source is cited at the installed version")
    broken = tmp_path / "COVERAGE.md"
    broken.write_text(text.replace(cited, re.sub(r"-L\d+ @", "-L999999 @", cited), 1), encoding="utf-8")
    _, problems = package_range_problems(broken)
    assert any("L999999" in p and "the file has" in p for p in problems)


def test_file_sources_lie_inside_their_file_at_that_release():
    checked, problems = source_range_problems()
    if not checked:
        pytest.skip("no local mirror of Triton's repositories to check line ranges against")
    assert not problems, "\n".join(problems)


def test_a_line_range_past_the_end_of_its_file_fails(tmp_path):
    real = "common protobuf/model_config.proto:L1557-L1567 @r24.10"
    text = COVERAGE.read_text(encoding="utf-8")
    assert real in text
    broken = tmp_path / "COVERAGE.md"
    broken.write_text(text.replace(real, "common protobuf/model_config.proto:L1557-L99999 @r24.10", 1), encoding="utf-8")
    checked, problems = source_range_problems(broken)
    if not checked:
        pytest.skip("no local mirror of Triton's repositories to check line ranges against")
    assert any("L1557-L99999" in p and "the file has" in p for p in problems)


# -------------------------------------------------- the checks can fail


def test_an_unmapped_behavioural_sentence_fails(tmp_path):
    # A sentence that names a Triton behaviour and has no row must be reported, in either language.
    units_by_lang = {lang: {k: list(v) for k, v in lesson_units(lang).items()} for lang in LANGS}
    samples = {"en": "The sequence batcher also reorders requests by size.", "zh": "序列批处理器还会按大小给请求重新排序。"}
    # A language without a sample of its own gets one made of its first behaviour word.
    added = {lang: samples.get(lang) or f"{rule().prefixes[lang][0]} 1 2 3." for lang in LANGS}
    for lang, sentence in added.items():
        units_by_lang[lang]["sequence-batcher#correctness-first"].append(sentence)
    problems = map_problems(COVERAGE, units_by_lang)
    for lang, sentence in added.items():
        assert f"{lang} sequence-batcher#correctness-first: no row maps {sentence!r}" in problems


def test_an_unmapped_behavioural_text_message_fails():
    # A message of app/text/ that names a Triton behaviour and has no row is reported like a lesson sentence.
    facts = {row.cells[0]: row for row in fact_rows() if len(row.cells) == len(FACT_COLUMNS)}
    messages = {module: list(texts) for module, texts in text_messages().items()}
    added = "The sequence batcher reorders requests by size."
    messages["app/text/log_readings.py"].append(added)
    problems, _ = text_map_problems(COVERAGE, facts, messages)
    assert f"app/text/log_readings.py: no row maps {added!r}" in problems
    assert not behavioural_message("{instances:count} × {slots:count}")  # placeholder names are no words


def test_a_chart_summary_needs_no_row_but_the_same_words_as_another_message_do():
    # A module's CHART_SUMMARIES only read a chart's numbers aloud; the same words outside it need a row.
    # Each feature keeps its chart words in its own words module, and each is left out the same way.
    facts = {row.cells[0]: row for row in fact_rows() if len(row.cells) == len(FACT_COLUMNS)}
    messages = {module: list(texts) for module, texts in text_messages().items()}
    charted = {module for module in messages if chart_summaries(module)}
    assert charted >= {"app/recogniser/words/charts.py", "app/checker/words/charts.py", "app/live/sentiment/words.py",
                       "app/presenter/words.py"}, charted
    said = sorted({m for module in charted for m in chart_summaries(module) if behavioural_message(m)})
    assert said, "no chart summary names a behaviour word: this test proves nothing"
    problems, _ = text_map_problems(COVERAGE, facts, messages)
    assert not [p for p in problems if any(m[:90] in p for m in said)]
    messages["app/text/log_readings.py"].append(said[0])
    problems, _ = text_map_problems(COVERAGE, facts, messages)
    assert f"app/text/log_readings.py: no row maps {said[0][:90]!r}" in problems


def test_a_text_row_whose_fragment_no_longer_matches_fails(tmp_path):
    text = COVERAGE.read_text(encoding="utf-8")
    row = text_rows()[0]
    line = text.split("\n")[row.line - 1]
    fragment = FRAGMENT.match(row.cells[1]).group(1)
    broken = tmp_path / "COVERAGE.md"
    broken.write_text(text.replace(line, line.replace(fragment, "words no message says"), 1), encoding="utf-8")
    assert any("'words no message says' matches 0 messages" in p for p in map_problems(broken))


def test_a_row_whose_fragment_no_longer_matches_fails(tmp_path):
    text = COVERAGE.read_text(encoding="utf-8")
    row = map_rows()[0]
    line = text.split("\n")[row.line - 1]
    fragment = FRAGMENT.match(row.cells[1]).group(1)
    broken = tmp_path / "COVERAGE.md"
    broken.write_text(text.replace(line, line.replace(fragment, "words no lesson says"), 1), encoding="utf-8")
    assert any("'words no lesson says' matches 0 sentences" in p for p in map_problems(broken))


def test_a_proof_naming_a_missing_test_fails(tmp_path):
    text = COVERAGE.read_text(encoding="utf-8")
    real = "`tests/claims/test_dynamic_batcher.py::test_batches_keep_arrival_order`"
    assert real in text
    broken = tmp_path / "COVERAGE.md"
    broken.write_text(text.replace(real, real.replace("arrival_order", "no_such_claim"), 1), encoding="utf-8")
    _, missing = fact_problems(broken)
    assert any(m.endswith("tests/claims/test_dynamic_batcher.py::test_batches_keep_no_such_claim") for m in missing)


def test_the_rule_recognises_fields_and_behaviour_words():
    assert behavioural("Set `max_sequence_idle_microseconds` with care.", "en")
    assert behavioural("A backlogged sequence waits.", "en")
    assert behavioural("READY is 0 on padding.", "en")
    assert not behavioural("Accelerators are built for wide arithmetic.", "en")
    assert behavioural("积压队列里的序列会等待。", "zh")
    assert not behavioural("加速器是为宽运算而造的。", "zh")


def test_units_split_sentences_items_and_rows():
    body = "First one. Second `x` one.\n\n- Item **one.** Still one.\n- Item two\n\n| a | b |\n|---|---|\n| c | d |"
    assert units(body) == ["First one.", "Second `x` one.", "Item **one.** Still one.", "Item two", "c d"]
    assert units("第一句。第二句“引号。”结束。") == ["第一句。", "第二句“引号。”", "结束。"]


# -------------------------------------------------------------- for authors


def suggest(sentence: str, lang: str, others: list[str]) -> str:
    """The shortest opening of sentence (4+ words where words are spaced, else 8+ characters) found in
    no other sentence."""
    spaced = len(normal(sentence, lang).split()) * 8 >= len(sentence)  # about a word per 8 characters
    words = normal(sentence, lang).split() if spaced else list(normal(sentence, lang))
    size = 4 if spaced else 8
    while size <= len(words):
        fragment = (" " if spaced else "").join(words[:size])
        if sum(fragment in normal(other, lang) for other in others) == 1:
            return fragment
        size += 1
    return normal(sentence, lang)


def main() -> None:
    problems = map_problems()
    for problem in problems:
        print(problem)
    for lang in LANGS:
        for section, sentences in lesson_units(lang).items():
            for sentence in sentences:
                if any(p == f"{lang} {section}: no row maps {sentence[:90]!r}" for p in problems):
                    cells = [f'"{suggest(sentence, lang, sentences)}"' if other == lang else NONE for other in LANGS]
                    print(f"| `{section}` | " + " | ".join(cells) + " | ? |")
    for module, texts in text_messages().items():
        for message in texts:
            if f"{module}: no row maps {message[:90]!r}" in problems:
                print(f'| `{module}` | "{suggest(message, "en", texts)}" | ? |')


if __name__ == "__main__":
    sys.exit(main())
