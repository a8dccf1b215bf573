"""The course's fixed terms (lessons/glossary.yaml): one English term, its word in each language,
and the English names Triton engineers keep saying (config keys, Triton's own names).

Lessons, quiz and UI use exactly these words; the Home page shows the table in the learner's language.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from app.content import yaml_text
from app.i18n import language_pack, languages
from app.lab.errors import BatchingLabError
from app.lab.paths import LESSONS_DIR

GLOSSARY_PATH = LESSONS_DIR / "glossary.yaml"


class GlossaryError(BatchingLabError, ValueError):
    """glossary.yaml is malformed; the message names the entry and the field."""


@dataclass(frozen=True)
class Term:
    id: str
    en: str
    words: dict[str, str]  # language -> the term in that language (besides English)
    keep: tuple[str, ...] = ()  # English names kept as they are in every language

    def word(self, lang: str) -> str:
        """The term in lang; English when lang is English or the term has no word in lang."""
        return self.words.get(lang, self.en) if lang != "en" else self.en


def load_glossary(path: Path | str = GLOSSARY_PATH) -> list[Term]:
    path = Path(path)
    try:
        data = yaml_text.parse(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise GlossaryError(f"{path.name}: cannot be read: {exc}") from exc
    raw = data.get("terms") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        raise GlossaryError(f"{path.name}: 'terms' must be a list of {{id, en, <lang>, keep}}")
    terms: list[Term] = []
    seen: set[str] = set()
    for index, entry in enumerate(raw):
        where = f"{path.name}: terms[{index}]"
        if not isinstance(entry, dict):
            raise GlossaryError(f"{where}: must be a mapping")
        term_id, en = entry.get("id"), entry.get("en")
        if not isinstance(term_id, str) or not term_id or term_id in seen:
            raise GlossaryError(f"{where}: field 'id' must be a unique non-empty string")
        if not isinstance(en, str) or not en.strip():
            raise GlossaryError(f"{where} ({term_id}): field 'en' must be a non-empty string")
        keep = entry.get("keep") or []
        if not isinstance(keep, list) or not all(isinstance(k, str) and k for k in keep):
            raise GlossaryError(f"{where} ({term_id}): field 'keep' must be a list of names")
        words = {k: v for k, v in entry.items() if k not in ("id", "en", "keep")}
        if not all(isinstance(v, str) and v.strip() for v in words.values()):
            raise GlossaryError(f"{where} ({term_id}): every language's word must be a non-empty string")
        words = {k: v.strip() for k, v in words.items()}
        seen.add(term_id)
        terms.append(Term(term_id, en.strip(), words, tuple(keep)))
    return _with_packs(terms)


def _with_packs(terms: list[Term]) -> list[Term]:
    """Each language pack's words (its glossary.yaml: `terms: {term id: word}`) added to the terms."""
    for lang in languages():
        pack = language_pack(lang)
        path = pack / "glossary.yaml" if pack is not None else None
        if path is None or not path.exists():
            continue
        try:
            data = yaml_text.parse(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise GlossaryError(f"{path}: cannot be read: {exc}") from exc
        words = data.get("terms") if isinstance(data, dict) else None
        if not isinstance(words, dict) or not all(isinstance(v, str) and v.strip() for v in words.values()):
            raise GlossaryError(f"{path}: 'terms' must map each term id to its non-empty word in {lang}")
        unknown = sorted(set(words) - {term.id for term in terms})
        if unknown:
            raise GlossaryError(f"{path}: no term with id {unknown[0]!r}")
        for term in terms:
            if term.id in words:
                term.words.setdefault(lang, words[term.id].strip())
    return terms
