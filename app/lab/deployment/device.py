"""The one place that decides where model instances run: KIND_GPU when CUDA is visible, else KIND_CPU.

The Python backend's stub shares this virtual environment, so torch's view of CUDA here is
the models' view too.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

# What the NVIDIA kernel driver leaves on Linux (/dev/dxg: WSL's GPU bridge).
NVIDIA_DRIVER = ("/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/dxg")


@functools.lru_cache(maxsize=1)
def instance_kind() -> str:
    forced = os.environ.get("TRITON_LAB_INSTANCE_KIND")
    if forced in ("KIND_GPU", "KIND_CPU"):
        return forced
    if not any(Path(p).exists() for p in NVIDIA_DRIVER):
        # No NVIDIA driver, so torch could not see a GPU either: its CUDA build would cost
        # about 470 MB and two seconds at start-up to say so.
        return "KIND_CPU"
    import torch  # imported late: it takes seconds and only this answer needs it

    return "KIND_GPU" if torch.cuda.is_available() else "KIND_CPU"
