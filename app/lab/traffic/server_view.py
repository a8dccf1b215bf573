"""The server a run talks to, as a Protocol both features' drivers take."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import tritonclient.http as http


class ServerView(Protocol):
    """What a run needs of a server: a LabServer, or a view of one (sticky routing's, through its proxy).

    The recogniser's runs (app/recogniser/engine/driver.py) and the generator's (app/generation/engine/driver.py) both take one."""

    @property
    def url(self) -> str: ...
    @property
    def grpc_url(self) -> str: ...
    @property
    def metrics_url(self) -> str: ...
    @property
    def trace_dir(self) -> Path | None: ...
    @property
    def is_embedded(self) -> bool: ...
    @property
    def log_path(self) -> Path | None: ...
    def client(self, timeout_s: float = 60.0) -> http.InferenceServerClient: ...
