"""A pseudo-locale built from the English sources, as Android's en-XA or Windows' qps-ploc:
every letter accented, every line bracketed and about a third longer, every `{field:kind}`,
`%{plotly}` field, code span, fenced block, tag and link target kept as it is.

"[Ŝţàŕţ ţĥé šéŕvéŕ ~~~~]": a learner of no language, but one whose text is never English. So a
page walked in it that still shows an ASCII word of the English sources shows a string that
never went through a catalog, a lesson file or the quiz's translation (english_left names it).

The pack is a language pack as app.i18n reads one (TRITON_LAB_LOCALES): <root>/qps/ holds
LC_MESSAGES/messages.{po,mo}, lessons/, bank.yaml and glossary.yaml. No Python module names it.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache
from pathlib import Path

import yaml
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import write_po

from app.content.frontmatter import split_front_matter
from app.content.lessons import heading_anchor, lessons_dir, load_lessons
from app.i18n import DOMAIN, LOCALES_ENV, SOURCE_LANGUAGE, catalogs, languages, native_name
from app.lab.paths import MODEL_REPOSITORY
from app.quiz.bank import load_bank
from app.quiz.translation import translate
from tests.i18n.text_checks import _prose, kept_names

LANG = "qps"  # Windows' pseudo-locale; a code Babel does not know, so the app's fallbacks are walked too
__all__ = ["LANG", "LOCALES_ENV", "build_pack", "english_left", "pseudo", "accent"]

_LETTERS = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "àƀçðéƒĝĥîĵķļɱñöþǫŕšţûṽŵẋýžÅƁÇÐÉƑĜĤÎĴĶĻṀÑÖÞǪŔŠŢÛṼŴẊÝŽ",
)
# What a translator leaves alone: fenced and inline code, template and plotly fields ({x:count},
# %{customdata[1]}, a heading's {#anchor}), tags (<br>), link targets and addresses.
_KEPT = re.compile(r"```.*?```|`[^`\n]*`|<(code|pre)\b[^>]*>.*?</\1>|%?\{[^{}]*\}|<[^<>\n]+>|\]\([^()\s]*\)|https?://\S+", re.S)
# A markdown block's marker stays in front of the brackets: headings, list items, quotes.
_BLOCK = re.compile(r"^(\s*(?:#{1,6}\s+|[-*+]\s+|\d+\.\s+|>\s*)*)(.*)$", re.S)
_ANCHOR = re.compile(r"(\s*\{#[a-z0-9-]+\})$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_ASCII_WORD = re.compile(r"[A-Za-z]{2,}")
# Triton's own words quoted in a sentence ('unexpected number of string elements') and command-line
# flags (--no-one-instance) stay as they are in every language.
_QUOTED = re.compile(r"'[^'\n]*'|‘[^’\n]*’|“[^”\n]*”|\"[^\"\n]*\"|(?<![\w-])--?[a-z][\w-]*")


def accent(text: str) -> str:
    """Every letter outside kept spans accented; a link to this page in English goes to LANG's."""
    out, end = [], 0
    for kept in _KEPT.finditer(text):
        out.append(text[end:kept.start()].translate(_LETTERS))
        span = kept.group(0)
        out.append(span.replace(f"lang={SOURCE_LANGUAGE}", f"lang={LANG}") if span.startswith("](") else span)
        end = kept.end()
    out.append(text[end:].translate(_LETTERS))
    return "".join(out)


def _has_words(text: str) -> bool:
    return bool(re.search(r"[A-Za-z]", _KEPT.sub("", text)))


def _line(line: str, anchors: bool) -> str:
    block = _BLOCK.match(line)
    marker, content = block.group(1), block.group(2)
    if not _has_words(content):
        return line
    if anchors and marker.lstrip().startswith("#") and not _ANCHOR.search(content):
        # A translated heading names the English anchor, so ?section= links land in every language.
        content = f"{content} {{#{heading_anchor(content)}}}"
    if content.lstrip().startswith("|"):  # a table row: its cells, no brackets that would join them
        return marker + accent(content)
    anchor = _ANCHOR.search(content)
    tail = anchor.group(1) if anchor else ""
    content = content[: len(content) - len(tail)]
    padding = "~" * max(1, math.ceil(len(content) / 4))  # with the brackets, about a third longer
    return f"{marker}[{accent(content)} {padding}]{tail}"


def pseudo(text: str, *, anchors: bool = False) -> str:
    """The pseudo-translation of a message or a markdown body, line by line; fenced blocks kept.
    anchors: a lesson body, whose headings keep their English anchors."""
    out, fence = [], None
    for line in text.split("\n"):
        opened = _FENCE.match(line)
        if opened and fence is None:
            fence = opened.group(1)
            out.append(line)
        elif fence is not None:
            if opened and opened.group(1) == fence:
                fence = None
            out.append(line)
        else:
            out.append(_line(line, anchors))
    return "\n".join(out)


def _catalog(pack: Path) -> None:
    template = catalogs.read(catalogs.TEMPLATE)
    catalog = Catalog(project="triton-batching-lab pseudo-locale", fuzzy=False)
    for message in template:
        if message.id:
            ids = message.id if isinstance(message.id, tuple) else None
            catalog.add(message.id, tuple(pseudo(i) for i in ids) if ids else pseudo(message.id), context=message.context)
    folder = pack / "LC_MESSAGES"
    folder.mkdir(parents=True)
    with (folder / f"{DOMAIN}.po").open("wb") as fh:
        write_po(fh, catalog, width=100)
    with (folder / f"{DOMAIN}.mo").open("wb") as fh:
        write_mo(fh, catalog)


def _lessons(pack: Path) -> None:
    folder = pack / "lessons"
    folder.mkdir()
    for lesson in load_lessons():
        meta, body = split_front_matter(lesson.path.read_text(encoding="utf-8"))
        for key in ("title", "summary"):
            if key in meta:
                meta[key] = pseudo(meta[key])
        for check in meta.get("check") or []:
            check["question"], check["explain"] = pseudo(check["question"]), pseudo(check["explain"])
            check["options"] = [pseudo(o) for o in check["options"]]
        front = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=10_000)
        (folder / lesson.path.name).write_text(f"---\n{front}---\n{pseudo(body, anchors=True)}", encoding="utf-8")


def _bank(pack: Path) -> None:
    items = {}
    for item in load_bank():
        words: dict = {"prompt": pseudo(item.prompt)}
        for key in ("explain", "unit"):
            if getattr(item, key) is not None:
                words[key] = pseudo(getattr(item, key))
        if item.options:
            words["options"] = [{"text": pseudo(o.text), **({"explain": pseudo(o.explain)} if o.explain.strip() else {})}
                                for o in item.options]
        items[item.id] = words
    (pack / "bank.yaml").write_text(yaml.safe_dump({"items": items}, allow_unicode=True, sort_keys=False), encoding="utf-8")


def _glossary(pack: Path) -> None:
    from app.content.glossary import load_glossary

    terms = {term.id: accent(term.en) for term in load_glossary()}
    (pack / "glossary.yaml").write_text(yaml.safe_dump({"terms": terms}, allow_unicode=True), encoding="utf-8")


def build_pack(root: Path) -> Path:
    """Write the pseudo-locale's pack under root/LANG from the English sources; returns root,
    the value for TRITON_LAB_LOCALES."""
    pack = root / LANG
    _catalog(pack)
    _lessons(pack)
    _bank(pack)
    _glossary(pack)
    return root


# ---------------------------------------------------------------------------------- English left


def _sources() -> list[str]:
    """Every English text a learner can be shown: the msgids, the lessons and the quiz."""
    texts = [i for m in catalogs.read(catalogs.TEMPLATE) if m.id for i in (m.id if isinstance(m.id, tuple) else (m.id,))]
    for lesson in load_lessons():
        texts += [lesson.title, lesson.summary, lesson.body, *[t for c in lesson.self_checks for t in (c.question, *c.options, c.explain)]]
    for item in load_bank():
        texts += [t for t in (item.prompt, item.explain, item.unit, *[x for o in item.options for x in (o.text, o.explain)]) if t]
    return texts


def _plain(text: str) -> str:
    """text without code, fields, quoted Triton words, flags and kept names: what a translator translates."""
    return _prose(_QUOTED.sub(" ", _KEPT.sub(" ", text)))


def _ascii_words(text: str) -> set[str]:
    return {w.lower() for w in _ASCII_WORD.findall(_plain(text))}


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """The words of the English sources, outside code and fields: what an untranslated string is made of."""
    return frozenset(w for text in _sources() for w in _ascii_words(text))


def _translated_texts(lang: str) -> list[str]:
    catalog = catalogs.read(catalogs.LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po", lang)
    texts = [s for m in catalog if m.id and m.string for s in (m.string if isinstance(m.string, tuple) else (m.string,))]
    for lesson in load_lessons(lessons_dir(lang)):
        texts += [lesson.title, lesson.summary, lesson.body, *[t for c in lesson.self_checks for t in (c.question, *c.options, c.explain)]]
    for item in translate(load_bank(), lang):
        texts += [t for t in (item.prompt, item.explain, item.unit, *[x for o in item.options for x in (o.text, o.explain)]) if t]
    return texts


@lru_cache(maxsize=1)
def kept_words() -> frozenset[str]:
    """English-looking words every real translation keeps as they are (Triton, GPU, direct, ...): names,
    not prose. Derived from the catalogs, lessons and quizzes of the languages the tree has, plus the
    glossary's kept names, each language's own name and the lab's model names."""
    real = [lang for lang in languages() if lang not in (SOURCE_LANGUAGE, LANG)]
    kept = set.intersection(*[{w for t in _translated_texts(lang) for w in _ascii_words(t)} for lang in real]) if real else set()
    names = (*kept_names(), *map(native_name, languages()), *(p.name for p in MODEL_REPOSITORY.iterdir() if p.is_dir()))
    kept |= {w.lower() for name in names for w in _ASCII_WORD.findall(name)}
    return frozenset(kept)


def english_left(text: str) -> list[str]:
    """The words of text that are English sources' words left untranslated (not code, not a kept name)."""
    found = _ASCII_WORD.findall(_plain(text))
    return [w for w in found if w.lower() in english_words() and w.lower() not in kept_words()]
