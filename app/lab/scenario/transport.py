"""How a scenario's chunks are to travel: the choice belongs to the scenario, the sending to
app/lab/traffic/transports.py."""
from __future__ import annotations

from enum import Enum

from app.lab.problems import LabError


class Transport(str, Enum):
    HTTP = "http"
    GRPC = "grpc"
    GRPC_STREAM = "grpc_stream"

    @property
    def uses_grpc(self) -> bool:
        return self is not Transport.HTTP

    @classmethod
    def parse(cls, value: str | Transport) -> Transport:
        try:
            return cls(value)
        except ValueError:
            raise LabError("transport_unknown", value=str(value), choices=", ".join(t.value for t in cls)) from None
