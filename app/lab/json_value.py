"""What a JSON report holds: the return type of the to_json() functions, which json.dumps writes as they are."""
from __future__ import annotations

JSON = dict[str, "JSON"] | list["JSON"] | str | int | float | bool | None
JSONObject = dict[str, JSON]
