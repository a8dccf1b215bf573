"""The stream diagnosis on hand-made streams (pure): each class, and the request it names."""
from __future__ import annotations

import numpy as np

from app.checker.engine.streaming import stream_diagnosis as sd
from app.checker.engine.streaming.streams import Stream

COMPARER = sd.Comparer({"TOKEN": "INT32", "STEP": "INT32"}, {"TOKEN": 0.0, "STEP": 0.0})


def stream(request: int, tokens: list[int], steps: list[int] | None = None, ended: bool = True, given_up: str = "") -> Stream:
    steps = steps if steps is not None else list(range(len(tokens)))
    return Stream(request, "x", "a", responses=[{"TOKEN": np.array([t], np.int32), "STEP": np.array([k], np.int32)}
                                                for t, k in zip(tokens, steps, strict=True)], ended=ended, given_up=given_up)


LONE = {0: stream(0, [5, 6, 7, 8]), 1: stream(1, [40, 41, 42, 43, 44]), 2: stream(2, [20, 21])}


def classify(got: Stream) -> dict | None:
    return sd.classify(got, LONE[got.request], LONE, COMPARER)


def test_a_stream_like_its_lone_one_has_nothing_to_say():
    assert classify(stream(0, [5, 6, 7, 8])) is None


def test_a_stream_that_continues_another_requests_lone_stream_names_it_and_the_step():
    entry = classify(stream(0, [5, 42, 43, 44], [0, 2, 3, 4]))
    assert entry["class"] == "foreign" and entry["step"] == 1
    assert entry["source"] == {"request": 1, "step": 2} and entry["matched"] == 3


def test_a_stream_that_starts_over_lost_its_state():
    entry = classify(stream(0, [5, 6, 5, 6, 7, 8], [0, 1, 0, 1, 2, 3]))
    assert entry["class"] == "lost" and entry["step"] == 2 and entry["matched"] == 4


def test_early_late_and_never_ended_streams():
    assert classify(stream(0, [5, 6]))["class"] == "ended_early"
    assert classify(stream(2, [20, 21, 22], [0, 1, 2]))["class"] == "ended_late"
    never = classify(stream(0, [5], ended=False, given_up="idle"))
    assert never["class"] == "never_ended" and never["given_up"] == "idle" and never["step"] == 1


def test_a_response_that_shares_some_outputs_with_one_other_lone_response_is_mixed_and_two_alike_are_not_named():
    mixed = classify(stream(0, [5, 6, 99, 8], [0, 1, 4, 3]))  # STEP 4: only request 1 has a step 4
    assert mixed["class"] == "mixed" and mixed["source"] == {"request": 1, "step": 4} and mixed["outputs"] == ["STEP"]
    other = classify(stream(0, [5, 6, 99, 8], [0, 1, 1, 3]))  # STEP 1: requests 1 and 2 both have one
    assert other["class"] == "other" and other["source"] is None


def test_the_headline_is_the_most_telling_class():
    assert sd.headline([{"class": "other"}, {"class": "lost"}, {"class": "foreign"}]) == "foreign"
    assert sd.headline([]) is None


def test_a_response_that_two_lone_streams_share_lists_both_and_a_request_sent_after_it_came_is_no_candidate():
    lone = {0: stream(0, [5, 6, 7]), 1: stream(1, [9, 30, 31]), 2: stream(2, [8, 30, 32])}
    got = stream(0, [5, 30, 7], [0, 1, 2])  # its second response is both 1's and 2's step 1
    got.times = [0.10, 0.20, 0.30]
    entry = sd.classify(got, lone[0], lone, COMPARER)
    assert entry["class"] == "other" and entry["origins"][0] == {"response": 1, "among": [1, 2]}
    later = sd.classify(got, lone[0], lone, COMPARER, sent={0: 0.0, 1: 0.05, 2: 0.25})  # 2 was sent after it came
    assert later["class"] == "foreign" and later["source"] == {"request": 1, "step": 1}
    assert later["origins"][0] == {"response": 1, "request": 1, "step": 1}
