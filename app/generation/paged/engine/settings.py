"""The paged engine's deployments and their settings, as Triton's own ModelConfig.

One ships in model_repository/ (`kv_engine`); PagedSettings changes its config parameters and
names a deployment after them (`kv_lab_<hash>`), as the generator's settings do, so every distinct
set-up loads once and every learner who asks for it shares it (app/lab/deployment's loaded
models; runs on one deployment take turns through app/lab/traffic's run queue).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields
from typing import Protocol

from tritonclient.grpc import model_config_pb2 as mc

from app.lab.deployment import PAGED_ENGINE_DEPLOYMENTS, LoadedModels, deployments
from app.lab.problems import LabError, Problem

MODEL = PAGED_ENGINE_DEPLOYMENTS[0]
NAME_PREFIX = "kv_lab_"
SCHEDULERS = ("fifo", "prefill_first")
# The ranges a learner may choose, one place for the lab's widgets, its URL and its checks.
RANGES: dict[str, tuple[float, float]] = {
    "num_blocks": (4, 256),
    "block_size": (4, 64),
    "max_batch_tokens": (16, 1024),
    "step_ms": (0, 200),
}
# Not in RANGES (the lab's widgets): only the exercises that need a prompt's cost set it.
TOKEN_MS_RANGE = (0.0, 5.0)
MAX_POSITIONS = 512  # the toy model's positions (model_repository/kv_engine/1/paged.py)
# What one token's keys and values take in the toy's cache: layers x KV heads x head size x 2 (K
# and V) x bytes per value, as model_repository/kv_engine/1/paged.py builds it.
TOY = {"layers": 2, "kv_heads": 2, "head_size": 16, "bytes_per_value": 4}


def kv_bytes_per_token(layers: int, kv_heads: int, head_size: int, bytes_per_value: int) -> int:
    return layers * kv_heads * head_size * 2 * bytes_per_value


@dataclass(frozen=True)
class PagedSettings:
    """One deployment of the paged engine; the defaults are kv_engine's."""

    num_blocks: int = 64
    block_size: int = 16
    max_batch_tokens: int = 128
    scheduler: str = "fifo"
    prefix_sharing: bool = True
    step_ms: float = 10.0
    # Extra time a step takes per token it computes (0: none, kv_engine's default). The toy's own
    # prefill costs next to nothing, so only this makes a long unchunked prompt stall its step.
    token_ms: float = 0.0

    def problems(self) -> list[Problem]:
        """Every reason these settings cannot be deployed (their words sit in the paged feature's words module)."""
        out = []
        if self.scheduler not in SCHEDULERS:
            out.append(Problem("kv_scheduler_unknown", {"value": self.scheduler, "choices": ", ".join(SCHEDULERS)}))
        for name, (low, high) in RANGES.items():
            value = getattr(self, name)
            if not low <= value <= high:
                out.append(Problem("kv_setting_range", {"setting": name, "low": low, "high": high, "value": value}))
        low, high = TOKEN_MS_RANGE
        if not low <= self.token_ms <= high:
            out.append(Problem("kv_setting_range", {"setting": "token_ms", "low": low, "high": high, "value": self.token_ms}))
        return out

    def check(self) -> None:
        problems = self.problems()
        if problems:
            raise LabError(problems)

    @property
    def capacity_tokens(self) -> int:
        """Tokens the whole cache holds."""
        return self.num_blocks * self.block_size

    def parameters(self) -> dict[str, str]:
        return {"num_blocks": str(self.num_blocks), "block_size": str(self.block_size),
                "max_batch_tokens": str(self.max_batch_tokens), "scheduler": self.scheduler,
                "prefix_sharing": "true" if self.prefix_sharing else "false", "step_ms": f"{float(self.step_ms):g}",
                **({"token_ms": f"{float(self.token_ms):g}"} if self.token_ms else {})}

    def to_config(self, name: str) -> mc.ModelConfig:
        self.check()
        config = deployments.read_config(MODEL)
        config.name = name
        for key, value in self.parameters().items():
            config.parameters[key].string_value = value
        return deployments.place_instances(config)


def settings_of(config: mc.ModelConfig) -> PagedSettings:
    """A paged engine's config read back into settings (what is deployed)."""
    def param(name: str, default: str) -> str:
        return deployments.parameter(config, name, default)
    return PagedSettings(num_blocks=int(param("num_blocks", "64")), block_size=int(param("block_size", "16")),
                         max_batch_tokens=int(param("max_batch_tokens", "128")), scheduler=param("scheduler", "fifo"),
                         prefix_sharing=param("prefix_sharing", "true").lower() == "true",
                         step_ms=float(param("step_ms", "10")), token_ms=float(param("token_ms", "0")))


def setup_name(settings: PagedSettings) -> str:
    """One name per distinct deployment: `kv_lab_<hash of the settings>`."""
    values = sorted((f.name, getattr(settings, f.name)) for f in fields(settings))
    # token_ms joins the name only when set, so the deployments named before it keep their names.
    values = [(k, float(v) if k in ("step_ms", "token_ms") else v) for k, v in values if k != "token_ms" or v]
    return f"{NAME_PREFIX}{hashlib.sha256(repr(values).encode()).hexdigest()[:10]}"


def deployment_for(settings: PagedSettings) -> tuple[str, mc.ModelConfig]:
    """(name, config) of the deployment these settings make: the shipped one when it matches."""
    shipped = deployments.read_config(MODEL)
    if settings_of(shipped) == settings:
        return MODEL, shipped
    name = setup_name(settings)
    return name, settings.to_config(name)


def is_paged_name(name: str) -> bool:
    return name in PAGED_ENGINE_DEPLOYMENTS or name.startswith(NAME_PREFIX)


class HasModels(Protocol):
    """What loading needs of a server: app/lab/server's LabServer."""

    @property
    def models(self) -> LoadedModels: ...


def ensure(server: HasModels, settings: PagedSettings) -> str:
    """Load the deployment these settings make (once per distinct set-up) and return its name."""
    settings.check()
    name, config = deployment_for(settings)
    if name == MODEL:
        server.models.ensure(name)
    else:
        server.models.ensure(name, config, with_code=True, name_fixes_config=True)
    return name
