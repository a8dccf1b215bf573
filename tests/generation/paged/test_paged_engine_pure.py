"""The paged engine's settings, deployments, workload and analysis, without a server."""
from __future__ import annotations

import pandas as pd
import pytest
from tritonclient.grpc import model_config_pb2 as mc

from app.generation.engine.workload import PlannedRequest
from app.generation.paged.engine import (
    MODEL,
    PAGED,
    TOY,
    PagedSettings,
    PagedWorkload,
    analysis,
    deployment_for,
    is_paged_name,
    kv_bytes_per_token,
    settings_of,
    setup_name,
)
from app.lab.deployment import PAGED_ENGINE_DEPLOYMENTS, deployments
from app.lab.problems import LabError


def test_the_shipped_deployment_is_the_default_settings_and_runs_the_engine_code():
    config = deployments.read_config(MODEL)
    assert MODEL in PAGED_ENGINE_DEPLOYMENTS and settings_of(config) == PagedSettings()
    # Shaped as Triton's vLLM backend: decoupled, Triton's batcher off, no scheduler section.
    assert config.max_batch_size == 0 and config.model_transaction_policy.decoupled
    assert config.WhichOneof("scheduling_choice") is None
    assert deployments.is_paged_engine(config) and not deployments.is_generator(config)
    assert all(g.kind == mc.ModelInstanceGroup.KIND_AUTO for g in config.instance_group)  # the lab places them
    assert deployment_for(PagedSettings()) == (MODEL, config)


@pytest.mark.parametrize("kind", ["KIND_GPU", "KIND_CPU"])
def test_a_setup_is_placed_on_the_chosen_kind(kind):
    config = deployments.place_instances(PagedSettings(num_blocks=8).to_config("kv_lab_x"), kind)
    assert [mc.ModelInstanceGroup.Kind.Name(g.kind) for g in config.instance_group] == [kind]


def test_settings_round_trip_through_a_config_and_name_their_deployment():
    settings = PagedSettings(num_blocks=12, block_size=8, max_batch_tokens=32, scheduler="prefill_first",
                             prefix_sharing=False, step_ms=5)
    config = settings.to_config(setup_name(settings))
    reparsed = deployments.parse_pbtxt(deployments.to_pbtxt(config))
    assert settings_of(reparsed) == settings
    assert setup_name(settings) == setup_name(PagedSettings(num_blocks=12, block_size=8, max_batch_tokens=32,
                                                            scheduler="prefill_first", prefix_sharing=False, step_ms=5.0))
    assert setup_name(settings) != setup_name(PagedSettings())
    assert deployment_for(settings)[0] == setup_name(settings) and is_paged_name(setup_name(settings))
    assert not is_paged_name("gen_inflight")


def test_a_setup_loads_with_both_files_of_the_engine_code():
    paths = {p.name for p in deployments.PAGED_ENGINE_CODE}
    assert paths == {"model.py", "paged.py"} and all(p.exists() for p in deployments.PAGED_ENGINE_CODE)


@pytest.mark.parametrize(("settings", "codes"), [
    (PagedSettings(scheduler="lifo"), ["kv_scheduler_unknown"]),
    (PagedSettings(num_blocks=1), ["kv_setting_range"]),
    (PagedSettings(block_size=100, step_ms=-1), ["kv_setting_range", "kv_setting_range"]),
])
def test_bad_settings_are_refused_with_every_reason(settings, codes):
    assert [p.code for p in settings.problems()] == codes
    with pytest.raises(LabError):
        settings.to_config("kv_lab_bad")


def test_the_toy_models_kv_bytes_per_token():
    # layers x KV heads x head size x 2 (K and V) x 4 bytes (float32)
    assert kv_bytes_per_token(**TOY) == 2 * 2 * 16 * 2 * 4 == 512


def test_a_workload_shares_its_system_prompt_and_plans_the_same_requests_for_the_same_seed():
    work = PagedWorkload(requests=6, system_tokens=32, long_prompt_tokens=100, long_at_ms=50, seed=3)
    tags = list(range(1, 8))
    plans = work.plan(tags)
    assert plans == work.plan(tags) and len(plans) == 7
    normal = [p for p in plans if p.index < 6]
    assert len({p.prompt[:32] for p in normal}) == 1
    assert all(work.min_user_tokens <= len(p.prompt) - 32 <= work.max_user_tokens for p in normal)
    assert all(work.min_answer_tokens <= p.max_tokens <= work.max_answer_tokens for p in normal)
    [long] = [p for p in plans if p.index == 6]
    assert len(long.prompt) == 100 and long.arrival_s == 0.05
    assert [p.arrival_s for p in plans] == sorted(p.arrival_s for p in plans)
    assert PagedWorkload(seed=4).plan(list(range(8))) != PagedWorkload(seed=3).plan(list(range(8)))


def test_a_bad_workload_names_each_setting():
    bad = PagedWorkload(requests=0, min_answer_tokens=9, max_answer_tokens=3)
    assert [p.code for p in bad.problems()] == ["kv_workload_range", "kv_workload_order"]


def _row(index, tag, t_recv, **values):
    row = {"run_id": "r", "index": index, "tag": tag, "request_id": f"r:{index}", "t_send": 0.0, "t_recv": t_recv,
           "final": False, "empty": False, "error": ""}
    row.update({name.lower(): -1 for name in PAGED.outputs})
    row.update({name.lower(): [] for name in PAGED.list_outputs})
    row.update(values)
    return row


def test_the_analysis_reads_steps_blocks_and_times_from_a_trace():
    plans = [PlannedRequest(0, 10, 0.0, tuple(range(20)), 2), PlannedRequest(1, 11, 0.0, tuple(range(20)), 2)]
    trace = pd.DataFrame([
        _row(0, 10, 0.010, token=5, position=0, step=1, step_tags=[10], step_tokens=20, blocks=[0, 1],
             shared_blocks=[], prefix_blocks=0, free_blocks=6, waiting=1, running=1),
        _row(0, 10, 0.020, token=6, position=1, step=2, step_tags=[10, 11], step_tokens=1, blocks=[0, 1],
             shared_blocks=[0], prefix_blocks=0, free_blocks=5, waiting=0, running=2, final=True),
        _row(1, 11, 0.020, token=7, position=0, step=2, step_tags=[10, 11], step_tokens=4, blocks=[0, 2],
             shared_blocks=[0], prefix_blocks=1, free_blocks=5, waiting=0, running=2),
        _row(1, 11, 0.050, token=8, position=1, step=3, step_tags=[11], step_tokens=1, blocks=[0, 2],
             shared_blocks=[], prefix_blocks=1, free_blocks=6, waiting=0, running=1, final=True),
    ], columns=PAGED.trace_columns)
    requests = analysis.requests_table(trace, plans)
    assert list(requests["received"]) == [[5, 6], [7, 8]]
    assert list(requests["ttft_ms"].round(3)) == [10.0, 20.0]
    assert list(requests["tbt_p50_ms"].round(3)) == [10.0, 30.0]
    assert list(requests["first_step"]) == [1, 2] and list(requests["prefix_blocks"]) == [0, 1]
    steps = analysis.steps_table(trace)
    assert list(steps["step"]) == [1, 2, 3] and list(steps["requests"]) == [1, 2, 1]
    assert list(steps["tokens"]) == [20, 5, 1] and list(steps["waiting"]) == [1, 0, 0]
    blocks = analysis.block_table(trace)
    assert set(blocks[blocks["shared"]]["block"]) == {0}
    assert len(blocks[blocks["step"] == 2]) == 4
    assert analysis.equal_alone(requests, {0: [5, 6], 1: [7, 9]}) == {0: True, 1: False}
    figures = analysis.figures(trace, requests, system_tokens=16, block_size=16)
    assert figures.tokens == 4 and figures.steps == 3 and figures.peak_running == 2
    assert figures.prefix_blocks_reused == 1 and figures.prefix_blocks_possible == 1 and figures.prefix_share == 1.0


def test_the_apps_copy_of_the_toy_models_shape_is_the_models_own():
    # The stub cannot import the app, nor the app the stub's module by name: the app keeps a copy of
    # the toy's shape and positions (settings.TOY, MAX_POSITIONS), held here to paged.py's.
    import importlib.util
    import sys

    from app.generation.paged.engine import settings
    from app.lab.paths import MODEL_REPOSITORY

    spec = importlib.util.spec_from_file_location("kv_paged", MODEL_REPOSITORY / "kv_engine" / "1" / "paged.py")
    paged = importlib.util.module_from_spec(spec)
    sys.modules["kv_paged"] = paged  # its dataclasses look their module up there
    try:
        spec.loader.exec_module(paged)
    finally:
        del sys.modules["kv_paged"]
    assert TOY == {"layers": paged.LAYERS, "kv_heads": paged.KV_HEADS, "head_size": paged.HEAD_DIM,
                   "bytes_per_value": paged.BYTES_PER_VALUE}
    assert kv_bytes_per_token(**TOY) == paged.KV_BYTES_PER_TOKEN and settings.MAX_POSITIONS == paged.MAX_POSITIONS
