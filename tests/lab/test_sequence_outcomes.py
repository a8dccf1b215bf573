"""What each deployment does to interleaved streaming sessions, on the real server."""
from __future__ import annotations

import numpy as np
import pytest
import tritonclient.http as http
from tritonclient.utils import InferenceServerException

from app.lab import driver, presets
from app.lab.deployments import LabSettings
from app.lab.scenario import Scenario, random_texts


def verdicts(result) -> dict:
    return result.sessions["verdict"].value_counts().to_dict()


def test_direct_keeps_eight_sessions_intact_and_pinned(lab_server):
    result = driver.run(lab_server, Scenario("asr_sequence_direct", random_texts(8, 30, seed=11), think_ms=15, jitter_ms=10))
    assert verdicts(result) == {"intact": 8}
    assert len(result.requests) == 8 * 30
    for pinned in result.sessions["slots"]:
        assert len(pinned) == 1, f"a session moved between (instance, slot) pairs: {pinned}"
    # 8 sessions on 2 instances x 4 slots use every pair exactly once.
    assert sorted(p[0] for p in result.sessions["slots"]) == [(i, s) for i in range(2) for s in range(4)]


def test_oldest_keeps_twelve_sessions_intact(lab_server):
    result = driver.run(lab_server, Scenario("asr_sequence_oldest", random_texts(12, 20, seed=12), think_ms=15))
    assert verdicts(result) == {"intact": 12}
    # Oldest does move sessions between rows: that is why its state must be keyed by CORRID.
    assert any(len(pinned) > 1 for pinned in result.sessions["slots"])


def test_oldest_with_slot_keyed_state_is_corrupted(lab_server, deployer, until):
    result = until(lambda: presets.run_preset(lab_server, deployer, "oldest_wrong", owner="t-oldest-wrong")[1],
                   lambda r: not r.all_intact)
    assert not result.all_intact
    assert set(verdicts(result)) <= {"foreign", "lost", "intact"}
    assert "foreign" in verdicts(result)


def test_direct_that_ignores_ready_folds_padding_into_sessions(lab_server, deployer, until):
    result = until(lambda: presets.run_preset(lab_server, deployer, "forgot_ready", owner="t-ready")[1],
                   lambda r: "garbage" in verdicts(r))
    assert "garbage" in verdicts(result)
    broken = result.sessions[result.sessions["verdict"] == "garbage"]
    assert (broken["read_state_of"] == "padding").any()


def test_dynamic_session_keyed_state_is_lost_across_two_instances(lab_server, deployer, until):
    applied = deployer.apply(LabSettings(scheduler="dynamic", instances=2, state_key="session"), owner="t-dyn2")
    result = until(lambda: driver.run(lab_server, Scenario(applied.model, ["STREAMING SPEECH IS STATEFUL"], think_ms=5)),
                   lambda r: verdicts(r) == {"lost": 1})
    assert verdicts(result) == {"lost": 1}
    assert result.sessions.iloc[0]["instances"] == [0, 1]


def test_dynamic_session_keyed_state_survives_on_one_instance(lab_server, deployer):
    applied = deployer.apply(LabSettings(scheduler="dynamic", instances=1, state_key="session"), owner="t-dyn1")
    result = driver.run(lab_server, Scenario(applied.model, ["STREAMING SPEECH IS STATEFUL"], think_ms=5))
    assert verdicts(result) == {"intact": 1}


def test_dynamic_slot_keyed_state_mixes_concurrent_sessions(lab_server, deployer, until):
    result = until(lambda: presets.run_preset(lab_server, deployer, "the_mistake", owner="t-mistake")[1],
                   lambda r: "foreign" in verdicts(r))
    assert "foreign" in verdicts(result)
    foreign = result.sessions[result.sessions["verdict"] == "foreign"].iloc[0]
    assert "read the state of" in foreign["detail"]


def test_a_new_sequence_without_start_is_refused_by_the_server(lab_server):
    client = lab_server.client()
    audio = http.InferInput("AUDIO", [1, 160], "FP32")
    audio.set_data_from_numpy(np.zeros((1, 160), dtype=np.float32))
    tag = http.InferInput("SESSION", [1, 1], "UINT64")
    tag.set_data_from_numpy(np.array([[1]], dtype=np.uint64))
    with pytest.raises(InferenceServerException, match="START flag"):
        client.infer("asr_sequence_direct", [audio, tag], sequence_id=987654321, sequence_start=False)


def test_a_session_idle_past_the_timeout_is_reaped_and_the_run_goes_on(lab_server, deployer, until):
    applied = deployer.apply(LabSettings(scheduler="direct", idle_timeout_us=300_000), owner="t-idle")
    scenario = Scenario(applied.model, random_texts(3, 12, seed=3), think_ms=10, jitter_ms=0, pauses={0: (4, 1500.0)})
    result = until(lambda: driver.run(lab_server, scenario), lambda r: r.sessions.iloc[0]["verdict"] == "error")
    sessions = result.sessions.set_index("session")
    assert sessions.loc[0, "verdict"] == "error"
    assert sessions.loc[0, "first_wrong"] == 5
    assert "START" in sessions.loc[0, "detail"]
    assert list(sessions.loc[[1, 2], "verdict"]) == ["intact", "intact"]


def test_every_request_is_joined_to_the_servers_trace(lab_server):
    result = driver.run(lab_server, Scenario("asr_sequence_direct", random_texts(2, 8, seed=4)))
    assert result.traced
    assert result.requests["queue_ms"].notna().all()
    assert (result.requests["compute_ms"] > 0).all()
    assert result.server["inference_count"] == 16
    assert result.server["metrics"]["nv_inference_request_success"] == 16
