"""Read dataclass fields back from a URL query string, so a shared link rebuilds a set-up."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any


def values_from_query(cls: type, query: Mapping[str, Any]) -> dict[str, Any]:
    """{field: value} for each field of dataclass `cls` present in `query`, coerced to the
    field's type; a value that does not parse is left out, so the field keeps its default. Both stay untyped:
    a query's values are whatever its reader parsed, and these go to `cls(**values)`, each of its field's type,
    which only this run-time coercion knows."""
    values: dict[str, Any] = {}
    for f in fields(cls):
        raw = query.get(f.name)
        if raw is None:
            continue
        raw = raw[0] if isinstance(raw, list) else raw
        try:
            if f.type in (bool, "bool"):
                values[f.name] = str(raw).lower() in ("1", "true", "yes", "on")
            elif f.type in (int, "int"):
                values[f.name] = int(raw)
            elif f.type in (float, "float"):
                values[f.name] = float(raw)
            else:
                values[f.name] = str(raw)
        except ValueError:
            continue
    return values
