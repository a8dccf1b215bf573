"""Run a command and kill its whole process group when the process that asked for it dies.

Why not PR_SET_PDEATHSIG: it fires when the parent *thread* ends, and Streamlit starts the
server from a script thread that ends after every rerun. Polling the parent pid instead
catches the parent's death however it happens (exit, crash, SIGKILL).

Usage: python -m app.lab.guardian PARENT_PID -- COMMAND ...
It sits outside app/lab/server so that `python -m` loads only the standard library before the
command starts: the server package's interface (its __init__) loads the lab's engine.
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    parent = int(argv[0])
    command = argv[argv.index("--") + 1 :]
    child = subprocess.Popen(command)  # same process group as us: one killpg ends all

    def stop(*_: object) -> None:
        _terminate_group(child)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while child.poll() is None:
        if os.getppid() != parent:
            _terminate_group(child)
            return 0
        time.sleep(0.5)
    return child.returncode


def _terminate_group(child: subprocess.Popen[bytes], grace_s: float = 8.0) -> None:
    if child.poll() is None:
        child.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(grace_s)
    # Python backend stubs are the server's children in our group: take them too.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.killpg(os.getpgid(0), signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
