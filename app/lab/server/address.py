"""Server addresses, read one way wherever they come from (TRITON_URL, TRITON_GRPC_URL,
TRITON_METRICS_URL, TRITON_LAB_CHECK_URLS, --url, --replica, --grpc-url).

Every one accepts the same forms: `host:port`, or a URL of that server (`http://host:port`,
`https://...` is refused: the lab's clients speak plain HTTP and gRPC; `grpc://host:port` for a
gRPC endpoint), with or without a trailing slash. A host is a name, an IPv4 address or an IPv6
address in brackets; the port is 1 to 65535. What the clients take comes out: `host:port` for
HTTP and gRPC (tritonclient's form), and a full URL for the metrics endpoint (`http://host:port/metrics`
where no path was given: Triton serves its metrics at /metrics). A value that is none of these
is refused as it is read, naming where it came from (AddressError address_bad; words in
app/text/problems.py), never later as a failing request.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping

from app.lab.server.errors import AddressError

_HOST_PORT = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]):(\d{1,5})$")
_SCHEMES = {"http": ("http://",), "grpc": ("grpc://", "http://"), "metrics": ("http://",)}
ENVIRONMENT = {"TRITON_URL": "http", "TRITON_GRPC_URL": "grpc", "TRITON_METRICS_URL": "metrics"}


def parse(text: str | None, kind: str = "http") -> tuple[str, str] | None:
    """(host:port, path) of an address of `kind` (http, grpc, metrics); None when it is no address.
    A path is allowed on a metrics URL only."""
    value = (text or "").strip()
    for scheme in _SCHEMES[kind]:
        if value.lower().startswith(scheme):
            value = value[len(scheme):]
            break
    host_port, slash, path = value.partition("/")
    path = (slash + path).rstrip("/")
    found = _HOST_PORT.match(host_port)
    if not found or not 0 < int(found.group(1)) < 65536 or (path and kind != "metrics"):
        return None
    return host_port, path


def host_port(text: str | None, source: str, kind: str = "http") -> str:
    """`host:port` of an HTTP or gRPC address read from `source` (a variable or a flag); AddressError otherwise."""
    parsed = parse(text, kind)
    if parsed is None:
        raise AddressError("address_bad", source=source, value=str(text))
    return parsed[0]


def metrics_url(text: str | None, source: str) -> str:
    """The full URL of a metrics endpoint read from `source`; AddressError when it is no address."""
    parsed = parse(text, "metrics")
    if parsed is None:
        raise AddressError("address_bad", source=source, value=str(text))
    return f"http://{parsed[0]}{parsed[1] or '/metrics'}"


def from_environment(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The address variable `name` as its clients take it (None: unset or empty); AddressError naming
    the variable when it is set to something else."""
    value = (os.environ if environ is None else environ).get(name, "").strip()
    if not value:
        return None
    kind = ENVIRONMENT[name]
    return metrics_url(value, name) if kind == "metrics" else host_port(value, name, kind)


def check_environment(environ: Mapping[str, str] | None = None) -> None:
    """Every address variable that is set, read now: AddressError for the first that cannot be used."""
    for name in ENVIRONMENT:
        from_environment(name, environ)
