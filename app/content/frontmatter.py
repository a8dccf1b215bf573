"""Split a markdown file into its YAML front matter and its body.

Kept apart from the lesson rules so the quiz bank or any other content file
can reuse it without pulling in lesson validation.
"""
from __future__ import annotations

from typing import Any

import yaml

from app.content import yaml_text
from app.lab.errors import BatchingLabError

FENCE = "---"


class FrontMatterError(BatchingLabError, ValueError):
    """The file has no, unterminated or unparsable front matter."""


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """Return (front matter mapping, body) for text that starts with a '---' block."""
    # A BOM or Windows line endings from an editor must not hide the fence.
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or lines[0].strip() != FENCE:
        raise FrontMatterError("file must start with a '---' front matter block")
    end = next((k for k, line in enumerate(lines[1:], start=1) if line.strip() == FENCE), None)
    if end is None:
        raise FrontMatterError("front matter has no closing '---' line")
    raw = "\n".join(lines[1:end])
    try:
        data = yaml_text.parse(raw)
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"front matter is not valid YAML: {exc}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontMatterError("front matter must be a mapping of keys to values")
    body = "\n".join(lines[end + 1 :]).lstrip("\n")
    return data, body
