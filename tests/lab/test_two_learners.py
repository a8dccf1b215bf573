"""Two learners press Run at the same moment on the one real server: each run is their own.

Before the run queue, learners on one preset shared its slots: their timelines showed each
other's sessions, the statistics counted both, and "the fix" could come back with sessions
refused. Here both runs go through deployer.apply + driver.run exactly as the lab page does.
"""
from __future__ import annotations

import threading

from app.lab.records import Traffic
from app.recogniser.engine import driver, presets

TRAFFIC = Traffic(sessions=8, chunks=10, seed=5)


def _together(deployer, lab_server, names: list[str]):
    results, errors = {}, []
    barrier = threading.Barrier(len(names))

    def learner(i: int, name: str) -> None:
        try:
            model = deployer.apply(presets.get(name).settings).model
            barrier.wait(30)
            results[i] = driver.run(lab_server, TRAFFIC.scenario(model))
        except Exception as err:  # reported below with its message
            errors.append(f"{type(err).__name__}: {err}")

    threads = [threading.Thread(target=learner, args=(i, n)) for i, n in enumerate(names)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
    assert not errors, errors
    return [results[i] for i in range(len(names))]


def _own_traffic_only(result, states_reset: bool = True) -> None:
    tags = {p.tag for p in result.plans}
    assert set(result.requests["tag"]) == tags
    if states_reset:  # under a sequence batcher START clears a slot's state: any owner is one of ours
        owners = set(result.requests["state_owner"]) - {0}
        assert owners <= tags, "a chunk read state that only another learner's session could have left"
    assert (result.requests["request_id"].str.split(":").str[0] == result.run_id).all()
    # The statistics delta is taken while the run holds its deployment: its own requests only.
    assert result.server.get("inference_count") == len(result.requests)


def test_two_learners_on_the_same_preset_each_see_their_own_intact_run(lab_server, deployer):
    a, b = _together(deployer, lab_server, ["the_fix", "the_fix"])
    for result in (a, b):
        assert result.all_intact, result.sessions[["verdict", "detail_code"]].to_dict("records")
        assert (result.requests["error"] == "").all()
        _own_traffic_only(result)
    assert not set(a.requests["tag"]) & set(b.requests["tag"])
    # They took turns on the deployment: on the server's own clock (the trace), every request of
    # one run was answered before the other's first request arrived.
    assert a.traced and b.traced
    first, second = sorted((a, b), key=lambda r: r.requests["request_start_ns"].min())
    assert first.requests["compute_end_ns"].max() < second.requests["request_start_ns"].min()


def test_the_mistake_and_the_fix_at_once_give_what_each_gives_alone(lab_server, deployer):
    mistake, fix = _together(deployer, lab_server, ["the_mistake", "the_fix"])
    assert not mistake.all_intact, "the dynamic batcher with slot-keyed state mixes sessions, alone or not"
    assert fix.all_intact
    _own_traffic_only(fix)
    # Slot-keyed state under the dynamic batcher may still hold an earlier run's owner: the
    # corruption this preset teaches. Its traffic and statistics are still its own.
    _own_traffic_only(mistake, states_reset=False)
