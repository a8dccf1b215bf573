"""The generator's deployments: the shipped configs, settings read back, and configs built from settings."""
from __future__ import annotations

import pytest
from tritonclient.grpc import model_config_pb2 as mc

from app.generation.engine import GeneratorSettings, deployments
from app.lab.deployment import GENERATOR_DEPLOYMENTS
from app.lab.deployment import deployments as lab_deployments
from app.lab.paths import MODEL_REPOSITORY

SHIPPED = {
    "gen_static": GeneratorSettings(batching="static", state_key="row", queue_delay_us=5000),
    "gen_inflight": GeneratorSettings(),
    "gen_inflight_by_row": GeneratorSettings(state_key="row"),
}


def test_the_shipped_deployments_run_one_code_and_differ_only_in_their_settings():
    assert set(GENERATOR_DEPLOYMENTS) == set(SHIPPED)
    codes = {(MODEL_REPOSITORY / name / "1" / "model.py").resolve() for name in GENERATOR_DEPLOYMENTS}
    assert codes == {lab_deployments.GENERATOR_CODE.resolve()}
    for name, settings in SHIPPED.items():
        config = deployments.read_config(name)
        assert config.name == name and deployments.settings_of(config) == settings
        assert config.model_transaction_policy.decoupled and lab_deployments.is_generator(config)
        assert all(g.kind == mc.ModelInstanceGroup.KIND_AUTO for g in config.instance_group)  # the lab places them
        assert deployments.shipped_match(settings) == name


def test_only_the_in_flight_deployments_are_iterative_sequences_with_triton_numbering_requests():
    for name in GENERATOR_DEPLOYMENTS:
        config = deployments.read_config(name)
        controls = {c.name: c.control[0] for c in config.sequence_batching.control_input}
        if name == "gen_static":
            assert not deployments.is_iterative(config) and config.WhichOneof("scheduling_choice") == "dynamic_batching"
            continue
        assert deployments.is_iterative(config) and config.sequence_batching.oldest.max_candidate_sequences == 4
        assert controls["START"].kind == mc.ModelSequenceBatching.Control.CONTROL_SEQUENCE_START
        assert controls["CORRID"].data_type == mc.TYPE_UINT64


def test_settings_make_a_config_that_reads_back_as_the_same_settings():
    settings = GeneratorSettings(step_ms=5, honour_cancel=False, max_batch_size=8, instances=2, queue_delay_us=100)
    config = settings.to_config("gen_lab_x")
    assert config.name == "gen_lab_x" and deployments.settings_of(config) == settings
    assert config.sequence_batching.oldest.max_candidate_sequences == 8
    assert lab_deployments.parameter(config, "honour_cancel") == "false" and lab_deployments.parameter(config, "step_ms") == "5"
    static = GeneratorSettings(batching="static", state_key="corrid", step_ms=5)
    assert deployments.settings_of(static.to_config("gen_lab_y")) == static.normalised()


def test_a_setup_is_named_after_its_normalised_settings():
    a, b = GeneratorSettings(step_ms=5), GeneratorSettings(step_ms=6)
    assert deployments.setup_name(a) == deployments.setup_name(GeneratorSettings(step_ms=5.0))
    assert deployments.setup_name(a) != deployments.setup_name(b) and deployments.setup_name(a).startswith("gen_lab_inflight_")
    static = GeneratorSettings(batching="static")
    assert deployments.setup_name(static) == deployments.setup_name(GeneratorSettings(batching="static", state_key="corrid"))
    assert deployments.deployment_for(SHIPPED["gen_inflight"])[0] == "gen_inflight"
    assert deployments.deployment_for(a)[0] == deployments.setup_name(a)
    assert all(deployments.is_generator_name(n) for n in (*GENERATOR_DEPLOYMENTS, deployments.setup_name(a)))
    assert not deployments.is_generator_name("asr_dynamic")


@pytest.mark.parametrize(("settings", "codes"), [
    (GeneratorSettings(batching="continuous"), ["gen_batching_unknown"]),
    (GeneratorSettings(state_key="slot"), ["gen_state_key_unknown"]),
    (GeneratorSettings(step_ms=0), ["gen_setting_range"]),
    (GeneratorSettings(max_batch_size=17, instances=5), ["gen_setting_range", "gen_setting_range"]),
    (GeneratorSettings(queue_delay_us=-1), ["gen_setting_range"]),
])
def test_each_bad_setting_is_named(settings, codes):
    assert [p.code for p in settings.problems()] == codes


def test_direct_settings_make_a_direct_config_with_ready_that_reads_back():
    """In flight under direct (Triton's default strategy): no oldest section, the queue delay on direct, and the READY
    control that marks the padding rows the model skips (lesson 8, direct or oldest for a generation)."""
    settings = GeneratorSettings(strategy="direct", step_ms=5, queue_delay_us=100)
    config = settings.to_config("gen_lab_d")
    seq = config.sequence_batching
    assert seq.WhichOneof("strategy_choice") == "direct" and seq.direct.max_queue_delay_microseconds == 100
    controls = {c.name: c.control[0] for c in seq.control_input}
    assert controls["READY"].kind == mc.ModelSequenceBatching.Control.CONTROL_SEQUENCE_READY
    assert list(controls["READY"].int32_false_true) == [0, 1]
    assert deployments.settings_of(config) == settings
    assert deployments.setup_name(settings) != deployments.setup_name(GeneratorSettings(step_ms=5, queue_delay_us=100))
    # Static batching has no strategy: a direct static set-up is the same deployment as an oldest one.
    assert GeneratorSettings(batching="static", strategy="direct").normalised() == GeneratorSettings(batching="static").normalised()


def test_oldest_set_ups_keep_the_names_they_had_before_direct_existed():
    """setup_name hashes the normalised settings; strategy joined them later and is left out at its default, so a
    deployment loaded (or linked) before keeps its name."""
    import hashlib
    from dataclasses import fields

    settings = GeneratorSettings(step_ms=7, max_batch_size=6)
    normal = settings.normalised()
    before = sorted((f.name, getattr(normal, f.name)) for f in fields(normal) if f.name != "strategy")
    assert deployments.setup_name(settings) == f"gen_lab_inflight_{hashlib.sha256(repr(before).encode()).hexdigest()[:10]}"


def test_an_unknown_strategy_is_named():
    assert [p.code for p in GeneratorSettings(strategy="newest").problems()] == ["gen_strategy_unknown"]
