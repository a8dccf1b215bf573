"""Run a command and kill its whole process group when the process that asked for it dies.

Why not PR_SET_PDEATHSIG: it fires when the parent *thread* ends, and Streamlit starts the
server from a script thread that ends after every rerun. Polling the parent pid instead
catches the parent's death however it happens (exit, crash, SIGKILL).

Usage: python -m app.lab.guardian PARENT_PID [--shm-prefix PREFIX] -- COMMAND ...
With --shm-prefix, the stubs' shared-memory regions whose names start with PREFIX are removed once
the group is told to end (app/lab/shared_memory.py says why).
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

from app.lab import shared_memory


def main(argv: list[str]) -> int:
    parent = int(argv[0])
    ours = argv[: argv.index("--")]
    command = argv[argv.index("--") + 1 :]
    prefix = ours[ours.index("--shm-prefix") + 1] if "--shm-prefix" in ours else ""
    child = subprocess.Popen(command)  # same process group as us: one killpg ends all

    def stop(*_: object) -> None:
        _terminate_group(child, prefix)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while child.poll() is None:
        if os.getppid() != parent:
            _terminate_group(child, prefix)
            return 0
        time.sleep(0.5)
    shared_memory.remove(prefix)  # the server ended on its own: a crash leaves its regions
    return child.returncode


def _terminate_group(child: subprocess.Popen[bytes], prefix: str, grace_s: float = 8.0) -> None:
    if child.poll() is None:
        child.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(grace_s)
    shared_memory.remove(prefix)  # before the killpg below ends us too; a live stub keeps its mapping
    # Python backend stubs are the server's children in our group: take them too.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.killpg(os.getpgid(0), signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
