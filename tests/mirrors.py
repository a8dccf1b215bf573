"""Where the tests find git mirrors of Triton's repositories, to check that cited source lines say
what the course and the review claim. A machine without them skips those checks (CI has none).

TRITON_LAB_MIRRORS names a folder holding `triton-inference-server+<repo>/repo` git directories,
such as `git clone --mirror https://github.com/triton-inference-server/core
triton-inference-server+core/repo` makes; the default is the lab's development machines' folder.
"""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(os.environ.get("TRITON_LAB_MIRRORS", "/work/.mirror"))


def mirror(repo: str) -> Path:
    """The git directory of Triton's `repo` (core, server, common, python_backend, ...)."""
    return ROOT / f"triton-inference-server+{repo}" / "repo"
