"""Build the translation catalogs with Babel: extract, update, compile, check, merge.

    python -m app.i18n.catalogs extract    # app/**.py -> locale/messages.pot
    python -m app.i18n.catalogs update     # pot -> locale/<lang>/LC_MESSAGES/messages.po (keeps translations)
    python -m app.i18n.catalogs compile    # .po -> .mo, shipped with the package
    python -m app.i18n.catalogs check      # untranslated, fuzzy, placeholder or stale .mo problems; exit 1 if any
    python -m app.i18n.catalogs merge zh FRAGMENT.po...   # copy translations from fragment catalogs
    python -m app.i18n.catalogs all        # extract, update, compile, check
    python -m app.i18n.catalogs todo zh FRAGMENT.po FILE.py...  # add FILEs' strings to a fragment to translate

The tests run check(): a string marked in the code but missing from a catalog fails CI. A
translation equal to its English is no translation, unless the message has no words outside its
fields ('{n:count}·{m:count}') or the translator says the English is kept, in a comment of the
entry starting with 'kept:' ('# kept: the product's name').
"""
from __future__ import annotations

import io
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir, extract_from_file
from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po, write_po

from app.i18n import DOMAIN, LOCALE_DIR, SOURCE_LANGUAGE

APP_DIR = LOCALE_DIR.parents[1]
TEMPLATE = LOCALE_DIR / f"{DOMAIN}.pot"
# Words.plural(singular, plural, n) is ngettext by another name.
KEYWORDS = {**DEFAULT_KEYWORDS, "plural": (1, 2)}
METHOD_MAP = [("**.py", "python")]
_FIELD = re.compile(r"\{([^{}:!]*)(?:![rsa])?(?::([^{}]*))?\}")


def extract() -> Catalog:
    """Every marked string under app/, with where it was found."""
    catalog = Catalog(project="triton-batching-lab", fuzzy=False)
    for filename, lineno, message, comments, context in extract_from_dir(
        APP_DIR, METHOD_MAP, keywords=KEYWORDS, comment_tags=("TRANSLATORS:",), strip_comment_tags=True
    ):
        catalog.add(message, None, [(f"app/{filename}", lineno)], auto_comments=comments, context=context)
    return catalog


def _po(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def translated_languages() -> list[str]:
    return sorted(p.parent.parent.name for p in LOCALE_DIR.glob(f"*/LC_MESSAGES/{DOMAIN}.po") if p.parent.parent.name != SOURCE_LANGUAGE)


def read(path: Path, lang: str | None = None) -> Catalog:
    with path.open("rb") as fh:
        return read_po(fh, locale=lang)


def write(catalog: Catalog, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=100, sort_output=False, omit_header=False, ignore_obsolete=True)
    path.write_bytes(buffer.getvalue())


def update(template: Catalog) -> None:
    for lang in translated_languages():
        catalog = read(_po(lang), lang)
        catalog.update(template, no_fuzzy_matching=True)
        write(catalog, _po(lang))


def compile_all() -> None:
    for lang in translated_languages():
        catalog = read(_po(lang), lang)
        with _po(lang).with_suffix(".mo").open("wb") as fh:
            write_mo(fh, catalog, use_fuzzy=False)


def merge(lang: str, fragments: list[Path]) -> int:
    """Copy non-empty translations from fragment .po files into lang's catalog; returns how many."""
    catalog = read(_po(lang), lang) if _po(lang).exists() else Catalog(locale=lang)
    copied = 0
    for fragment in fragments:
        for message in read(fragment, lang):
            if not message.id or not message.string:
                continue
            mine = catalog.get(message.id, message.context)
            if mine is None:
                catalog.add(message.id, message.string, message.locations, context=message.context)
            else:
                mine.string = message.string
            copied += 1
    write(catalog, _po(lang))
    return copied


def todo(lang: str, fragment: Path, files: list[Path]) -> int:
    """Add the marked strings of files to a fragment catalog of lang (translations already made kept
    or taken from lang's catalog); returns how many still have no translation."""
    catalog = read(fragment) if fragment.exists() else Catalog(project="triton-batching-lab fragment", fuzzy=False)
    known = read(_po(lang), lang) if _po(lang).exists() else Catalog()
    for path in files:
        for lineno, message, _comments, context in extract_from_file("python", str(path), keywords=KEYWORDS):
            if catalog.get(message, context) is None:
                found = known.get(message, context)
                catalog.add(message, found.string if found is not None else None, [(str(path), lineno)], context=context)
    write(catalog, fragment)
    return sum(1 for m in catalog if m.id and not (m.string if not isinstance(m.string, tuple) else all(m.string)))


def fields(text: str | tuple[str, ...] | list[str]) -> set[tuple[str, str]]:
    """The {name:kind} fields of a template: a translation must keep the same ones."""
    texts = tuple(text) if isinstance(text, (tuple, list)) else (text,)
    return {(m.group(1), m.group(2) or "") for t in texts if t for m in _FIELD.finditer(t)}


_KEPT_NOTE = "kept:"
# What no language translates: template and plotly fields, tags, code spans.
_NOT_WORDS = re.compile(r"%?\{[^{}]*\}|<[^<>]+>|`[^`]*`")
# A word of prose: letters (an apostrophe or hyphen inside), punctuation after; not an identifier (async_infer).
_WORD = re.compile(r"^[^\W\d_]+(?:['’-][^\W\d_]+)*[.,:;!?)]*$")


def same_as_english(message: Message, english: str | Sequence[str]) -> bool:
    """Whether a translation is the English msgid itself, in any form, where the English has words
    to translate and no 'kept:' comment says it stays English."""
    ids = (english,) if isinstance(english, str) else tuple(english)
    strings = (message.string or "",) if isinstance(message.string, str | None) else tuple(message.string)
    if any(c.strip().startswith(_KEPT_NOTE) for c in message.user_comments):
        return False
    return any(s == i and re.search(r"[^\W\d_]", _NOT_WORDS.sub("", i)) or _english_inside(s, i)
               for s, i in zip(strings, ids, strict=False))


def _english_inside(string: str, english: str) -> bool:
    """A translation holding a phrase of three or more words of the English, as it is, kept some English."""
    phrases = [p.strip(" .,:;") for p in _NOT_WORDS.split(english)]
    return any(len([w for w in p.split() if _WORD.match(w) and not w.isupper()]) >= 3 and p in string for p in phrases if p)


def _plain(value: str | tuple[str, ...] | list[str] | None) -> str | tuple[str, ...] | None:
    """A message's id or string as one comparable value: a plural one is its forms (read_mo gives
    lists, a .po file tuples)."""
    return tuple(value) if isinstance(value, (list, tuple)) else value


def problems() -> list[str]:
    """Everything that would show a learner English on a translated page, or break a template."""
    template = extract()
    out: list[str] = []
    for lang in translated_languages():
        catalog = read(_po(lang), lang)
        for message in template:
            if not message.id:
                continue
            where = f"{lang}: {message.locations[0][0]}:{message.locations[0][1]}" if message.locations else lang
            ours = catalog.get(message.id, message.context)
            strings = ours.string if ours is not None else None
            if ours is None or not strings or (isinstance(strings, tuple) and not all(strings)):
                out.append(f"{where}: untranslated {message.id!r}")
            elif ours.fuzzy:
                out.append(f"{where}: fuzzy {message.id!r}")
            elif same_as_english(ours, message.id):
                out.append(f"{where}: the translation is the English {message.id!r} (a '# {_KEPT_NOTE} why' comment keeps it)")
            elif fields(message.id) != fields(strings):
                out.append(f"{where}: placeholders differ in {message.id!r}: {sorted(fields(strings))}")
        mo = _po(lang).with_suffix(".mo")
        if not mo.exists():
            out.append(f"{lang}: {mo.name} missing: run python -m app.i18n.catalogs compile")
        else:
            with mo.open("rb") as fh:
                compiled = {_plain(m.id): _plain(m.string) for m in read_mo(fh) if m.id}
            wanted = {_plain(m.id): _plain(m.string) for m in catalog if m.id and m.string and not m.fuzzy}
            if compiled != wanted:
                out.append(f"{lang}: {mo.name} is out of date with {_po(lang).name}: run python -m app.i18n.catalogs compile")
    return out


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "all"
    if command in ("extract", "all"):
        template = extract()
        write(template, TEMPLATE)
        print(f"{len(template)} messages -> {TEMPLATE.relative_to(APP_DIR.parent)}")
    if command in ("update", "all"):
        update(read(TEMPLATE))
    if command == "todo":
        print(f"{todo(argv[1], Path(argv[2]), [Path(p) for p in argv[3:]])} untranslated in {argv[2]}")
        return 0
    if command == "merge":
        print(f"{merge(argv[1], [Path(p) for p in argv[2:]])} translations merged")
    if command in ("compile", "all", "merge"):
        compile_all()
    if command in ("check", "all"):
        found = problems()
        print("\n".join(found) or "catalogs complete")
        return 1 if found else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
