"""Loading deployments on the live server: a bad config changes nothing, one model per distinct set-up."""
from __future__ import annotations

import re

import pytest

from app.lab.deployment import DeploymentError, LabSettings, setup_model_name
from app.lab.scenario.scenario import Scenario
from app.recogniser.engine import driver
from tests.server_calls import ask


def test_matching_settings_reuse_the_shipped_deployment(deployer):
    applied = deployer.apply(LabSettings())
    assert applied.reused and applied.model == "asr_sequence_direct"


def test_a_rejected_setting_leaves_the_applied_model_serving(lab_server, deployer):
    good = deployer.apply(LabSettings(scheduler="direct", slots=2))
    with pytest.raises(DeploymentError):
        deployer.apply(LabSettings(scheduler="dynamic", state_key="corrid"))
    result = driver.run(lab_server, Scenario(good.model, ["STILL HERE"]))
    assert result.all_intact
    assert ask(lab_server, "get_model_config", good.model)["max_batch_size"] == 2


def test_learners_who_choose_the_same_set_up_share_one_model(deployer):
    a = deployer.apply(LabSettings(slots=3))
    b = deployer.apply(LabSettings(slots=3))
    assert a.model == b.model == setup_model_name(LabSettings(slots=3)) and not a.reused


@pytest.mark.parametrize("a, b", [
    (LabSettings(slots=3), LabSettings(slots=5)),
    (LabSettings(scheduler="oldest", slots=3), LabSettings(scheduler="direct", slots=3)),
    (LabSettings(honour_ready=False), LabSettings(honour_ready=True, slots=3)),
    (LabSettings(scheduler="oldest", queue_delay_us=100), LabSettings(scheduler="oldest", queue_delay_us=200)),
])
def test_different_set_ups_get_different_models(a, b):
    assert setup_model_name(a) != setup_model_name(b)
    for name in (setup_model_name(a), setup_model_name(b)):
        assert re.fullmatch(r"asr_lab_(dynamic|direct|oldest)_[0-9a-f]{10}", name), name


def test_settings_the_scheduler_ignores_do_not_load_a_second_copy():
    # model_config.proto StrategyDirect: max_queue_delay_microseconds is ignored while
    # minimum_slot_utilization is 0, so these two are one deployment.
    assert setup_model_name(LabSettings(slots=3, queue_delay_us=0)) == setup_model_name(LabSettings(slots=3, queue_delay_us=5000))


def test_applying_another_set_up_leaves_the_first_serving(lab_server, deployer):
    first = deployer.apply(LabSettings(scheduler="dynamic", slots=3))
    second = deployer.apply(LabSettings(scheduler="direct", slots=3))
    assert first.model != second.model
    with lab_server.client() as client:
        assert "dynamic_batching" in client.get_model_config(first.model)
        assert "sequence_batching" in client.get_model_config(second.model)
        assert "sequence_batching" in second.pbtxt
