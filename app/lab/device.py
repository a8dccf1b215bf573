"""The one place that decides where model instances run: KIND_GPU when CUDA is visible, else KIND_CPU.

The Python backend's stub shares this virtual environment, so torch's view of CUDA here is
the models' view too.
"""
from __future__ import annotations

import functools
import os


@functools.lru_cache(maxsize=1)
def instance_kind() -> str:
    forced = os.environ.get("TRITON_LAB_INSTANCE_KIND")
    if forced in ("KIND_GPU", "KIND_CPU"):
        return forced
    import torch  # imported late: it takes seconds and only this answer needs it

    return "KIND_GPU" if torch.cuda.is_available() else "KIND_CPU"
