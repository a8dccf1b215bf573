"""Words of the quiz bank in another language: quiz/bank.<lang>.yaml, keyed by item id.

Only words are translated: prompt, options' text and explain, the item's explain and unit.
Ids, types, keys, answers, tolerances, lesson links and sources come from quiz/bank.yaml, so
grading, shuffling and stored answers (option keys) are the same in every language.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from app.content import yaml_text
from app.i18n import language_pack
from app.lab.paths import QUIZ_DIR
from app.quiz.bank import Bank, BankError, InvalidField, Item

_ITEM_KEYS = {"prompt", "options", "explain", "unit"}
_OPTION_KEYS = {"text", "explain"}


def translation_path(lang: str) -> Path:
    """quiz/bank.<lang>.yaml, or bank.yaml in the language's pack."""
    pack = language_pack(lang)
    return pack / "bank.yaml" if pack is not None else QUIZ_DIR / f"bank.{lang}.yaml"


def translate(bank: Bank, lang: str, path: Path | None = None) -> Bank:
    """bank with its words in lang; BankError lists every item whose shape differs from English."""
    if lang == "en":
        return bank
    path = path or translation_path(lang)
    try:
        data = yaml_text.parse(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BankError(path, [InvalidField("", "file", f"not found: no quiz in {lang!r}")]) from None
    except yaml.YAMLError as exc:
        raise BankError(path, [InvalidField("", "file", f"not valid YAML: {exc}")]) from exc
    raw = data.get("items") if isinstance(data, dict) else None
    if not isinstance(raw, dict):
        raise BankError(path, [InvalidField("", "items", "the file must map 'items' to {item id: words}")])
    problems: list[InvalidField] = []
    items = []
    for item in bank:
        words = raw.get(item.id)
        if not isinstance(words, dict):
            problems.append(InvalidField(f"'{item.id}'", "item", "missing"))
            continue
        items.append(_item(item, words, problems))
    problems += [InvalidField(f"'{extra}'", "item", "not in quiz/bank.yaml") for extra in raw if bank.get(extra) is None]
    if problems:
        raise BankError(path, problems)
    return Bank(tuple(items), bank.path)


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _item(item: Item, words: dict[str, object], problems: list[InvalidField]) -> Item:
    label = f"'{item.id}'"
    for key in sorted(set(words) - _ITEM_KEYS):
        problems.append(InvalidField(label, key, "unknown key"))
    prompt = _text(words.get("prompt"))
    if prompt is None:
        problems.append(InvalidField(label, "prompt", "must be a non-empty string"))
    changes: dict[str, Any] = {"prompt": prompt or item.prompt}  # replace() checks each against its field's type
    for key in ("explain", "unit"):
        theirs, ours = getattr(item, key), _text(words.get(key))
        if (theirs is None) != (ours is None):
            problems.append(InvalidField(label, key, "must be given exactly when the English item has it"))
        changes[key] = ours if theirs is not None else None
    options = words.get("options", [])
    if not isinstance(options, list) or len(options) != len(item.options):
        problems.append(InvalidField(label, "options", f"must list the {len(item.options)} options in the English order"))
        return replace(item, **changes)
    translated = []
    for option, entry in zip(item.options, options, strict=True):
        where = f"options[{option.key}]"
        entry = entry if isinstance(entry, dict) else {}
        for key in sorted(set(entry) - _OPTION_KEYS):
            problems.append(InvalidField(label, f"{where}.{key}", "unknown key"))
        text, explain = _text(entry.get("text")), _text(entry.get("explain"))
        if text is None:
            problems.append(InvalidField(label, f"{where}.text", "must be a non-empty string"))
        if (option.explain.strip() != "") != (explain is not None):
            problems.append(InvalidField(label, f"{where}.explain", "must be given exactly when the English option has one"))
        translated.append(replace(option, text=text or option.text, explain=explain or option.explain))
    changes["options"] = tuple(translated)
    return replace(item, **changes)
