"""Put a learner's settings on the server: reuse a shipped deployment when it matches, else
load the learner's own model (one name per learner, replaced in place on each Apply).

Triton keeps the old version serving until the new one is ready, and a config it rejects
leaves the old one serving; we validate first so the learner gets a specific reason.
"""
from __future__ import annotations

import hashlib
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from tritonclient.utils import InferenceServerException

from app.lab import deployments
from app.lab.deployments import DeploymentError, LabSettings

MAX_LEARNER_MODELS = 3  # each instance is a Python process of ~300 MB
# A model applied this recently may still be running someone's traffic: never unload it, even
# if that briefly keeps more than MAX_LEARNER_MODELS loaded. Every run is far shorter.
IN_USE_GRACE_S = 120.0


@dataclass
class Applied:
    model: str
    settings: LabSettings
    pbtxt: str
    reused: bool  # a shipped deployment already had these settings


class Deployer:
    def __init__(self, server, max_learner_models: int = MAX_LEARNER_MODELS):
        self.server = server
        self.max_learner_models = max_learner_models
        self._loaded: OrderedDict[str, LabSettings] = OrderedDict()
        self._last_applied: dict[str, float] = {}
        self._lock = threading.Lock()

    def shipped_match(self, settings: LabSettings) -> str | None:
        for name in deployments.RECOGNISER_DEPLOYMENTS:
            shipped = deployments.settings_of(deployments.read_config(name, self.server.model_repository))
            if shipped.normalised() == settings.normalised():
                return name
        return None

    def apply(self, settings: LabSettings, owner: str, reuse_shipped: bool = True) -> Applied:
        settings.check()  # DeploymentError before anything reaches the server
        if reuse_shipped and (name := self.shipped_match(settings)):
            config = deployments.place_instances(deployments.read_config(name, self.server.model_repository))
            return Applied(name, settings, deployments.to_pbtxt(config), reused=True)
        name = learner_model_name(owner)
        config = settings.to_config(name)
        with self._lock:
            if self._loaded.get(name) != settings:
                try:
                    deployments.load(self.server.client(timeout_s=300), config, with_code=True)
                except InferenceServerException as err:
                    raise DeploymentError("triton_refused", message=err.message()) from None
                self._loaded[name] = settings
            self._loaded.move_to_end(name)
            self._last_applied[name] = time.monotonic()
            self._evict()
        return Applied(name, settings, deployments.to_pbtxt(config), reused=False)

    def _evict(self) -> None:
        now = time.monotonic()
        while len(self._loaded) > self.max_learner_models:
            old = next(iter(self._loaded))
            if now - self._last_applied.get(old, 0.0) < IN_USE_GRACE_S:
                break  # the least recently applied is still fresh, so all are
            del self._loaded[old]
            self._last_applied.pop(old, None)
            try:
                self.server.client().unload_model(old)
            except Exception:
                pass  # already gone with a restarted server

    def forget(self) -> None:
        """After a server restart nothing of ours is loaded any more."""
        with self._lock:
            self._loaded.clear()
            self._last_applied.clear()


def learner_model_name(owner: str) -> str:
    """A model name of this learner's own: a readable part of the name, for people reading the
    server's model list, and a hash of the whole name, so 'lab-ada' and 'labada', or two long
    names that share their first characters, never share a model."""
    readable = re.sub(r"[^a-z0-9]", "", owner.lower())[:12] or "anon"
    return f"asr_lab_{readable}_{hashlib.sha256(owner.encode('utf-8')).hexdigest()[:8]}"
