"""Where the project's data folders live, found from this file so any working directory works."""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
MODEL_REPOSITORY = REPO_ROOT / "model_repository"
LESSONS_DIR = REPO_ROOT / "lessons"
QUIZ_DIR = REPO_ROOT / "quiz"


def data_dir() -> Path:
    """Folder for learner progress; TRITON_LAB_DATA overrides the per-user default."""
    override = os.environ.get("TRITON_LAB_DATA")
    base = Path(override) if override else Path.home() / ".local" / "share" / "triton-batching-lab"
    base.mkdir(parents=True, exist_ok=True)
    return base


def cache_dir() -> Path:
    """Folder for generated server files (backend folder, logs); XDG_CACHE_HOME is honoured."""
    root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    path = root / "triton-batching-lab"
    path.mkdir(parents=True, exist_ok=True)
    return path
