"""What the user knows about their clients and server (Expectations), and the server versions the
review tells apart. None means "not stated", never a guess."""
from __future__ import annotations

import dataclasses as dc
import re

from app.lab.problems import LabError, Problem

MAX_CLIENT_ID = 2**64 - 1  # the client API's sequence_id is a uint64 (0: no sequence)
# The server version each release reports (server build.py's version map at the release): the lab's
# r24.10 is 2.51.0; r25.01, which checks a request's correlation ID type and sizes a string CORRID
# to its ID, is 2.54.0.
LAB_TRITON_VERSION = "2.51.0"
CORRID_TYPE_CHECK_SINCE = "2.54.0"
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


def parse_version(text: str | None) -> tuple[int, int, int] | None:
    """(major, minor, patch) of a server version such as "2.51.0"; None for anything else (a
    release name such as "24.10" is not a server version)."""
    match = _VERSION.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch)


@dc.dataclass(frozen=True)
class Expectations:
    """What the user knows about their clients and server; None means "not stated", never a guess.

    think_ms: longest pause between two requests of one session (client think time).
    sessions: sessions open at once at peak.
    max_corrid: largest integer correlation ID the clients send (so: they send integer IDs).
    string_corrid_length: longest string correlation ID the clients send, in UTF-8 bytes (so: they
        send string IDs). Both may be given when some clients send each kind.
    backend: the backend that serves the model; overrides the config's backend and platform (needed
        when the config names neither).
    gpus: GPUs the server's instances can use (0 on a CPU-only server); needed only when an
        instance group leaves its devices to Triton (KIND_AUTO, or KIND_GPU without `gpus`).
    triton_version: the server version the model runs on ("2.51.0"); needed by the checks whose
        pitfall depends on the release.
    """

    think_ms: float | None = None
    sessions: int | None = None
    max_corrid: int | None = None
    string_corrid_length: int | None = None
    backend: str | None = None
    gpus: int | None = None
    triton_version: str | None = None

    @property
    def version(self) -> tuple[int, int, int] | None:
        return parse_version(self.triton_version)

    def problems(self) -> list[Problem]:
        """Figures that cannot be right, as codes (words: app/text/problems.py)."""
        out = []
        lows = {"think_ms": 0, "sessions": 1, "max_corrid": 1, "string_corrid_length": 1, "gpus": 0}
        for name, low in lows.items():
            value = getattr(self, name)
            if value is not None and value < low:
                out.append(Problem("checker_expectation_low", {"name": name, "low": low, "value": value}))
        if self.max_corrid is not None and self.max_corrid > MAX_CLIENT_ID:
            out.append(Problem("checker_corrid_above_uint64", {"value": self.max_corrid, "high": MAX_CLIENT_ID}))
        if self.triton_version is not None and self.version is None:
            out.append(Problem("checker_triton_version_format", {"value": self.triton_version, "example": LAB_TRITON_VERSION,
                                                                 "later": CORRID_TYPE_CHECK_SINCE}))
        return out

    def check(self) -> None:
        problems = self.problems()
        if problems:
            raise LabError(problems)


def at_least(expect: Expectations, version: str) -> bool | None:
    """Whether the stated server version is `version` or later; None when none is stated."""
    stated, wanted = expect.version, parse_version(version)
    if wanted is None:
        raise ValueError(f"not a server version: {version!r}")
    return None if stated is None else stated >= wanted
