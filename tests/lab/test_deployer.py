"""Loading deployments on the live server: a bad config changes nothing, learners get their own model."""
from __future__ import annotations

import re

import pytest

from app.lab import driver
from app.lab.deployer import learner_model_name
from app.lab.deployments import DeploymentError, LabSettings
from app.lab.scenario import Scenario


def test_matching_settings_reuse_the_shipped_deployment(deployer):
    applied = deployer.apply(LabSettings(), owner="anyone")
    assert applied.reused and applied.model == "asr_sequence_direct"


def test_a_rejected_setting_leaves_the_learners_model_serving(lab_server, deployer):
    good = deployer.apply(LabSettings(scheduler="direct", slots=2), owner="t-keep")
    with pytest.raises(DeploymentError):
        deployer.apply(LabSettings(scheduler="dynamic", state_key="corrid"), owner="t-keep")
    result = driver.run(lab_server, Scenario(good.model, ["STILL HERE"]))
    assert result.all_intact
    assert lab_server.client().get_model_config(good.model)["max_batch_size"] == 2


@pytest.mark.parametrize("a, b", [("lab-ada", "labada"), ("student-2024-group-a", "student-2024-group-b"),
                                  ("Ada", "ada"), ("学员一", "学员二")])
def test_names_that_look_alike_get_models_of_their_own(a, b):
    assert learner_model_name(a) != learner_model_name(b)
    for name in (learner_model_name(a), learner_model_name(b)):
        assert re.fullmatch(r"asr_lab_[a-z0-9]{1,12}_[0-9a-f]{8}", name), name
    assert learner_model_name(a) == learner_model_name(a), "the same learner finds the same model again"


def test_two_learners_never_share_a_custom_model(deployer):
    a = deployer.apply(LabSettings(slots=3), owner="ada")
    b = deployer.apply(LabSettings(slots=3), owner="bob")
    assert a.model != b.model
    assert a.model == learner_model_name("ada")


def test_apply_flips_one_model_between_schedulers(lab_server, deployer):
    first = deployer.apply(LabSettings(scheduler="dynamic", slots=3), owner="t-flip")
    second = deployer.apply(LabSettings(scheduler="direct", slots=3), owner="t-flip")
    assert first.model == second.model
    assert "sequence_batching" in lab_server.client().get_model_config(second.model)
    assert "sequence_batching" in second.pbtxt


def _ready(server, model: str) -> bool:
    return server.client().is_model_ready(model)


def test_stale_learner_models_are_unloaded_but_one_in_use_never_is(lab_server, monkeypatch):
    from app.lab import deployer as deployer_module

    small = deployer_module.Deployer(lab_server, max_learner_models=1)
    monkeypatch.setattr(deployer_module, "IN_USE_GRACE_S", 3600.0)
    first = small.apply(LabSettings(slots=2, instances=1), owner="t-evict-a")
    second = small.apply(LabSettings(slots=2, instances=1), owner="t-evict-b")
    assert _ready(lab_server, first.model) and _ready(lab_server, second.model)  # a's may still be running

    monkeypatch.setattr(deployer_module, "IN_USE_GRACE_S", 0.0)
    small.apply(LabSettings(slots=2, instances=1), owner="t-evict-c")
    assert not _ready(lab_server, first.model) and not _ready(lab_server, second.model)
