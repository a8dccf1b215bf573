"""What a JSON document holds (a report, an --input-data file): the return type of the to_json()
functions, which json.dumps writes as they are. Its containers are the read-only protocols, so a
list of ints or a dict of strings is a JSON value as it stands, without a copy."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JSON: TypeAlias = str | int | float | bool | None | Sequence["JSON"] | Mapping[str, "JSON"]
JSONObject: TypeAlias = dict[str, JSON]
