"""Wait for a process we started to answer on its health URL (tritonserver, streamlit)."""
from __future__ import annotations

import subprocess
import time
import urllib.request
from typing import Literal

Outcome = Literal["ok", "exited", "timeout"]


def wait_until_ok(url: str, process: subprocess.Popen[bytes], timeout_s: float, every_s: float = 0.2,
                  probe_timeout_s: float = 1.0) -> Outcome:
    """Poll `url` until it answers 200 ("ok"), `process` ends first ("exited"), or `timeout_s`
    passes ("timeout"). The caller words the failure: it knows which log to show."""
    deadline = time.monotonic() + timeout_s
    while True:
        if process.poll() is not None:
            return "exited"
        try:
            with urllib.request.urlopen(url, timeout=probe_timeout_s) as reply:
                if reply.status == 200:
                    return "ok"
        except OSError:
            pass
        if time.monotonic() >= deadline:
            return "timeout"
        time.sleep(every_s)
