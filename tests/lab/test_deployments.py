"""Configs: shipped files parse with Triton's own protobuf, variants differ only in config,
the GPU path is chosen in one place, and bad settings are explained before loading."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from tritonclient.grpc import model_config_pb2 as mc

from app.i18n import languages, words
from app.lab.deployment import DeploymentError, LabSettings, deployments, device
from app.lab.paths import MODEL_REPOSITORY, REPO_ROOT
from app.text import problems as problems_text
from tests.i18n.text_checks import reads_in


@pytest.mark.parametrize("name", deployments.SHIPPED)
def test_shipped_configs_parse_and_leave_placement_to_the_lab(name):
    config = deployments.read_config(name)
    assert config.name == name
    assert config.backend == "python"
    # No kind in the files: the official container picks GPU itself, the lab sets it explicitly.
    assert all(g.kind == mc.ModelInstanceGroup.KIND_AUTO for g in config.instance_group)


def test_every_recogniser_deployment_runs_the_same_code():
    codes = {(MODEL_REPOSITORY / n / "1" / "model.py").resolve() for n in deployments.RECOGNISER_DEPLOYMENTS}
    assert codes == {deployments.RECOGNISER_CODE.resolve()}


def test_shipped_recogniser_configs_differ_only_where_the_lesson_says():
    direct = deployments.settings_of(deployments.read_config("asr_sequence_direct"))
    dynamic = deployments.settings_of(deployments.read_config("asr_dynamic"))
    oldest = deployments.settings_of(deployments.read_config("asr_sequence_oldest"))
    assert (direct.scheduler, dynamic.scheduler, oldest.scheduler) == ("direct", "dynamic", "oldest")
    assert dynamic.normalised() == LabSettings(scheduler="dynamic").normalised()
    assert direct == LabSettings(queue_delay_us=0)  # direct ignores a queue delay without min utilisation
    assert direct.normalised() == LabSettings().normalised()
    assert oldest == LabSettings(scheduler="oldest", state_key="corrid")


@pytest.mark.parametrize("kind", ["KIND_GPU", "KIND_CPU"])
def test_instances_are_placed_on_the_chosen_kind(kind):
    placed = deployments.place_instances(deployments.read_config("asr_sequence_direct"), kind)
    assert [mc.ModelInstanceGroup.Kind.Name(g.kind) for g in placed.instance_group] == [kind]
    assert f"kind: {kind}" in deployments.to_pbtxt(placed)


def test_the_kind_is_decided_in_one_place(monkeypatch):
    device.instance_kind.cache_clear()
    monkeypatch.setenv("TRITON_LAB_INSTANCE_KIND", "KIND_GPU")
    try:
        config = LabSettings().to_config("asr_lab_x")
        assert config.instance_group[0].kind == mc.ModelInstanceGroup.KIND_GPU
    finally:
        device.instance_kind.cache_clear()


@pytest.mark.parametrize("scheduler", ["dynamic", "direct", "oldest"])
def test_lab_settings_round_trip_through_a_real_config(scheduler):
    settings = LabSettings(scheduler=scheduler, instances=3, slots=6, queue_delay_us=500, state_key="session", honour_ready=False)
    config = settings.to_config("asr_lab_roundtrip")
    deployments.validate_recogniser(config)
    reparsed = deployments.parse_pbtxt(deployments.to_pbtxt(config))
    assert deployments.settings_of(reparsed).normalised() == settings.normalised()
    assert deployments.scheduler_of(reparsed) == scheduler


def test_direct_writes_a_queue_delay_only_with_a_min_slot_utilization():
    # model_config.proto StrategyDirect: the delay is ignored unless minimum_slot_utilization > 0.
    plain = LabSettings(scheduler="direct", queue_delay_us=3000)
    pbtxt = deployments.to_pbtxt(plain.to_config("asr_lab_direct"))
    assert "direct {" in pbtxt and "max_queue_delay_microseconds" not in pbtxt and "minimum_slot" not in pbtxt
    assert not plain.queue_delay_applies
    assert plain.normalised() == LabSettings(scheduler="direct", queue_delay_us=0).normalised()

    waiting = LabSettings(scheduler="direct", queue_delay_us=3000, min_slot_utilization=0.3)
    config = waiting.to_config("asr_lab_direct")
    assert config.sequence_batching.direct.max_queue_delay_microseconds == 3000
    assert config.sequence_batching.direct.minimum_slot_utilization == pytest.approx(0.3)
    assert waiting.queue_delay_applies
    assert deployments.settings_of(deployments.parse_pbtxt(deployments.to_pbtxt(config))) == waiting
    assert waiting.normalised() != replace(waiting, queue_delay_us=0).normalised()


@pytest.mark.parametrize("scheduler", ["dynamic", "oldest"])
def test_min_slot_utilization_belongs_to_direct_only(scheduler):
    settings = LabSettings(scheduler=scheduler, queue_delay_us=700, min_slot_utilization=0.5, state_key="session")
    pbtxt = deployments.to_pbtxt(settings.to_config("asr_lab_other"))
    assert "minimum_slot_utilization" not in pbtxt and "max_queue_delay_microseconds: 700" in pbtxt
    assert settings.queue_delay_applies
    assert settings.normalised() == replace(settings, min_slot_utilization=0.0).normalised()


def test_oldest_capacity_is_candidates_per_instance():
    config = LabSettings(scheduler="oldest", slots=6).to_config("asr_lab_oldest")
    assert config.sequence_batching.oldest.max_candidate_sequences == 6
    assert list(config.sequence_batching.oldest.preferred_batch_size) == [6]


@pytest.mark.parametrize(
    "settings, code, values, message",
    [
        (LabSettings(scheduler="dynamic", state_key="corrid"), "corrid_needs_sequence", {}, "only with a sequence scheduler"),
        (LabSettings(instances=0), "instances_range", {"low": 1, "high": 4, "value": 0}, "instances must be 1 to 4"),
        (LabSettings(slots=99), "slots_range", {"low": 1, "high": 16, "value": 99}, "slots .* must be 1 to 16"),
        (LabSettings(idle_timeout_us=10), "idle_timeout_range", {"low": 100_000, "high": 60_000_000, "value": 10},
         "idle timeout must be"),
        (LabSettings(scheduler="fifo"), "scheduler_unknown", {"value": "fifo", "choices": "dynamic, direct, oldest"},
         "scheduler must be one of"),
        (LabSettings(state_key="row"), "state_key_unknown", {"value": "row", "choices": "slot, corrid, session"},
         "state key must be one of"),
        (LabSettings(min_slot_utilization=1.5), "min_slot_utilization_range", {"low": 0, "high": 1, "value": 1.5},
         "minimum slot utilisation must be 0 to 1"),
        (LabSettings(min_slot_utilization=-0.25), "min_slot_utilization_range", {"low": 0, "high": 1, "value": -0.25},
         "minimum slot utilisation must be 0 to 1"),
    ],
)
def test_impossible_settings_are_explained(settings, code, values, message):
    with pytest.raises(DeploymentError) as raised:
        settings.to_config("asr_lab_bad")
    assert raised.value.code == code and raised.value.values == values
    english = problems_text.error(raised.value, words("en"))
    assert re.search(message, english)
    for lang in languages():  # the learner's language, with the value given
        shown = problems_text.error(raised.value, words(lang))
        assert reads_in(lang, shown, english) and all(str(v) in shown for k, v in values.items() if k == "value"), (lang, shown)


def test_a_pbtxt_syntax_error_names_line_and_column():
    with pytest.raises(DeploymentError) as raised:
        deployments.parse_pbtxt('name: "x"\nmax_batch_size: "four"\n', source="mine.pbtxt")
    assert raised.value.code == "pbtxt_unreadable"
    assert (raised.value.values["line"], raised.value.values["column"]) == (2, 17)
    assert problems_text.error(raised.value, words("en")).startswith("mine.pbtxt, line 2, column 17: `")


def test_a_learner_config_with_the_wrong_inputs_is_refused():
    config = LabSettings().to_config("asr_lab_inputs")
    config.input[0].name = "WAVE"
    with pytest.raises(DeploymentError) as raised:
        deployments.validate_recogniser(config)
    assert raised.value.code == "config_inputs" and raised.value.values == {"found": "SESSION, WAVE"}
    assert problems_text.error(raised.value, words("en")) == "inputs must be exactly AUDIO and SESSION, found SESSION, WAVE"


def test_settings_survive_a_url_query():
    settings = LabSettings(scheduler="oldest", instances=1, slots=2, state_key="corrid", honour_ready=False)
    assert LabSettings.from_query(settings.to_query()) == settings
    assert LabSettings.from_query({"slots": "lots"}) == LabSettings()


def test_without_an_nvidia_driver_the_kind_is_cpu_without_importing_torch():
    if any(Path(p).exists() for p in device.NVIDIA_DRIVER):
        pytest.skip("this machine has an NVIDIA driver")
    code = "import sys; from app.lab.deployment.device import instance_kind; print(instance_kind(), 'torch' in sys.modules)"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_LAB_INSTANCE_KIND"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=REPO_ROOT)
    assert out.stdout.split() == ["KIND_CPU", "False"]
