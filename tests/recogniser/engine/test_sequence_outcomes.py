"""What each deployment does to interleaved streaming sessions, on the real server.

Every scenario runs ONCE, as a learner runs it (benchmarks/outcome_reliability.py measures
how often one run shows the outcome). Mixing is proven from the raw STATE_OWNER the model
reported: the state a corrupted chunk read must have been written by ANOTHER SESSION OF THE
SAME RUN, never by a session of an earlier test that left state behind in a shared cell.
"""
from __future__ import annotations

import numpy as np
import pytest
import tritonclient.http as http
from tritonclient.utils import InferenceServerException

from app.lab.deployment import LabSettings
from app.lab.scenario.scenario import Scenario, random_texts
from app.recogniser.engine import driver, presets
from app.recogniser.engine.judgement import evidence
from app.recogniser.engine.judgement.verdicts import PADDING_OWNER
from tests.lab.idle_gaps import assert_intact_unless_idle_too_long, largest_gaps_s


def verdicts(result) -> dict:
    return result.sessions["verdict"].value_counts().to_dict()


def assert_only_own_state(result) -> None:
    """Sessions that began with START read a fresh cell first, then only their own state."""
    q = result.requests
    assert (q[q["chunk"] == 0]["state_owner"].astype("uint64") == 0).all(), "START must give a fresh cell"
    assert evidence.read_only_own_state(result)


def test_direct_keeps_eight_sessions_intact_and_pinned(lab_server, deployer):
    # A deployment of its own (the shipped one's scheduler, 2 instances x 4 slots): every slot is
    # free when the run starts. On the shipped asr_sequence_direct an earlier test's unfinished
    # sequence (the pipelined-client exercise leaves some to the 5 s reaper) can still hold one.
    own = LabSettings(scheduler="direct", instances=2, slots=4, queue_delay_us=0, idle_timeout_us=4_000_000)
    model = deployer.apply(own, reuse_shipped=False).model
    result = driver.run(lab_server, Scenario(model, random_texts(8, 30, seed=11), think_ms=15, jitter_ms=10))
    assert verdicts(result) == {"intact": 8}
    assert len(result.requests) == 8 * 30
    assert_only_own_state(result)
    for pinned in result.sessions["slots"]:
        assert len(pinned) == 1, f"a session moved between (instance, slot) pairs: {pinned}"
    # 8 sessions on 2 instances x 4 slots use every pair exactly once.
    assert sorted(p[0] for p in result.sessions["slots"]) == [(i, s) for i in range(2) for s in range(4)]


def test_oldest_keeps_twelve_sessions_intact(lab_server):
    result = driver.run(lab_server, Scenario("asr_sequence_oldest", random_texts(12, 20, seed=12), think_ms=15))
    assert verdicts(result) == {"intact": 12}
    assert_only_own_state(result)  # 12 sessions on 8 places: the 4 that waited still began fresh
    # Oldest does move sessions between rows: that is why its state must be keyed by CORRID.
    assert any(len(pinned) > 1 for pinned in result.sessions["slots"])


def test_oldest_with_slot_keyed_state_mixes_sessions_of_the_same_run(lab_server, deployer):
    _, result = presets.run_preset(lab_server, deployer, "oldest_wrong")
    assert set(verdicts(result)) <= {"foreign", "lost", "intact"} and not result.all_intact
    # Requests read state another session of THIS run wrote, and came back wrong for it.
    mixed = evidence.mixing_broke_chunks(result)
    assert not mixed.empty, f"no chunk read another session of this run: {verdicts(result)}"
    assert mixed["owner_session"].nunique() >= 2


def test_direct_that_ignores_ready_folds_padding_into_sessions(lab_server, deployer):
    _, result = presets.run_preset(lab_server, deployer, "forgot_ready")
    assert set(verdicts(result)) <= {"garbage", "intact"}, verdicts(result)
    from_padding = evidence.broke_on_padding(result)
    assert from_padding, result.sessions[["session", "verdict", "detail_code", "detail_values"]].to_dict("records")
    assert set(result.sessions.set_index("session").loc[from_padding, "read_state_of"]) == {"padding"}
    # Direct pins sessions to slots and START clears them: no other session's state, and none
    # left by an earlier run, is ever read.
    assert evidence.owners_read(result) <= {0, PADDING_OWNER} | {p.tag for p in result.plans}


def test_dynamic_session_keyed_state_is_lost_across_two_instances(lab_server, deployer):
    applied = deployer.apply(LabSettings(scheduler="dynamic", instances=2, state_key="session"))
    result = driver.run(lab_server, Scenario(applied.model, ["STREAMING SPEECH IS STATEFUL"], think_ms=5))
    assert verdicts(result) == {"lost": 1}
    assert result.sessions.iloc[0]["instances"] == [0, 1]


def test_dynamic_session_keyed_state_survives_on_one_instance(lab_server, deployer):
    applied = deployer.apply(LabSettings(scheduler="dynamic", instances=1, state_key="session"))
    result = driver.run(lab_server, Scenario(applied.model, ["STREAMING SPEECH IS STATEFUL"], think_ms=5))
    assert verdicts(result) == {"intact": 1}


def test_dynamic_slot_keyed_state_mixes_concurrent_sessions(lab_server, deployer):
    # A deployment of its own, loaded fresh: no cell holds state from any earlier run, so every
    # owner a chunk reads is fresh (0) or a session of this very run.
    applied = deployer.apply(presets.get("the_mistake").settings, reuse_shipped=False)
    result = driver.run(lab_server, presets.get("the_mistake").traffic.scenario(applied.model))
    assert evidence.owners_read(result) <= {0} | {p.tag for p in result.plans}
    assert set(verdicts(result)) <= {"foreign", "lost", "intact"}
    assert not evidence.mixing_broke_chunks(result).empty
    # With no leftovers, the board's verdicts name sessions of this run as the culprits.
    mixed = evidence.broke_on_another_session(result)
    assert mixed, verdicts(result)
    sessions = result.sessions.set_index("session")
    for session, other in mixed.items():
        assert sessions.loc[session, "verdict"] == "foreign" and sessions.loc[session, "read_state_of"] == other
        assert sessions.loc[session, "detail_code"] == "other_session"
        assert sessions.loc[session, "detail_values"]["other_session"] == other


def test_the_mistake_preset_on_the_shared_deployment_mixes_sessions_of_the_same_run(lab_server, deployer):
    # The shipped asr_dynamic keeps cells from earlier runs; the mixing must still be this run's.
    _, result = presets.run_preset(lab_server, deployer, "the_mistake")
    assert not result.all_intact
    mixed = evidence.mixing_broke_chunks(result)
    assert not mixed.empty, verdicts(result)
    assert mixed["owner_session"].nunique() >= 2 and mixed["session"].nunique() >= 2


def test_a_new_sequence_without_start_is_refused_by_the_server(lab_server):
    with lab_server.client() as client:
        audio = http.InferInput("AUDIO", [1, 160], "FP32")
        audio.set_data_from_numpy(np.zeros((1, 160), dtype=np.float32))
        tag = http.InferInput("SESSION", [1, 1], "UINT64")
        tag.set_data_from_numpy(np.array([[1]], dtype=np.uint64))
        with pytest.raises(InferenceServerException, match="START flag"):
            client.infer("asr_sequence_direct", [audio, tag], sequence_id=987654321, sequence_start=False)


def test_a_session_idle_past_the_timeout_is_reaped_and_the_run_goes_on(lab_server, deployer):
    # Session 0 pauses three timeouts long, so its reaping is certain. The others send every
    # think_ms plus a reply's latency, which a loaded CI runner once stretched past a 300 ms
    # timeout (tests/lab/idle_gaps.py): they must be intact only where their own gaps prove it.
    timeout_s = 1.0
    applied = deployer.apply(LabSettings(scheduler="direct", idle_timeout_us=int(timeout_s * 1e6)))
    scenario = Scenario(applied.model, random_texts(3, 12, seed=3), think_ms=10, jitter_ms=0,
                        pauses={0: (4, 3000 * timeout_s)})
    result = driver.run(lab_server, scenario)
    sessions = result.sessions.set_index("session")
    assert sessions.loc[0, "verdict"] == "error"
    assert sessions.loc[0, "first_wrong"] == 5
    assert sessions.loc[0, "detail_code"] == "refused"
    assert "START" in sessions.loc[0, "detail_values"]["error"]  # Triton's own words, verbatim
    gaps = largest_gaps_s(result.requests)
    for session in (1, 2):
        assert_intact_unless_idle_too_long(sessions.loc[session, "verdict"], gaps[session], timeout_s, session)


def test_every_request_is_joined_to_the_servers_trace(lab_server):
    result = driver.run(lab_server, Scenario("asr_sequence_direct", random_texts(2, 8, seed=4)))
    assert result.traced
    assert result.requests["queue_ms"].notna().all()
    assert (result.requests["compute_ms"] > 0).all()
    assert result.server["inference_count"] == 16
    assert result.server["metrics"]["nv_inference_request_success"] == 16
