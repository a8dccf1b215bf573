"""How chunks travel (app/lab/traffic/transports.Transport values), as people name them."""
from __future__ import annotations

from app.i18n import N_, Words
from app.lab.scenario.transport import Transport

TRANSPORTS = {
    "http": N_("HTTP"),
    "grpc": N_("gRPC (one call per chunk)"),
    "grpc_stream": N_("gRPC bidirectional stream"),
}


def transport(value: Transport | str, _: Words) -> str:
    return _(TRANSPORTS[getattr(value, "value", value)])
