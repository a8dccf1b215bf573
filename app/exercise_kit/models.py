"""Recogniser deployments that exercises load under fixed names, with model parameters the
lab's controls do not expose (idle_evict_s: the model's own clean-up of abandoned cells)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from app.lab.deployment import LabSettings

if TYPE_CHECKING:
    from app.lab.server import LabServer


def load_with_parameters(server: LabServer, name: str, settings: LabSettings, **parameters: object) -> str:
    """Load the recogniser as `name` with `settings` plus these config parameters, within the
    server's budget; a model already serving exactly this config is left as it is."""
    config = settings.to_config(name)
    for key, value in parameters.items():
        config.parameters[key].string_value = str(value)
    server.models.ensure(name, config, with_code=True)
    return name
