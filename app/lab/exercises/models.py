"""Recogniser deployments that exercises load under fixed names, with model parameters the
lab's controls do not expose (idle_evict_s: the model's own clean-up of abandoned cells)."""
from __future__ import annotations

import threading

from tritonclient.utils import InferenceServerException

from app.lab import deployments
from app.lab.deployments import DeploymentError, LabSettings

_lock = threading.Lock()
_loaded: dict[tuple[str, str], str] = {}  # (server url, model) -> config text last loaded there


def load_with_parameters(server, name: str, settings: LabSettings, **parameters) -> str:
    """Load the recogniser as `name` with `settings` plus these config parameters; a model
    already serving exactly this config on this server is left as it is."""
    config = settings.to_config(name)
    for key, value in parameters.items():
        config.parameters[key].string_value = str(value)
    text = deployments.to_pbtxt(config)
    client = server.client(timeout_s=300)
    with _lock:
        try:
            if _loaded.get((server.url, name)) == text and client.is_model_ready(name):
                return name
            deployments.load(client, config, with_code=True)
        except InferenceServerException as err:
            raise DeploymentError(f"Triton refused the exercise's deployment {name}: {err.message()}") from None
        _loaded[(server.url, name)] = text
    return name
