"""Claims about configs Triton refuses to load, proven by loading them on the embedded server.

Configs reach the server as the model-repository extension's config override with the model's
files (`load_model(config=<JSON>, files=...)`). With files, Triton's local-file repository
agent parses the JSON into its ModelConfig protobuf before anything else (core r24.10
src/model_repository_manager/model_repository_manager.cc lines 93-104, JsonToModelConfig;
src/model_config_utils.cc lines 2280-2305, protobuf's JSON parser, ignore_unknown_fields false).
"""
from __future__ import annotations

import contextlib
import json

import pytest
from tritonclient.utils import InferenceServerException

from app.lab.deployment import deployments
from app.lab.observation import Level, LogCode, LogWindow
from app.lab.scenario.ids import unique_ids
from tests.claims.helpers import GATE_CODE, gate_config, recogniser_config, send, unique_name
from tests.waiting import wait_for_log

ONEOF_ERROR = "invalid value oneof field 'scheduling_choice' is already set. Cannot set 'dynamic_batching' for type oneof"


def _load_both_batchers(control, name: str, slots: int) -> InferenceServerException:
    """Load the recogniser under `name` with a config that has a dynamic_batching block beside
    its sequence_batching one; return the error. (Triton's protobuf classes cannot even hold
    both, being one oneof, so the JSON is edited.)"""
    body = json.loads(deployments.to_json(recogniser_config(name, slots=slots)))
    assert "sequence_batching" in body
    body["dynamic_batching"] = {"max_queue_delay_microseconds": 100}
    with pytest.raises(InferenceServerException) as refused:
        control.load_model(name, config=json.dumps(body), files={"file:1/model.py": deployments.RECOGNISER_CODE.read_bytes()})
    return refused.value


def test_both_batchers_in_one_config_fail_to_load(lab_server, load):
    """dynamic_batching and sequence_batching are members of one oneof (scheduling_choice) in
    model_config.proto, so a config that sets both is no ModelConfig: the load fails (the client
    is told only "failed to poll from model repository"; the reason is in the server's log), a
    new name never becomes ready, and a model already serving under the name it was loaded
    over keeps serving with its previous config.

    Source: common r24.10 protobuf/model_config.proto lines 1963-2008 (oneof scheduling_choice);
    core r24.10 src/model_repository_manager/model_repository_manager.cc lines 1421-1463 (Poll:
    a model whose info fails to initialise keeps the state it had, "Poll failed for model
    directory ..."), src/model_repository_manager/model_lifecycle.cc lines 458-470 (a READY
    version keeps serving until a new load of it has succeeded).
    """
    with lab_server.client(timeout_s=300) as control:
        serving = load(recogniser_config(unique_name("rules_serving"), slots=2))
        fresh = unique_name("rules_fresh")
        window = LogWindow.start(lab_server)

        refused = _load_both_batchers(control, fresh, slots=2)
        assert refused.message() == f"failed to load '{fresh}', failed to poll from model repository"
        assert not control.is_model_ready(fresh)

        over = _load_both_batchers(control, serving, slots=4)
        assert over.message() == f"failed to load '{serving}', failed to poll from model repository"
        assert control.is_model_ready(serving)
        kept = control.get_model_config(serving)
        assert "sequence_batching" in kept and "dynamic_batching" not in kept and int(kept["max_batch_size"]) == 2
        (corrid,) = unique_ids(1)
        assert send(lab_server.client(), serving, corrid, corrid, start=True, end=True).batch == 1  # it still serves

        reasons = [(e.level, e.message) for e in window.entries() if "Poll failed" in e.message]
        assert reasons == [(Level.ERROR, f"Poll failed for model directory '{name}': : {ONEOF_ERROR}") for name in (fresh, serving)]
        assert not window.select(model=serving, codes=[LogCode.MODEL_UNLOADED, LogCode.MODEL_LOADING])


def test_response_cache_with_sequence_batching_fails_to_load(lab_server):
    """The response cache does not support the sequence batcher: a sequence-batched config that
    sets response_cache { enable: true } is refused when the model loads, and the model never
    becomes ready; the same config without the cache loads.

    Source: core r24.10 src/model_config_utils.cc lines 1500-1510 (ValidateModelConfig: "Response
    Cache does not currently support model ... with sequence batching scheduler").
    """
    with lab_server.client(timeout_s=300) as control:
        name = unique_name("rules_cache")
        config = recogniser_config(name, slots=2)
        config.response_cache.enable = True
        window = LogWindow.start(lab_server)
        try:
            with pytest.raises(InferenceServerException) as refused:
                control.load_model(name, config=deployments.to_json(config), files={"file:1/model.py": deployments.RECOGNISER_CODE.read_bytes()})
            assert not control.is_model_ready(name)
        finally:
            with contextlib.suppress(InferenceServerException):
                control.unload_model(name)
        assert refused.value.message() == f"failed to load '{name}', failed to poll from model repository"
        reason = f"Response Cache does not currently support model {name} with sequence batching scheduler"
        wait_for_log(window, lambda entries: any(reason in e.message for e in entries), "why the cached config was refused")


def _refusal(lab_server, config, code) -> str:
    """Load `config` with `code`, which must fail; return the client's error."""
    with lab_server.client(timeout_s=300) as control:
        try:
            with pytest.raises(InferenceServerException) as refused:
                control.load_model(config.name, config=deployments.to_json(config), files={"file:1/model.py": code.read_bytes()})
            assert not control.is_model_ready(config.name)
        finally:
            with contextlib.suppress(InferenceServerException):
                control.unload_model(config.name)
        return refused.value.message()


def test_a_custom_batching_strategy_is_for_the_dynamic_batcher_only(lab_server, tmp_path):
    """A custom batching library (parameter TRITON_BATCH_STRATEGY_PATH) extends the dynamic
    batcher only: under the dynamic batcher Triton looks for the library (here a path that does
    not exist, so the load fails with "Batching library path not found"); a sequence-batched
    config that names one is refused outright.

    Source: core r24.10 src/backend_model.cc lines 183-221 (TritonModel::Create);
    server r24.10 docs/user_guide/model_configuration.md lines 1054-1075 (Custom Batching).
    """
    missing = str(tmp_path / "no-such-batchstrategy.so")
    for scheduler, reason in (("dynamic", f"Batching library path not found: {missing}"),
                              ("direct", "TRITON_BATCH_STRATEGY_PATH cannot be specified with sequence batcher")):
        config = gate_config(unique_name(f"rules_strategy_{scheduler}"), tmp_path, scheduler=scheduler)
        config.parameters["TRITON_BATCH_STRATEGY_PATH"].string_value = missing
        message = _refusal(lab_server, config, GATE_CODE)
        assert message.startswith(f"load failed for model '{config.name}'") and reason in message, message
