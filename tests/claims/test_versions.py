"""Claims about model versions and the version policy, on the embedded server (explicit model control).

A test-only gate probe whose replies carry the version that ran them (args["model_version"]),
loaded first with version 1 only, then again with versions 1 and 2 (the files of a load
override are the whole model directory, so both are sent). A request without a version goes
to the highest READY version (core r24.10 src/model_repository_manager/model_lifecycle.cc
lines 356-375, ModelLifeCycle::GetModel).
"""
from __future__ import annotations

import pytest
import tritonclient.http as http
from tritonclient.utils import InferenceServerException

from tests.claims.helpers import GATE_CODE, gate_config, gate_inputs, gate_reply, unique_name
from tests.waiting import wait_for


def _version_served(client, model: str, version: str = "") -> int:
    return gate_reply(client.infer(model, gate_inputs(http, 1), model_version=version))["VERSION"]


def _ready_versions(client, model: str, deadline_s: float = 60) -> dict[str, bool]:
    """{version: ready} for versions 1 and 2 once no version is still loading or unloading."""
    def settled() -> bool:
        states = {e.get("version"): e.get("state") for e in client.get_model_repository_index() if e["name"] == model}
        return not {"LOADING", "UNLOADING"} & set(states.values())

    wait_for(settled, f"no version of {model} to be loading or unloading", deadline_s)
    return {v: client.is_model_ready(model, v) for v in ("1", "2")}


def _load_version_1(load, gate, stem: str, num_versions: int | None):
    """Load the probe with version 1 only (and the given latest.num_versions); return (name, config)."""
    config = gate_config(unique_name(stem), gate.folder, scheduler="none", max_batch_size=1)
    if num_versions is not None:
        config.version_policy.latest.num_versions = num_versions
    model = load(config, code=GATE_CODE, versions=(1,))
    return model, config


def test_default_policy_unloads_version_1_when_version_2_loads(lab_server, load, gate, client):
    """With no version_policy the server applies latest { num_versions: 1 }: once version 2
    has loaded, version 1 is unloaded, so a client that names version 1 (to roll back, say)
    is refused, and unnamed requests go to version 2.

    Source: core r24.10 src/model_config_utils.cc lines 727-732 (NormalizeModelConfig: no
    version_policy -> latest, num_versions 1); src/model_repository_manager/model_lifecycle.cc
    lines 84-141 (VersionsToLoad keeps the num_versions highest version folders) and 779-796
    (OnLoadFinal releases every READY version older than the new load); server
    r24.10 docs/user_guide/model_configuration.md lines 635-660 ("Version Policy").
    """
    model, config = _load_version_1(load, gate, "version_default", None)
    assert _ready_versions(client, model) == {"1": True, "2": False}
    assert _version_served(client, model) == 1
    assert client.get_model_config(model)["version_policy"] == {"latest": {"num_versions": 1}}
    load(config, code=GATE_CODE, versions=(1, 2))
    assert _ready_versions(client, model) == {"1": False, "2": True}
    assert _version_served(client, model) == 2
    with pytest.raises(InferenceServerException, match="version 1"):
        _version_served(client, model, "1")


def test_num_versions_2_keeps_both_versions_serving(lab_server, load, gate, client):
    """With version_policy latest { num_versions: 2 }, loading version 2 leaves version 1
    loaded: each serves the requests that name it, and unnamed requests go to version 2.

    Source: as test_default_policy_unloads_version_1_when_version_2_loads (VersionsToLoad keeps
    the 2 highest versions, so version 1 is part of the new load and is not released).
    """
    model, config = _load_version_1(load, gate, "version_two", 2)
    assert _ready_versions(client, model) == {"1": True, "2": False}
    load(config, code=GATE_CODE, versions=(1, 2))
    assert _ready_versions(client, model) == {"1": True, "2": True}
    assert (_version_served(client, model, "1"), _version_served(client, model, "2"), _version_served(client, model)) == (1, 2, 2)
