"""The generator's deployments and their settings, as Triton's own ModelConfig.

Three ship in model_repository/ (app.lab.deployment's GENERATOR_DEPLOYMENTS), running one
model.py: `gen_static` (dynamic batcher: a batch generated to its end in one execution),
`gen_inflight` (iterative sequence batcher: one step per execution, requests join at any step,
state keyed by the CORRID Triton gives each request) and `gen_inflight_by_row` (the same with
state keyed by batch row: the mistake). GeneratorSettings changes one thing at a time from those
and names a deployment after its settings, as the recogniser lab does (app/lab/deployment).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Protocol

from tritonclient.grpc import model_config_pb2 as mc

from app.lab.deployment import GENERATOR_DEPLOYMENTS, LoadedModels, deployments
from app.lab.paths import MODEL_REPOSITORY
from app.lab.problems import LabError, Problem

BATCHING = ("static", "inflight")
STATE_KEYS = ("corrid", "row")
# The sequence batcher's strategy in flight: oldest (gen_inflight's: packed rows) or direct (Triton's default: a
# generation keeps its slot's row, padding rows for idle slots below the highest busy one).
STRATEGIES = ("oldest", "direct")
MAX_BATCH = (1, 16)
INSTANCES = (1, 4)
STEP_MS = (1.0, 1000.0)
QUEUE_DELAY_US = (0, 100_000)
NAME_PREFIX = "gen_lab_"


def is_generator_name(name: str) -> bool:
    """Whether `name` is one of the generator's deployments: shipped, or named by setup_name."""
    return name in GENERATOR_DEPLOYMENTS or name.startswith(NAME_PREFIX)


def read_config(name: str, repository: Path = MODEL_REPOSITORY) -> mc.ModelConfig:
    return deployments.read_config(name, repository)


def to_pbtxt(config: mc.ModelConfig) -> str:
    return deployments.to_pbtxt(config)


def is_iterative(config: mc.ModelConfig) -> bool:
    """Whether Triton runs it as iterative sequences (in-flight batching)."""
    return config.WhichOneof("scheduling_choice") == "sequence_batching" and bool(config.sequence_batching.iterative_sequence)


@dataclass(frozen=True)
class GeneratorSettings:
    """One deployment of the generator; the defaults are gen_inflight's."""

    batching: str = "inflight"
    state_key: str = "corrid"  # inflight only: static keeps a request's state in its row for one execution
    step_ms: float = 20.0
    honour_cancel: bool = True
    max_batch_size: int = 4
    instances: int = 1
    queue_delay_us: int = 0  # static: the dynamic batcher's; inflight: the strategy's
    strategy: str = "oldest"  # inflight only

    def problems(self) -> list[Problem]:
        """Every reason these settings cannot be deployed (words: app/generation/words.py)."""
        out = []
        if self.batching not in BATCHING:
            out.append(Problem("gen_batching_unknown", {"value": self.batching, "choices": ", ".join(BATCHING)}))
        if self.state_key not in STATE_KEYS:
            out.append(Problem("gen_state_key_unknown", {"value": self.state_key, "choices": ", ".join(STATE_KEYS)}))
        if self.strategy not in STRATEGIES:
            out.append(Problem("gen_strategy_unknown", {"value": self.strategy, "choices": ", ".join(STRATEGIES)}))
        for name, (low, high) in (("step_ms", STEP_MS), ("max_batch_size", MAX_BATCH), ("instances", INSTANCES),
                                  ("queue_delay_us", QUEUE_DELAY_US)):
            value = getattr(self, name)
            if not low <= value <= high:
                out.append(Problem("gen_setting_range", {"setting": name, "low": low, "high": high, "value": value}))
        return out

    def check(self) -> None:
        problems = self.problems()
        if problems:
            raise LabError(problems)

    def normalised(self) -> GeneratorSettings:
        """Settings the deployment ignores set to one value (and step_ms a float), so equal
        deployments compare, and are named, equal."""
        normal = replace(self, step_ms=float(self.step_ms))
        return replace(normal, state_key="row", strategy="oldest") if self.batching == "static" else normal

    def to_config(self, name: str) -> mc.ModelConfig:
        self.check()
        config = read_config("gen_static" if self.batching == "static" else "gen_inflight")
        config.name = name
        config.max_batch_size = self.max_batch_size
        del config.instance_group[:]
        config.instance_group.add(count=self.instances)
        if self.batching == "static":
            config.dynamic_batching.max_queue_delay_microseconds = self.queue_delay_us
        elif self.strategy == "direct":
            _to_direct(config.sequence_batching, self.queue_delay_us)
        else:
            config.sequence_batching.oldest.max_candidate_sequences = self.max_batch_size
            config.sequence_batching.oldest.max_queue_delay_microseconds = self.queue_delay_us
        normal = self.normalised()
        params = {"state_key": normal.state_key, "step_ms": f"{self.step_ms:g}",
                  "honour_cancel": "true" if self.honour_cancel else "false"}
        for key, value in params.items():
            config.parameters[key].string_value = value
        return deployments.place_instances(config)


def _to_direct(seq: mc.ModelSequenceBatching, queue_delay_us: int) -> None:
    """gen_inflight's sequence batching under direct: a slot per generation, and the READY control, which marks the
    padding rows the model must skip."""
    seq.ClearField("oldest")
    seq.direct.max_queue_delay_microseconds = queue_delay_us
    ready = seq.control_input.add(name="READY").control.add(kind=mc.ModelSequenceBatching.Control.CONTROL_SEQUENCE_READY)
    ready.int32_false_true.extend([0, 1])


def strategy_of(config: mc.ModelConfig) -> str:
    """The sequence batcher's strategy: direct when the config says so or names none (Triton's default)."""
    return "oldest" if config.sequence_batching.WhichOneof("strategy_choice") == "oldest" else "direct"


def settings_of(config: mc.ModelConfig) -> GeneratorSettings:
    """A generator config read back into settings (what is deployed)."""
    iterative = is_iterative(config)
    strategy = strategy_of(config) if iterative else "oldest"
    seq = config.sequence_batching
    queue_delay = ((seq.direct if strategy == "direct" else seq.oldest).max_queue_delay_microseconds if iterative
                   else config.dynamic_batching.max_queue_delay_microseconds)
    return GeneratorSettings(
        batching="inflight" if iterative else "static",
        state_key=deployments.parameter(config, "state_key", "corrid"),
        step_ms=float(deployments.parameter(config, "step_ms", "20")),
        honour_cancel=deployments.parameter(config, "honour_cancel", "true").lower() == "true",
        max_batch_size=config.max_batch_size,
        instances=deployments.instance_count(config),
        queue_delay_us=int(queue_delay),
        strategy=strategy,
    )


def shipped_match(settings: GeneratorSettings, repository: Path = MODEL_REPOSITORY) -> str | None:
    """The shipped deployment with exactly these settings, if one has them."""
    for name in GENERATOR_DEPLOYMENTS:
        if settings_of(read_config(name, repository)).normalised() == settings.normalised():
            return name
    return None


def setup_name(settings: GeneratorSettings) -> str:
    """One name per distinct deployment: `gen_lab_<batching>_<hash of the normalised settings>`."""
    normal = settings.normalised()
    # oldest is left out of the hash, so every set-up named before direct existed keeps its name.
    values = sorted((f.name, getattr(normal, f.name)) for f in fields(normal)
                    if not (f.name == "strategy" and normal.strategy == "oldest"))
    return f"{NAME_PREFIX}{normal.batching}_{hashlib.sha256(repr(values).encode()).hexdigest()[:10]}"


def deployment_for(settings: GeneratorSettings) -> tuple[str, mc.ModelConfig]:
    """(name, config) of the deployment these settings make: a shipped one when it matches."""
    shipped = shipped_match(settings)
    if shipped is not None:
        return shipped, read_config(shipped)
    name = setup_name(settings)
    return name, settings.to_config(name)


class HasModels(Protocol):
    """What loading needs of a server: app/lab/server's LabServer."""

    @property
    def models(self) -> LoadedModels: ...


def ensure(server: HasModels, settings: GeneratorSettings) -> str:
    """Load the deployment these settings make (once per distinct set-up) and return its name."""
    settings.check()
    name, config = deployment_for(settings)
    if name in GENERATOR_DEPLOYMENTS:
        server.models.ensure(name)
    else:
        server.models.ensure(name, config, with_code=True, name_fixes_config=True)
    return name
