"""How a session's chunks travel to Triton: HTTP, gRPC unary calls, or one gRPC bidirectional stream.

Each session opens one Link (its own connection or stream). A Link sends one chunk and reports
the reply through a callback, so the driver writes the same per-request record whatever the
transport. With in_flight > 1 the session pipelines: chunk k+1 leaves before chunk k's answer
is back (HTTP async_infer over several pooled connections, gRPC async_infer on one channel, or
the stream, which Triton answers in the order it received the requests).

A chunk that may have reached the model must never be applied twice, so nothing here resends
a request once a byte of it may have left. The one retry: an HTTP connection the server refused
(ECONNREFUSED, the answer to the TCP handshake itself) carried no request, so a serial HTTP
chunk tries to connect again, CONNECT_RETRIES times, before its refusal is recorded.

`HTTPConnectionClosed: connection closed.` (geventhttpclient) means the request was sent and the
connection closed before any reply: the server went away with the chunk unanswered (it was
killed, crashed, or is stopping). Triton keeps idle HTTP connections open (measured: none closed
after 130 s idle) and serves many more connections than it has HTTP threads, so on a live server
it does not happen (benchmarks/connection_closed.py measures all three).
"""
from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Protocol

import numpy as np
import numpy.typing as npt
import tritonclient.grpc as grpc
import tritonclient.http as http
from tritonclient.utils import InferenceServerException, np_to_triton_dtype

from app.lab.scenario.transport import Transport

TIMEOUT_S = 120.0  # a reply slower than this is a failure, whatever the transport
CONNECT_RETRIES = 2  # more handshakes after a refused one (HTTP, serial): nothing was sent
CONNECT_BACKOFF_S = (0.2, 0.5)  # the pause before each of those

# (result or None, error message or "") -> None; called once per chunk, from any thread.
Done = Callable[[object, str], None]


class _Window(Protocol):
    """The in-flight window: threading's semaphore, or gevent's where replies arrive on greenlets."""

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool: ...

    def release(self) -> object: ...


NO_ANSWER = "no answer from the server"  # the request failed on the way: not a refusal


def never_sent(err: BaseException) -> bool:
    """Whether `err` proves the request never left: the TCP handshake itself was refused.

    A refused connection (ECONNREFUSED) is the answer to a connection attempt; no request byte
    goes out before the handshake completes. Every other failure (a reset or closed connection,
    a timeout) may come after the request, or part of it, reached the server."""
    return isinstance(err, ConnectionRefusedError)


def error_text(err: BaseException) -> str:
    """The server's own words where tritonclient carries them; a transport failure (a closed or
    refused connection, a client-side timeout) says so, since the server said nothing."""
    if isinstance(err, InferenceServerException):
        return err.message() or str(err)
    return f"{NO_ANSWER} ({type(err).__name__}: {err})"


class Link:
    """One session's connection. Subclasses implement _send and, if asynchronous, pausing."""

    module = http

    def __init__(self, url: str, in_flight: int, timeout_s: float = TIMEOUT_S):
        self.url, self.in_flight, self.timeout_s = url, in_flight, timeout_s
        self._window: _Window = threading.BoundedSemaphore(in_flight)

    def inputs(self, arrays: dict[str, npt.NDArray[np.generic]]) -> list[object]:
        out: list[object] = []
        for name, array in arrays.items():
            tensor = self.module.InferInput(name, list(array.shape), np_to_triton_dtype(array.dtype))
            tensor.set_data_from_numpy(array)
            out.append(tensor)
        return out

    def acquire(self) -> None:
        """Block until fewer than in_flight chunks are unanswered."""
        if not self._window.acquire(timeout=TIMEOUT_S):
            raise TimeoutError(f"no reply within {TIMEOUT_S:.0f} s")

    def release(self) -> None:
        """Give back a window place taken by acquire() without sending."""
        self._window.release()

    def pause(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def send(self, model: str, arrays: dict[str, npt.NDArray[np.generic]], request_id: str, headers: dict[str, str], sequence: Mapping[str, int | str],
             done: Done) -> None:
        answered = threading.Event()

        def finish(result: object, error: str) -> None:
            if answered.is_set():  # one record per chunk, even if recording it failed
                return
            answered.set()
            self._window.release()
            done(result, error)

        try:
            self._send(model, self.inputs(arrays), request_id, headers, sequence, finish)
        except Exception as err:  # refused before it left: still one record for the chunk
            finish(None, error_text(err))

    def drain(self) -> None:
        """Wait until every chunk sent has been answered."""
        for _ in range(self.in_flight):
            self.acquire()
        for _ in range(self.in_flight):
            self._window.release()

    def close(self) -> None:
        pass

    def _send(self, model: str, inputs: list[object], request_id: str, headers: dict[str, str], sequence: Mapping[str, int | str],
              finish: Done) -> None:
        raise NotImplementedError


class HttpLink(Link):
    """tritonclient.http; pipelined through async_infer, one pooled connection per chunk in flight.

    async_infer runs on gevent greenlets of this thread, which only make progress while the
    thread waits in gevent: pauses and waits here go through gevent for that reason.
    """

    def __init__(self, url: str, in_flight: int, timeout_s: float = TIMEOUT_S):
        super().__init__(url, in_flight, timeout_s)
        self.reconnects = 0  # refused handshakes tried again (nothing had been sent)
        # The HTTP client gives up after network_timeout; Triton's HTTP endpoint is never told.
        self.client = http.InferenceServerClient(
            url, concurrency=in_flight, connection_timeout=TIMEOUT_S, network_timeout=timeout_s
        )
        if in_flight > 1:
            import gevent.lock

            self._window = gevent.lock.BoundedSemaphore(in_flight)

    def acquire(self) -> None:
        if not self._window.acquire(timeout=TIMEOUT_S):
            raise TimeoutError(f"no reply within {TIMEOUT_S:.0f} s")

    def pause(self, seconds: float) -> None:
        if self.in_flight == 1:
            return super().pause(seconds)
        import gevent

        gevent.sleep(max(0.0, seconds))

    def _send(self, model: str, inputs: list[object], request_id: str, headers: dict[str, str], sequence: Mapping[str, int | str],
              finish: Done) -> None:
        if self.in_flight == 1:
            for attempt in range(CONNECT_RETRIES + 1):
                try:
                    result = self.client.infer(model, inputs, request_id=request_id, headers=headers, **sequence)
                except Exception as err:
                    if never_sent(err) and attempt < CONNECT_RETRIES:
                        self.reconnects += 1
                        time.sleep(CONNECT_BACKOFF_S[attempt])
                        continue
                    return finish(None, error_text(err))
                return finish(result, "")
        # Pipelined chunks are not retried even when refused: a later chunk of the session may
        # already be on another connection, and a resent one would arrive after it.
        import gevent

        pending = self.client.async_infer(model, inputs, request_id=request_id, headers=headers, **sequence)

        def watch() -> None:  # stamps the reply when it arrives, not when someone asks for it
            try:
                result = pending.get_result()
            except Exception as err:
                return finish(None, error_text(err))
            finish(result, "")

        gevent.spawn(watch)

    def close(self) -> None:
        self.client.close()


class GrpcLink(Link):
    """tritonclient.grpc unary calls; pipelined through async_infer on the one channel."""

    module = grpc

    def __init__(self, url: str, in_flight: int, timeout_s: float = TIMEOUT_S):
        super().__init__(url, in_flight, timeout_s)
        self.client = grpc.InferenceServerClient(url)

    def _send(self, model: str, inputs: list[object], request_id: str, headers: dict[str, str], sequence: Mapping[str, int | str],
              finish: Done) -> None:
        headers = _metadata(headers)
        if self.in_flight == 1:
            try:
                # client_timeout is a gRPC deadline: when it passes, Triton is told (cancellation).
                result = self.client.infer(model, inputs, request_id=request_id, headers=headers, client_timeout=self.timeout_s, **sequence)
            except Exception as err:
                return finish(None, error_text(err))
            return finish(result, "")
        self.client.async_infer(
            model,
            inputs,
            callback=lambda result, error: finish(result, error_text(error) if error else ""),
            request_id=request_id,
            headers=headers,
            client_timeout=self.timeout_s,
            **sequence,
        )

    def close(self) -> None:
        self.client.close()


class StreamLink(Link):
    """One gRPC bidirectional stream per session.

    Triton writes a non-decoupled model's stream responses in the order it received the
    requests (server src/grpc/stream_infer_handler.cc), and tritonclient drops the request ID
    of an error response, so each response belongs to the oldest unanswered request.
    """

    module = grpc

    def __init__(self, url: str, in_flight: int, timeout_s: float = TIMEOUT_S):
        super().__init__(url, in_flight, timeout_s)
        self.client = grpc.InferenceServerClient(url)
        self._pending: deque[Done] = deque()
        self._lock = threading.Lock()
        self._headers: dict[str, str] | None = None
        self._started = False

    def _on_response(self, result: object, error: InferenceServerException | None) -> None:
        broken = error is not None and error.status() is not None  # the stream itself failed
        with self._lock:
            waiting = list(self._pending) if broken else [self._pending.popleft()] if self._pending else []
            if broken:
                self._pending.clear()
        for finish in waiting:
            finish(result, error_text(error) if error else "")

    def _send(self, model: str, inputs: list[object], request_id: str, headers: dict[str, str], sequence: Mapping[str, int | str],
              finish: Done) -> None:
        if not self._started:  # the stream's metadata is fixed when it opens: no per-chunk ID there
            fixed = {k: v for k, v in _metadata(headers).items() if k != "x-request-id"}
            self.client.start_stream(callback=self._on_response, headers=fixed)
            self._started = True
        with self._lock:
            self._pending.append(finish)
        try:
            self.client.async_stream_infer(model, inputs, request_id=request_id, **sequence)
        except Exception:
            with self._lock:
                self._pending.remove(finish)
            raise

    def close(self) -> None:
        if self._started:
            self.client.stop_stream()
        self.client.close()


def _metadata(headers: dict[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}  # gRPC metadata keys must be lower case


LINKS: dict[Transport, type[Link]] = {Transport.HTTP: HttpLink, Transport.GRPC: GrpcLink, Transport.GRPC_STREAM: StreamLink}


def open_link(transport: Transport, url: str, in_flight: int = 1, timeout_s: float = TIMEOUT_S) -> Link:
    """A session's connection; a reply slower than timeout_s counts as that chunk's error."""
    return LINKS[Transport.parse(transport)](url, in_flight, timeout_s)
