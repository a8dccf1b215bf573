"""Per-request timestamps from Triton's own trace files (queue start, compute start and end).

The embedded server is started with a trace file; a run switches TIMESTAMPS tracing on for
its model and names every request "<run id>:<session>:<chunk>", so its rows can be picked
out even when other learners' runs write traces at the same time.
"""
from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    import tritonclient.http as http

COLUMNS = ["request_id", "request_start_ns", "queue_start_ns", "compute_start_ns", "compute_end_ns", "request_end_ns"]
_STAMPS = {
    "REQUEST_START": "request_start_ns",
    "QUEUE_START": "queue_start_ns",
    "COMPUTE_START": "compute_start_ns",
    "COMPUTE_END": "compute_end_ns",
    "REQUEST_END": "request_end_ns",
}
STALE_AFTER_S = 600


def enable(client: http.InferenceServerClient, model: str) -> bool:
    """Trace every request of `model`; False where the server has no trace file (external)."""
    try:
        client.update_trace_settings(
            model_name=model,
            settings={"trace_level": ["TIMESTAMPS"], "trace_rate": "1", "log_frequency": "1"},
        )
        return True
    except Exception:
        return False


def collect(trace_dir: Path | None, run_id: str, expected: int, wait_s: float = 3.0) -> pd.DataFrame:
    """This run's traced requests; waits briefly because files are written after replies."""
    if trace_dir is None:
        return pd.DataFrame(columns=COLUMNS)
    deadline = time.monotonic() + wait_s
    rows: dict[str, dict[str, int]] = {}
    mine: list[Path] = []
    while True:
        rows.clear()
        mine.clear()
        for path in sorted(trace_dir.glob("trace.json.*")):
            for request_id, stamps in _read(path).items():
                if request_id.startswith(f"{run_id}:"):
                    rows[request_id] = stamps
                    mine.append(path)
        if len(rows) >= expected or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for path in set(mine):
        with contextlib.suppress(OSError):  # an external server's files may belong to another user: leave them
            path.unlink(missing_ok=True)
    _drop_stale(trace_dir)
    frame = pd.DataFrame([{"request_id": k, **v} for k, v in rows.items()], columns=COLUMNS)
    return frame


def _read(path: Path) -> dict[str, dict[str, int]]:
    try:
        events = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}  # being written right now; the next poll reads it
    by_id: dict[int, dict[str, int]] = {}
    names: dict[int, str] = {}
    for event in events:
        trace_id = event.get("id")
        if "request_id" in event:
            names[trace_id] = event["request_id"]
        for stamp in event.get("timestamps", []):
            column = _STAMPS.get(stamp.get("name"))
            if column:
                by_id.setdefault(trace_id, {})[column] = int(stamp["ns"])
    return {names[i]: stamps for i, stamps in by_id.items() if i in names}


def _drop_stale(trace_dir: Path) -> None:
    # Traces of runs that never collected them (a crashed page) must not pile up.
    now = time.time()
    for path in trace_dir.glob("trace.json.*"):
        try:
            if now - path.stat().st_mtime > STALE_AFTER_S:
                path.unlink()
        except OSError:  # gone already, or not ours to delete
            pass
