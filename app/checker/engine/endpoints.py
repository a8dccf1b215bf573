"""Whether the gRPC endpoint a check sends to answers at all, so that a wrong address is never a broken model.

A decoupled model's streams and the grpc/grpc_stream transports travel to `Target.grpc_url`
(--grpc-url, else TRITON_GRPC_URL, else port 8001 of --url's host). When nothing listens there,
or an HTTP server does, every request fails before it reaches Triton: tritonclient reports
StatusCode.UNAVAILABLE with grpc's "failed to connect to all addresses" (connection refused) or
"Failed parsing HTTP/2" (an HTTP/1 server answered the HTTP/2 preface; Triton's own HTTP endpoint
just closes the socket, "Socket closed", so the address is then asked over HTTP as well). Counting those as the
model's failures would blame the model for the network, so the check stops with exit 2
(a LabError) naming the address and the option that sets it. Codes and values only.
"""
from __future__ import annotations

import http.client

import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from app.lab.problems import LabError

PROBE_TIMEOUT_S = 10.0
OPTION = "--grpc-url (or TRITON_GRPC_URL)"  # what sets the gRPC endpoint, named in the message
UNAVAILABLE = "StatusCode.UNAVAILABLE"
HTTP_SIGNS = ("Failed parsing HTTP/2", "http1", "HTTP/1")  # an HTTP/1 server answered gRPC's preface


def is_connection_error(error: object) -> bool:
    """Whether a tritonclient gRPC error says the request never reached a server (not the
    server's answer): status UNAVAILABLE."""
    status = error.status() if isinstance(error, InferenceServerException) else None
    return str(status) == UNAVAILABLE


def unreachable(address: str, error: object) -> LabError:
    """The LabError that ends a check whose gRPC endpoint refused or dropped the connection:
    check_grpc_is_http where an HTTP server answered there, else check_grpc_unreachable."""
    message = error.message() if isinstance(error, InferenceServerException) and error.message() else str(error)
    http = any(sign in message for sign in HTTP_SIGNS) or answers_http(address)
    return LabError("check_grpc_is_http" if http else "check_grpc_unreachable", address=address, option=OPTION, message=message)


def answers_http(address: str) -> bool:
    """Whether an HTTP server answers at host:port (any status: Triton's HTTP endpoint, or another)."""
    host, _, port = address.rpartition(":")
    connection = http.client.HTTPConnection(host.strip("[]"), int(port), timeout=PROBE_TIMEOUT_S / 2)
    try:
        connection.request("GET", "/v2/health/live")
        connection.getresponse().read()
    except (OSError, http.client.HTTPException, ValueError):
        return False
    finally:
        connection.close()
    return True


def probe_grpc(address: str) -> None:
    """Ask the gRPC endpoint whether the server is live; LabError (exit 2) when nothing there
    speaks Triton's gRPC. A server that answers, live or not, passes: the check itself says the rest."""
    client = grpcclient.InferenceServerClient(address)
    try:
        client.is_server_live(client_timeout=PROBE_TIMEOUT_S)
    except InferenceServerException as err:
        # a probe that times out heard nothing there either (a silent address)
        if is_connection_error(err) or str(err.status()) == "StatusCode.DEADLINE_EXCEEDED":
            raise unreachable(address, err) from None
    finally:
        client.close()
