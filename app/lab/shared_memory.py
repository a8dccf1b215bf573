"""The shared-memory regions a server's Python-backend stubs leave in /dev/shm, removed by prefix.

Standard library only, outside app/lab/server: the guardian (app/lab/guardian.py) imports it
before the server starts.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

SHM_DIR = Path("/dev/shm")
# Every embedded server's regions start with this, then a token of its own (embedded.py); Triton's
# default prefix, triton_python_backend_shm_region_, is left alone: other servers may use it.
PREFIX = "triton_lab_"


def regions(prefix: str) -> list[Path]:
    """The regions whose names start with `prefix` (one of ours, never the bare PREFIX)."""
    if not prefix.startswith(PREFIX) or prefix == PREFIX or not SHM_DIR.is_dir():
        return []
    return sorted(SHM_DIR.glob(f"{prefix}*"))


def remove(prefix: str) -> int:
    """Unlink the server's regions; a stub still alive keeps its mapping until it ends, as any
    unlinked file. Returns how many were removed."""
    removed = 0
    for region in regions(prefix):
        with contextlib.suppress(FileNotFoundError):
            region.unlink()
            removed += 1
    return removed
