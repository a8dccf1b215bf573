"""Put a learner's settings on the server: a shipped deployment when one has exactly these
settings, else a deployment named after the settings themselves.

Naming a deployment by its settings means learners who choose the same set-up share one model
(and one set of stub processes) instead of loading a copy each; a run holds its deployment alone
(app/lab/traffic/run_queue.py), so sharing never mixes their traffic. Configs are checked before they
are sent, so a bad one changes nothing on the server and the learner gets a specific reason.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from app.lab.deployment import deployments
from app.lab.deployment.deployments import LabSettings

if TYPE_CHECKING:
    from app.lab.deployment.loaded_models import LoadedModels
    from app.lab.traffic import OnWait


class DeployServer(Protocol):
    """What a Deployer needs of its server (app/lab/server's LabServer): the repository and the models it loads."""

    @property
    def model_repository(self) -> Path: ...
    @property
    def models(self) -> LoadedModels: ...


@dataclass
class Applied:
    model: str
    settings: LabSettings
    pbtxt: str
    reused: bool  # a shipped deployment already had these settings


class Deployer:
    def __init__(self, server: DeployServer):
        self.server = server

    @property
    def models(self) -> LoadedModels:
        return self.server.models

    def shipped_match(self, settings: LabSettings) -> str | None:
        for name in deployments.RECOGNISER_DEPLOYMENTS:
            shipped = deployments.settings_of(deployments.read_config(name, self.server.model_repository))
            if shipped.normalised() == settings.normalised():
                return name
        return None

    def apply(self, settings: LabSettings, reuse_shipped: bool = True, on_wait: OnWait | None = None) -> Applied:
        """Load these settings (once per distinct set-up, named after them: every learner who asks
        for the same set-up shares it). While the load waits for room in the server's memory,
        on_wait hears why."""
        settings.check()  # DeploymentError before anything reaches the server
        if reuse_shipped and (name := self.shipped_match(settings)):
            self.models.ensure(name, on_wait=on_wait)
            config = deployments.place_instances(deployments.read_config(name, self.server.model_repository))
            return Applied(name, settings, deployments.to_pbtxt(config), reused=True)
        name = setup_model_name(settings)
        config = settings.to_config(name)
        self.models.ensure(name, config, with_code=True, name_fixes_config=True, on_wait=on_wait)
        return Applied(name, settings, deployments.to_pbtxt(config), reused=False)

    def ensure(self, name: str) -> None:
        """A shipped (or already applied) deployment, loaded if it is not."""
        self.models.ensure(name)

    def forget(self) -> None:
        """After a server restart nothing of ours is loaded any more."""
        self.models.forget()


def setup_model_name(settings: LabSettings) -> str:
    """One name per distinct deployment: the scheduler, readable in the server's model list, and a
    hash of the normalised settings, so settings the scheduler ignores do not load a second copy."""
    normal = settings.normalised()
    digest = hashlib.sha256(repr(sorted(vars(normal).items())).encode("utf-8")).hexdigest()[:10]
    return f"asr_lab_{normal.scheduler}_{digest}"
