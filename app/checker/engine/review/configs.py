"""Read model configs for the review without a server: a config.pbtxt, a model folder, a whole
model repository, or the JSON Triton's get_model_config returns.

Files are parsed by the lab's one config reader (deployments.parse_pbtxt: protobuf's
text_format into Triton's own ModelConfig); a file it rejects raises 'pbtxt_unreadable' with the
file, line, column and protobuf's message (words: app/text/problems.py).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from google.protobuf import json_format
from tritonclient.grpc import model_config_pb2 as mc

from app.lab.deployment import deployments
from app.lab.problems import LabError

CONFIG_FILE = "config.pbtxt"  # core src/constants.h kModelConfigPbTxt


def load_config(path: str | Path) -> mc.ModelConfig:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LabError("checker_path_missing", path=str(path)) from None
    except (OSError, UnicodeDecodeError) as err:
        raise LabError("checker_file_unreadable", path=str(path), error=str(err)) from None
    return deployments.parse_pbtxt(text, source=str(path))


def is_model_folder(path: str | Path) -> bool:
    """A model's own folder: it holds config.pbtxt, or only numbered version folders (a model
    whose config Triton generates). Anything else is taken as a repository of models."""
    path = Path(path)
    if (path / CONFIG_FILE).is_file():
        return True
    subfolders = [p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")] if path.is_dir() else []
    return bool(subfolders) and all(p.name.isdigit() for p in subfolders)


def load_model_folder(path: str | Path) -> mc.ModelConfig | None:
    """The model's config, or None when it has no config.pbtxt (Triton may auto-complete one on
    load: the offline review cannot see it, the server's config can be reviewed instead)."""
    file = Path(path) / CONFIG_FILE
    return load_config(file) if file.is_file() else None


def load_repository(directory: str | Path) -> list[tuple[str, mc.ModelConfig | None]]:
    """(model name, config or None) for every model folder of a repository, by name. Triton takes
    every subfolder as a model; a folder without config.pbtxt gives None."""
    directory = Path(directory)
    if not directory.is_dir():
        raise LabError("checker_path_missing", path=str(directory))
    folders = sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith("."))
    return [(folder.name, load_model_folder(folder)) for folder in folders]


def from_server_json(config: dict[str, Any]) -> mc.ModelConfig:  # Any: the server's JSON, untyped in tritonclient
    """The config dict tritonclient.http's get_model_config returns (Triton's normalised config).
    Fields newer than this client's proto are skipped: a newer server may add some. The gRPC
    client's as_json form, {"config": {...}}, is unwrapped."""
    if set(config) == {"config"} and isinstance(config["config"], dict):
        config = config["config"]
    try:
        return json_format.ParseDict(config, mc.ModelConfig(), ignore_unknown_fields=True)
    except json_format.ParseError as err:
        raise LabError("checker_server_config", name=str(config.get("name", "")), message=str(err)) from None
