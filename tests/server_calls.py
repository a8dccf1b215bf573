"""One call to the server on a tritonclient client of its own, closed when the call returns.

A client left to the garbage collector closes its connection pool on whatever thread collects it
(gevent's close then warns in an unrelated test), so a test's one-off question closes its client
here, in the thread that asked."""
from __future__ import annotations

from typing import Any


def ask(server: Any, method: str, *args: Any, timeout_s: float = 60.0, **kwargs: Any) -> Any:
    """server.client(timeout_s).<method>(*args, **kwargs), the client closed after."""
    with server.client(timeout_s=timeout_s) as client:
        return getattr(client, method)(*args, **kwargs)
