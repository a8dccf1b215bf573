"""One lab set-up (deployment settings + traffic + optional own text) and its URL form.

The live lab keeps this in the page's query string, so a copied link reproduces the
set-up exactly; every check here runs before anything is loaded or sent.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from app.lab.deployment import FIELD, FIELDS, LabSettings, field_problems, values_from_query
from app.lab.problems import Problem
from app.lab.records import Traffic
from app.lab.scenario.alphabet import AlphabetError, to_symbols
from app.lab.scenario.scenario import Scenario
from app.recogniser.engine.presets import PRESETS

# A query key a link made before a rename may still carry: the field it names now.
OLD_QUERY_KEYS = {"length": "chunks", "staggered": "spread_think"}
TEXT_SEPARATOR = "|"  # not in the alphabet, so it can never be part of an utterance
# The traffic's ranges, read from the one table of the lab's set-up (app/lab/deployment/setup_table.py).
LIMITS = {f.name: f.limits for f in FIELDS if f.part == "traffic" and f.low is not None}


@dataclass(frozen=True)
class LabSetup:
    settings: LabSettings = field(default_factory=LabSettings)
    traffic: Traffic = field(default_factory=Traffic)
    texts: tuple[str, ...] = ()  # own utterances, one per session; empty means random words

    @classmethod
    def from_preset(cls, name: str) -> LabSetup:
        preset = PRESETS[name]
        return cls(preset.settings, preset.traffic)

    def preset_name(self) -> str | None:
        """The preset this set-up is exactly, if any (predictions are filed under it)."""
        for name, preset in PRESETS.items():
            if not self.texts and preset.settings == self.settings and preset.traffic == self.traffic:
                return name
        return None

    def text_problems(self) -> list[Problem]:
        """utterance_bad_character {number, text, char, position} or utterance_empty_text {number, text}."""
        out = []
        for number, text in enumerate(self.texts, start=1):
            try:
                to_symbols(text)
            except AlphabetError as err:
                out.append(Problem(f"utterance_{err.code}", {"number": number, "text": text, **err.values}))
        return out

    def traffic_problems(self) -> list[Problem]:
        out = field_problems(self.traffic, "traffic", self.settings.scheduler)
        most = FIELD["sessions"].limits[1]
        if len(self.texts) > most:
            out.append(Problem("too_many_utterances", {"high": most, "value": len(self.texts)}))
        return out

    def problems(self) -> list[Problem]:
        """Everything that must be fixed before this set-up may be applied or run."""
        return self.settings.problems() + self.traffic_problems() + self.text_problems()

    @property
    def session_count(self) -> int:
        return len(self.texts) or self.traffic.sessions

    def scenario(self, model: str) -> Scenario:
        return self.traffic.scenario(model, list(self.texts) or None)

    def to_query(self) -> dict[str, str]:
        query = self.settings.to_query()
        for f in fields(Traffic):
            value = getattr(self.traffic, f.name)
            query[f.name] = str(value).lower() if isinstance(value, bool) else str(value)
        if self.texts:
            query["text"] = TEXT_SEPARATOR.join(self.texts)
        return query

    @classmethod
    def from_query(cls, query: Mapping[str, Any]) -> LabSetup:
        """A set-up from a query string; unreadable values keep their defaults."""
        settings = LabSettings.from_query(dict(query))
        values = values_from_query(Traffic, {**{f: query[old] for old, f in OLD_QUERY_KEYS.items() if old in query}, **query})
        raw_text = query.get("text") or ""
        texts = tuple(t.strip() for t in raw_text.split(TEXT_SEPARATOR) if t.strip())
        return cls(settings, replace(Traffic(), **values), texts)


def parse_texts(raw: str) -> tuple[str, ...]:
    """Utterances typed one per line (blank lines ignored), upper-cased as the recogniser reads them."""
    return tuple(line.strip().upper() for line in raw.splitlines() if line.strip())


QUERY_KEYS = (*(f.name for f in FIELDS), "text")
