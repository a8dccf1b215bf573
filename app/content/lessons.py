"""Load lessons/<NN>-<slug>.md files into validated Lesson objects.

Every problem is reported as a ContentError naming the file and the field, so
the person writing lessons can fix content without reading this code.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.content.frontmatter import FrontMatterError, split_front_matter
from app.i18n import language_pack
from app.lab.errors import BatchingLabError
from app.lab.paths import LESSONS_DIR, REPO_ROOT

ID_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
LIVE_PATTERN = re.compile(r"^[a-z0-9_]+$")  # live exercise names are Python-style identifiers
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_KNOWN_KEYS = {"id", "title", "summary", "live", "next", "check"}


class ContentError(BatchingLabError, ValueError):
    """A lesson file is malformed; the message names the file and the field."""


class LessonLinkError(ContentError):
    """A 'lesson-id#anchor' link points at no lesson or no heading."""


@dataclass(frozen=True)
class SelfCheck:
    """One question of a lesson's end-of-lesson self-check (not part of the graded quiz bank)."""

    question: str
    options: tuple[str, ...]
    answer: int
    explain: str
    source: str = ""  # where the keyed fact comes from (a Triton doc, proto, source file or the seed)


@dataclass(frozen=True)
class Lesson:
    id: str
    title: str
    summary: str
    live: str | None  # name of the live lab exercise the lesson embeds, None for a reading-only lesson
    next: tuple[str, ...]
    self_checks: tuple[SelfCheck, ...]
    body: str
    anchors: tuple[str, ...]
    path: Path


_EXPLICIT = re.compile(r"^(.*?)\s*\{#([a-z0-9]+(?:-[a-z0-9]+)*)\}$")


def heading_anchor(text: str) -> str:
    """Anchor for a heading: an explicit '{#anchor}' at its end, else lowercase with
    non-alphanumeric runs -> '-', no edge '-'."""
    # ASCII only on purpose: a translated heading names the English anchor explicitly
    # ('## 关联 ID 与标志 {#correlation-ids-and-flags}'), so ?section= links land in every language.
    return heading_parts(text)[1]


def heading_parts(text: str) -> tuple[str, str]:
    """(title as shown, anchor) of a heading's text."""
    explicit = _EXPLICIT.match(text.strip())
    if explicit:
        return explicit.group(1), explicit.group(2)
    return text, re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def body_anchors(body: str) -> tuple[str, ...]:
    """Anchors of every markdown heading in body, skipping fenced code blocks."""
    anchors: list[str] = []
    fence: str | None = None
    for line in body.split("\n"):
        match = _FENCE.match(line)
        if match:
            # A '# comment' inside ```bash is not a heading.
            if fence is None:
                fence = match.group(1)
            elif match.group(1) == fence:
                fence = None
            continue
        if fence is not None:
            continue
        heading = _HEADING.match(line)
        if heading:
            anchor = heading_anchor(heading.group(2))
            if anchor and anchor not in anchors:
                anchors.append(anchor)
    return tuple(anchors)


def display_path(path: Path) -> str:
    """Repo-relative path when possible: shorter and the same on every machine."""
    try:
        return path.resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(path)


def _fail(path: Path, field: str, message: str) -> ContentError:
    return ContentError(f"{display_path(path)}: field '{field}': {message}")


def _text(meta: dict[str, Any], key: str, path: Path, *, required: bool = True) -> str:
    value = meta.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, key, "must be a non-empty string")
    return value.strip()


def _self_checks(raw: Any, path: Path) -> tuple[SelfCheck, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _fail(path, "check", "must be a list of {question, options, answer, explain[, source]}")
    checks: list[SelfCheck] = []
    for i, entry in enumerate(raw):
        where = f"check[{i}]"
        if not isinstance(entry, dict):
            raise _fail(path, where, "must be a mapping")
        unknown = set(entry) - {"question", "options", "answer", "explain", "source"}
        if unknown:
            raise _fail(path, f"{where}.{sorted(unknown)[0]}", "unknown key")
        question = entry.get("question")
        if not isinstance(question, str) or not question.strip():
            raise _fail(path, f"{where}.question", "must be a non-empty string")
        options = entry.get("options")
        if (
            not isinstance(options, list)
            or len(options) < 2
            or not all(isinstance(o, str) and o.strip() for o in options)
        ):
            raise _fail(path, f"{where}.options", "must be a list of at least 2 non-empty strings")
        answer = entry.get("answer")
        # bool is an int in Python; 'answer: true' is a typo, not index 1.
        if isinstance(answer, bool) or not isinstance(answer, int) or not 0 <= answer < len(options):
            raise _fail(path, f"{where}.answer", f"must be an option index 0..{len(options) - 1}")
        explain = entry.get("explain")
        if not isinstance(explain, str) or not explain.strip():
            raise _fail(path, f"{where}.explain", "must be a non-empty string")
        source = entry.get("source", "")
        if not isinstance(source, str):
            raise _fail(path, f"{where}.source", "must be a string naming where the fact comes from")
        checks.append(SelfCheck(question.strip(), tuple(o.strip() for o in options), answer, explain.strip(), source.strip()))
    return tuple(checks)


def parse_lesson(path: Path) -> Lesson:
    """Read and validate one lesson file (cross-lesson checks are in load_lessons)."""
    try:
        meta, body = split_front_matter(path.read_text(encoding="utf-8"))
    except FrontMatterError as exc:
        raise _fail(path, "front matter", str(exc)) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(path, "file", f"cannot be read: {exc}") from exc
    unknown = set(meta) - _KNOWN_KEYS
    if unknown:
        raise _fail(path, sorted(unknown)[0], f"unknown key (allowed: {', '.join(sorted(_KNOWN_KEYS))})")
    lesson_id = _text(meta, "id", path)
    if not ID_PATTERN.match(lesson_id):
        raise _fail(path, "id", f"{lesson_id!r} must be lowercase letters, digits and single '-'")
    live = meta.get("live")
    if live is False:
        live = None  # 'live: false' reads naturally as "no live exercise"
    if live is not None and not (isinstance(live, str) and LIVE_PATTERN.match(live)):
        raise _fail(path, "live", f"{live!r} must name a live exercise (lowercase letters, digits, '_') or be omitted")
    nxt = meta.get("next") or []
    if isinstance(nxt, str):
        nxt = [nxt]  # a single id is a harmless shorthand for a one-item list
    if not isinstance(nxt, list) or not all(isinstance(n, str) and n for n in nxt):
        raise _fail(path, "next", "must be a list of lesson ids")
    return Lesson(
        id=lesson_id,
        title=_text(meta, "title", path),
        summary=_text(meta, "summary", path, required=False),
        live=live,
        next=tuple(nxt),
        self_checks=_self_checks(meta.get("check"), path),
        body=body,
        anchors=body_anchors(body),
        path=path,
    )


def lessons_dir(lang: str = "en") -> Path:
    """English lessons sit in lessons/; a translation in lessons/<lang>/ (or its language pack's
    lessons/), same file names and ids."""
    if lang == "en":
        return LESSONS_DIR
    pack = language_pack(lang)
    return pack / "lessons" if pack is not None else LESSONS_DIR / lang


def load_lessons(directory: Path | str = LESSONS_DIR) -> list[Lesson]:
    """The NN-slug.md lessons in directory, ordered by NN; other notes there are not lessons."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ContentError(f"{display_path(directory)}: lessons folder not found")
    lessons = [parse_lesson(p) for p in sorted(directory.glob("[0-9][0-9]-*.md"))]
    seen: dict[str, Path] = {}
    for lesson in lessons:
        if lesson.id in seen:
            raise _fail(lesson.path, "id", f"{lesson.id!r} is also used by {display_path(seen[lesson.id])}")
        seen[lesson.id] = lesson.path
    for lesson in lessons:
        for target in lesson.next:
            if target not in seen:
                raise _fail(lesson.path, "next", f"unknown lesson id {target!r}")
    return lessons


def resolve_link(link: str, lessons: Iterable[Lesson]) -> tuple[Lesson, str]:
    """Turn 'lesson-id#anchor' into (Lesson, anchor); a bare id gives anchor ''."""
    if not isinstance(link, str) or not link.strip():
        raise LessonLinkError("lesson link must be a non-empty 'lesson-id#anchor' string")
    lesson_id, _, anchor = link.strip().partition("#")
    by_id = {lesson.id: lesson for lesson in lessons}
    lesson = by_id.get(lesson_id)
    if lesson is None:
        known = ", ".join(sorted(by_id)) or "none loaded"
        raise LessonLinkError(f"no lesson with id {lesson_id!r} (known: {known})")
    if anchor and anchor not in lesson.anchors:
        known = ", ".join(lesson.anchors) or "no headings"
        raise LessonLinkError(
            f"lesson {lesson_id!r} ({display_path(lesson.path)}) has no heading with anchor {anchor!r} (anchors: {known})"
        )
    return lesson, anchor


@dataclass(frozen=True)
class Translated:
    """The lessons to show in one language: its translation where there is one, English where not.

    `fallback` names the ids shown in English (every id when the language has no lessons folder),
    and `problems` says why a translated file was not used, so the page can tell the learner.
    """

    lang: str
    lessons: list[Lesson]
    fallback: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


def load_translated(lang: str, english: list[Lesson] | None = None) -> Translated:
    """English order and ids, with each lesson taken from lessons_dir(lang) when that file parses
    and has the same id; a missing or broken translation falls back to English, lesson by lesson.

    The English lessons are validated as a whole (load_lessons); a translated file is checked on
    its own, since a folder still being written may lack the lessons its `next` ids name.
    """
    english = load_lessons() if english is None else english
    if lang == "en":
        return Translated(lang, english)
    directory = lessons_dir(lang)
    if not directory.is_dir():
        return Translated(lang, english, tuple(lesson.id for lesson in english))
    found: dict[str, Lesson] = {}
    problems: list[str] = []
    for path in sorted(directory.glob("[0-9][0-9]-*.md")):
        try:
            lesson = parse_lesson(path)
        except ContentError as err:
            problems.append(str(err))
            continue
        found.setdefault(lesson.id, lesson)
    shown = [found.get(lesson.id, lesson) for lesson in english]
    fallback = tuple(lesson.id for lesson in english if lesson.id not in found)
    return Translated(lang, shown, fallback, tuple(problems))
