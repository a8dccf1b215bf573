"""When does a lab session get `HTTPConnectionClosed: connection closed.`? Three experiments
against the embedded server, each printing what it measured:

1. keep-alive: open HTTP connections, leave them idle, and check whether Triton closed them;
2. connections vs HTTP threads: many sessions at once (one client each, serial requests, as the
   driver's sessions do) with --http-thread-count=1 and with Triton's default (8);
3. the server going away: SIGKILL, then SIGTERM, sent to tritonserver during a driver run.

    python benchmarks/connection_closed.py [--idle-s 130] [--sessions 300] [--requests 20]
"""
from __future__ import annotations

import argparse
import os
import re
import select
import signal
import socket
import sys
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import tritonclient.http as http  # noqa: E402

from app.lab.scenario.scenario import Scenario, random_texts  # noqa: E402
from app.lab.server import EmbeddedServer, LabServer  # noqa: E402
from app.recogniser.engine import driver  # noqa: E402
from benchmarks._common import run_workers, torch_build  # noqa: E402

MODEL = "asr_sequence_direct"
LIVE = b"GET /v2/health/live HTTP/1.1\r\nHost: triton\r\n\r\n"


def keep_alive(idle_s: float) -> None:
    with EmbeddedServer() as server:
        conns = []
        for _ in range(3):
            s = socket.create_connection(("127.0.0.1", server.http_port))
            s.sendall(LIVE)
            s.recv(4096)
            conns.append(s)
        time.sleep(idle_s)
        readable, _, _ = select.select(conns, [], [], 0)  # a closed connection reads as EOF
        conns[0].sendall(LIVE)
        again = conns[0].recv(4096).split(b"\r\n", 1)[0].decode()
        print(f"keep-alive: {len(readable)} of {len(conns)} connections closed by the server after {idle_s:.0f} s idle; "
              f"a request on one then got {again!r}")
        for s in conns:
            s.close()


def many_sessions(sessions: int, requests: int, thread_count: int | None) -> None:
    extra = (f"--http-thread-count={thread_count}",) if thread_count else ()
    with EmbeddedServer(extra_args=extra) as bare:
        http.InferenceServerClient(bare.url, network_timeout=300).load_model("asr_dynamic")
        failures, answered, lock = Counter(), [0], threading.Lock()

        def session(i: int) -> None:
            try:
                client = http.InferenceServerClient(bare.url, connection_timeout=120, network_timeout=120)
                for _ in range(requests):
                    audio = http.InferInput("AUDIO", [1, 160], "FP32")
                    audio.set_data_from_numpy(np.zeros((1, 160), np.float32))
                    tag = http.InferInput("SESSION", [1, 1], "UINT64")
                    tag.set_data_from_numpy(np.array([[i + 1]], np.uint64))
                    client.infer("asr_dynamic", [audio, tag])
                    with lock:
                        answered[0] += 1
                client.close()
            except Exception as err:
                with lock:
                    failures[f"{type(err).__name__}: {err}"] += 1

        wall = run_workers(session, sessions)
        print(f"{sessions} sessions at once, --http-thread-count={thread_count or '8 (default)'}: "
              f"{answered[0]} of {sessions * requests} answered in {wall:.1f} s; failures {dict(failures)}")


def _tritonserver_pid(guardian: int) -> int | None:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == guardian and b"tritonserver" in (entry / "cmdline").read_bytes():
                return int(entry.name)
        except OSError:
            continue
    return None


def server_goes_away(sig: signal.Signals, think_ms: float, chunks: int, after_s: float) -> None:
    server = LabServer(preload=(MODEL,)).start()
    try:
        pid = _tritonserver_pid(server.embedded.pid)
        threading.Timer(after_s, os.kill, (pid, sig)).start()
        scenario = Scenario(MODEL, random_texts(8, chunks, seed=3), think_ms=think_ms, jitter_ms=0)
        try:
            result = driver.run(server, scenario)
        except Exception as err:
            print(f"{sig.name} after {after_s} s: the run raised {type(err).__name__}: {err}")
            return
        q = result.requests
        errors = Counter(re.sub(r"\b\d{6,}\b", "<id>", e) for e in q["error"] if e)
        print(f"{sig.name} after {after_s} s (think {think_ms:.0f} ms): {int((q['error'] == '').sum())} of {len(q)} "
              f"requests answered; failures:")
        for message, n in errors.most_common():
            print(f"  {n} x {message}")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle-s", type=float, default=130.0)
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    print(torch_build())
    for step in (lambda: keep_alive(args.idle_s),
                 lambda: many_sessions(args.sessions, args.requests, 1),
                 lambda: many_sessions(args.sessions, args.requests, None),
                 lambda: server_goes_away(signal.SIGKILL, 0.0, 200, 1.0),
                 lambda: server_goes_away(signal.SIGTERM, 40.0, 200, 1.0)):
        try:
            step()
        except Exception as err:  # reported, not raised
            print(f"an experiment failed: {type(err).__name__}: {err}")


if __name__ == "__main__":
    main()
