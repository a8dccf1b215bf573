"""Two configs side by side: the lines of config.pbtxt that change from one to the other, with context,
for any pair of deployments (the presenter's demos of both families show their change this way)."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.lab.deployment import deployments

if TYPE_CHECKING:
    from tritonclient.grpc import model_config_pb2 as mc


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "context", "removed", "added" or "gap" (lines left out between hunks)
    text: str


def config_lines(config: mc.ModelConfig) -> list[str]:
    """A config's config.pbtxt text, line by line, as a diff reads it."""
    return deployments.to_pbtxt(config).splitlines()


def diff_lines(a: list[str], b: list[str], context: int = 2) -> list[DiffLine]:
    """The lines that change from a to b, with `context` lines around each change (any two configs' texts)."""
    out: list[DiffLine] = []
    for line in difflib.unified_diff(a, b, lineterm="", n=context):
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            if out:
                out.append(DiffLine("gap", "..."))
            continue
        kind = {"-": "removed", "+": "added"}.get(line[:1], "context")
        out.append(DiffLine(kind, line[1:]))
    return out


def changed_lines(lines: list[DiffLine]) -> tuple[list[str], list[str]]:
    """(removed, added) lines of a diff made without context."""
    return [d.text for d in lines if d.kind == "removed"], [d.text for d in lines if d.kind == "added"]
