"""Ending a guarded process group (guardian, server or proxy, and their children) for good."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path


class GroupLeader:
    """What the server and the proxy share about the process that leads their group: a class
    using it holds the subprocess.Popen[bytes] as `process` (None before start)."""

    process: subprocess.Popen[bytes] | None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None


def stop_group(process: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM the group, give it grace_s to finish in-flight work, then SIGKILL what is left."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(grace_s)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    # The group is named by its leader's pid. While any member lives, the kernel never hands that
    # number to a new process; once /proc shows a process under it, our group is gone and the
    # number is someone else's, so a SIGKILL to it would hit an unrelated program.
    leader_alive = process.poll() is None  # reaps a leader that has exited, first
    if leader_alive or not Path(f"/proc/{process.pid}").exists():
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(5)


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is still there (signal 0 probes without harm)."""
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
