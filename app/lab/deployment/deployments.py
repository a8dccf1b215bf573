"""Read, build, validate and load recogniser deployments (config.pbtxt) on a live server.

Configs are handled as Triton's own ModelConfig protobuf (text_format for config.pbtxt,
json_format for load_model), never parsed by hand. Every deployment runs the same
model.py; a variant differs only in its config. A config is checked here before it is sent,
because a config Triton rejects comes back only as "failed to poll from model repository".
"""
from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from google.protobuf import json_format, text_format
from tritonclient.grpc import model_config_pb2 as mc

from app.lab.deployment.device import instance_kind
from app.lab.deployment.query import values_from_query
from app.lab.deployment.setup_table import STATE_KEYS, field_problems
from app.lab.paths import MODEL_REPOSITORY
from app.lab.problems import LabError, Problem

if TYPE_CHECKING:
    import tritonclient.http as http

RECOGNISER_DEPLOYMENTS = ("asr_dynamic", "asr_sequence_direct", "asr_sequence_oldest")
# The servers the lab and the tests start load these at once; everything else loads on first use.
SHIPPED = (*RECOGNISER_DEPLOYMENTS, "sentiment")
RECOGNISER_CODE = MODEL_REPOSITORY / "asr_dynamic" / "1" / "model.py"
# The token generator (app/generation): in the repository too, but loaded on first use only, as
# a lab deployment is (three more stubs that import torch on every server would cost ~0.75 GB each
# time the lab or a test worker starts one).
GENERATOR_DEPLOYMENTS = ("gen_static", "gen_inflight", "gen_inflight_by_row")
GENERATOR_CODE = MODEL_REPOSITORY / "gen_inflight" / "1" / "model.py"
GENERATOR_INPUTS = {"PROMPT", "MAX_TOKENS", "TAG"}
# The paged-KV engine (app/generation/paged): transformers inside a stub, loaded on first use. Its
# code is two files; a deployment made from settings sends both.
PAGED_ENGINE_DEPLOYMENTS = ("kv_engine",)
PAGED_ENGINE_CODE = tuple(MODEL_REPOSITORY / "kv_engine" / "1" / name for name in ("model.py", "paged.py"))
RECOGNISER_INPUTS = {"AUDIO", "SESSION"}
RECOGNISER_OUTPUTS = {"SYMBOL", "INSTANCE", "SLOT", "BATCH", "STATE_IN", "STATE_OWNER"}
CONTROL_KINDS = ("CONTROL_SEQUENCE_START", "CONTROL_SEQUENCE_END", "CONTROL_SEQUENCE_READY", "CONTROL_SEQUENCE_CORRID")


class DeploymentError(LabError):
    """A config that must not be loaded; .problems say which setting and why (app/text/problems.py)."""


def read_config(name: str, repository: Path = MODEL_REPOSITORY) -> mc.ModelConfig:
    path = repository / name / "config.pbtxt"
    return parse_pbtxt(path.read_text(), source=str(path))


# protobuf prefixes its message with 'line:column : '; the numbers are also on the error.
_POSITION = re.compile(r"^\d+:\d+\s*:\s*")


def parse_pbtxt(text: str, source: str = "config.pbtxt") -> mc.ModelConfig:
    """The one place a config.pbtxt is read, for the lab's deployments and the checker alike: a
    text protobuf rejects (an unknown field, two schedulers, a mistyped enum) is refused with
    its line, column and protobuf's own message."""
    try:
        return text_format.Parse(text, mc.ModelConfig())
    except text_format.ParseError as err:
        raise DeploymentError("pbtxt_unreadable", source=source, line=err.GetLine() or 0, column=err.GetColumn() or 0,
                              error=_POSITION.sub("", str(err))) from None


def to_pbtxt(config: mc.ModelConfig) -> str:
    return text_format.MessageToString(config)


def to_json(config: mc.ModelConfig) -> str:
    return json_format.MessageToJson(config, preserving_proto_field_name=True)


def scheduler_of(config: mc.ModelConfig) -> str:
    choice = config.WhichOneof("scheduling_choice")
    if choice == "dynamic_batching":
        return "dynamic"
    if choice == "sequence_batching":
        return config.sequence_batching.WhichOneof("strategy_choice") or "direct"
    return "none"


def parameter(config: mc.ModelConfig, key: str, default: str = "") -> str:
    return config.parameters[key].string_value if key in config.parameters else default


def place_instances(config: mc.ModelConfig, kind: str | None = None) -> mc.ModelConfig:
    """Copy of config whose instance groups run on `kind` (default: this machine's choice)."""
    placed = mc.ModelConfig()
    placed.CopyFrom(config)
    kind_value = mc.ModelInstanceGroup.Kind.Value(kind or instance_kind())
    if not placed.instance_group:
        placed.instance_group.add(count=1)
    for group in placed.instance_group:
        group.kind = kind_value
        if kind_value == mc.ModelInstanceGroup.KIND_CPU:
            del group.gpus[:]
    return placed


@dataclass(frozen=True)
class LabSettings:
    """The lab's few controls; one setting changes one thing in the config."""

    scheduler: str = "direct"
    instances: int = 2
    slots: int = 4
    queue_delay_us: int = 2000
    idle_timeout_us: int = 5_000_000
    state_key: str = "slot"
    honour_ready: bool = True
    # direct only. Under direct the queue delay is ignored unless this is above 0: a batch then
    # waits (up to the delay) until this share of the slots has a ready request.
    min_slot_utilization: float = 0.0

    @property
    def queue_delay_applies(self) -> bool:
        """Whether the scheduler honours queue_delay_us (model_config.proto StrategyDirect)."""
        return self.scheduler != "direct" or self.min_slot_utilization > 0

    def problems(self) -> list[Problem]:
        """Every reason this combination cannot be deployed, as codes (words: app/text/problems.py)."""
        out = field_problems(self, "settings", self.scheduler)  # each setting's range or choices: setup_table.py
        if self.state_key == "corrid" and self.scheduler == "dynamic":
            out.append(Problem("corrid_needs_sequence"))
        return out

    def check(self) -> None:
        problems = self.problems()
        if problems:
            raise DeploymentError(problems)

    def to_config(self, name: str) -> mc.ModelConfig:
        self.check()
        config = read_config("asr_sequence_direct")
        config.name = name
        config.max_batch_size = self.slots
        controls = list(config.sequence_batching.control_input)
        config.ClearField("sequence_batching")
        config.ClearField("dynamic_batching")
        if self.scheduler == "dynamic":
            config.dynamic_batching.max_queue_delay_microseconds = self.queue_delay_us
        else:
            seq = config.sequence_batching
            seq.max_sequence_idle_microseconds = self.idle_timeout_us
            seq.control_input.extend(controls)
            if self.scheduler == "direct":
                seq.direct.SetInParent()  # `direct { }` even when it has nothing to set
                if self.queue_delay_applies:
                    seq.direct.max_queue_delay_microseconds = self.queue_delay_us
                    seq.direct.minimum_slot_utilization = self.min_slot_utilization
            else:
                seq.oldest.max_candidate_sequences = self.slots
                seq.oldest.preferred_batch_size.append(self.slots)
                seq.oldest.max_queue_delay_microseconds = self.queue_delay_us
        del config.instance_group[:]
        config.instance_group.add(count=self.instances)
        config.parameters["state_key"].string_value = self.state_key
        config.parameters["honour_ready"].string_value = "true" if self.honour_ready else "false"
        return place_instances(config)

    def normalised(self) -> LabSettings:
        """Same deployment, with settings the scheduler ignores set to their defaults."""
        if self.scheduler == "dynamic":
            return replace(self, idle_timeout_us=LabSettings.idle_timeout_us, honour_ready=True, min_slot_utilization=0.0)
        if self.scheduler == "oldest":
            return replace(self, min_slot_utilization=0.0)
        if not self.queue_delay_applies:
            return replace(self, queue_delay_us=0)
        return self

    def to_query(self) -> dict[str, str]:
        return {f.name: str(getattr(self, f.name)).lower() if f.type in (bool, "bool") else str(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_query(cls, query: dict[str, Any]) -> LabSettings:
        """Settings from a URL query; values that do not parse keep their defaults."""
        values = values_from_query(cls, query)
        return cls(**values)


def instance_count(config: mc.ModelConfig) -> int:
    """Model instances the config asks for (a group without a count is one); under the Python
    backend each is a stub process of its own."""
    return sum(group.count or 1 for group in config.instance_group) or 1


def settings_of(config: mc.ModelConfig) -> LabSettings:
    """Read a recogniser config back into lab settings (what is deployed now)."""
    scheduler = scheduler_of(config)
    seq = config.sequence_batching
    if scheduler == "dynamic":
        delay = config.dynamic_batching.max_queue_delay_microseconds
    elif scheduler == "oldest":
        delay = seq.oldest.max_queue_delay_microseconds
    else:
        delay = seq.direct.max_queue_delay_microseconds
    return LabSettings(
        scheduler=scheduler,
        instances=instance_count(config),
        slots=config.max_batch_size,
        queue_delay_us=delay,
        idle_timeout_us=seq.max_sequence_idle_microseconds or 1_000_000,
        state_key=parameter(config, "state_key", "slot"),
        honour_ready=parameter(config, "honour_ready", "true") == "true",
        # a proto float: round off float32 noise so 0.3 reads back as 0.3
        min_slot_utilization=round(seq.direct.minimum_slot_utilization, 4) if scheduler == "direct" else 0.0,
    )


def validate_recogniser(config: mc.ModelConfig) -> None:
    """Checks a learner-written recogniser config before it reaches the server."""
    problems = []
    if not re.fullmatch(r"[A-Za-z0-9_\-]+", config.name or ""):
        problems.append(Problem("config_name"))
    if config.backend != "python":
        problems.append(Problem("config_backend"))
    names = {i.name for i in config.input}
    if names != RECOGNISER_INPUTS:
        problems.append(Problem("config_inputs", {"found": ", ".join(sorted(names))}))
    outs = {o.name for o in config.output}
    if not outs <= RECOGNISER_OUTPUTS or "SYMBOL" not in outs:
        problems.append(Problem("config_outputs", {"allowed": ", ".join(sorted(RECOGNISER_OUTPUTS))}))
    if config.max_batch_size < 1:
        problems.append(Problem("config_max_batch_size"))
    if config.HasField("sequence_batching"):
        kinds = {mc.ModelSequenceBatching.Control.Kind.Name(c.kind) for ci in config.sequence_batching.control_input for c in ci.control}
        missing = [k for k in CONTROL_KINDS if k not in kinds]
        if missing:
            problems.append(Problem("config_controls", {"missing": ", ".join(missing)}))
        oldest = config.sequence_batching.oldest
        if any(size > config.max_batch_size for size in oldest.preferred_batch_size):
            problems.append(Problem("config_preferred_batch_size"))
    key = parameter(config, "state_key", "slot")
    if key not in STATE_KEYS:
        problems.append(Problem("config_state_key", {"choices": ", ".join(STATE_KEYS)}))
    if key == "corrid" and not config.HasField("sequence_batching"):
        problems.append(Problem("config_corrid_needs_sequence"))
    if parameter(config, "honour_ready", "true") not in ("true", "false"):
        problems.append(Problem("config_honour_ready"))
    if problems:
        raise DeploymentError(problems)


def is_generator(config: mc.ModelConfig) -> bool:
    """A config for the token generator's code (its inputs), not the recogniser's."""
    return {i.name for i in config.input} == GENERATOR_INPUTS and not is_paged_engine(config)


def is_paged_engine(config: mc.ModelConfig) -> bool:
    """A config for the paged-KV engine's code: it answers with the blocks a request holds."""
    return "BLOCKS" in {o.name for o in config.output}


def load(client: http.InferenceServerClient, config: mc.ModelConfig, with_code: bool = False) -> None:
    """Load (or replace) a deployment; with_code sends the model.py its inputs call for (the
    recogniser's, after checking the config fits that code, since Triton's own error is vague; or
    the generator's, whose settings app/generation checks) for a name not in the repository."""
    files = None
    if with_code and is_paged_engine(config):
        files = {f"file:1/{path.name}": path.read_bytes() for path in PAGED_ENGINE_CODE}
    elif with_code and is_generator(config):
        files = {"file:1/model.py": GENERATOR_CODE.read_bytes()}
    elif with_code:
        validate_recogniser(config)
        files = {"file:1/model.py": RECOGNISER_CODE.read_bytes()}
    client.load_model(config.name, config=to_json(config), files=files)
