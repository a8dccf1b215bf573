"""A loopback TCP relay whose connections can be cut as a dying client's are.

A client that crashes, loses its network or has its pod killed sends no cancel: its TCP
connection just ends, and the server learns it from a reset. tritonclient's own ways to stop
(stop_stream, close) all end the RPC politely first (an HTTP/2 RST_STREAM), which is the cancel
fault again. So the disconnect fault's victim dials this relay instead of the server, and
cut() closes both of the relay's sockets with SO_LINGER 0: the kernel sends a TCP RST, and the
server's gRPC transport sees the connection reset with its stream still open.
"""
from __future__ import annotations

import contextlib
import socket
import struct
import threading

CHUNK = 65536


class Relay:
    """Listens on 127.0.0.1 (address: host:port to dial) and pumps each accepted connection to `upstream`."""

    def __init__(self, upstream: str):
        host, port = upstream.rsplit(":", 1)
        self.upstream = (host.strip("[]") or "127.0.0.1", int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._cut = False
        threading.Thread(target=self._accept, name="check-relay", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            try:
                server = socket.create_connection(self.upstream, timeout=10)
            except OSError:
                _reset(client)
                continue
            server.settimeout(None)
            with self._lock:
                if self._cut:
                    _reset(client)
                    _reset(server)
                    return
                self._sockets += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=_pump, args=(a, b), name="check-relay-pump", daemon=True).start()

    def cut(self) -> None:
        """End every relayed connection with a reset, as a dead client's host would."""
        with self._lock:
            self._cut = True
            sockets, self._sockets = self._sockets, []
        for s in sockets:
            _reset(s)
        with contextlib.suppress(OSError):
            self.listener.close()



def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(CHUNK):
            sink.sendall(data)
    except OSError:
        pass  # the other side was cut


def _reset(s: socket.socket) -> None:
    with contextlib.suppress(OSError):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        s.close()
