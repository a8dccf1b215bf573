"""The worked example of lesson 4, on the real server: what happens to each of the four requests."""
from __future__ import annotations

from app.recogniser import live as worked_example


def test_open_sequence_keeps_turns_on_one_slot_and_decodes_them(lab_server):
    sent = worked_example.run(lab_server, open_first=True).set_index("request")
    assert list(sent.index) == ["1", "2", "turn 1", "turn 2", "3", "4"]
    # Model A: no sequence ID, and each caller gets its own review's label.
    assert sent.loc["1", "outcome"] == "positive" and sent.loc["2", "outcome"] == "negative"
    assert (sent.loc["1", "review"], sent.loc["2", "review"]) == worked_example.REVIEWS
    assert sent.loc["1", "sequence_id"] == "" == sent.loc["2", "sequence_id"]
    # Model B: turns 3 and 4 carry no START, reach the slot that turn 1 claimed, and read its state.
    b = sent.loc[["turn 1", "turn 2", "3", "4"]]
    assert list(b["start"]) == [True, False, False, False] and list(b["end"]) == [False, False, False, True]
    assert b["instance"].nunique() == 1 and b["slot"].nunique() == 1
    assert "".join(b["outcome"]) == worked_example.TEXT


def test_unknown_sequence_refuses_both_turns_with_the_start_flag_error(lab_server):
    sent = worked_example.run(lab_server, open_first=False).set_index("request")
    assert list(sent.index) == ["1", "2", "3", "4"]
    for request in ("3", "4"):
        assert sent.loc[request, "outcome"] == "refused"
        assert "must specify the START flag on the first request of the sequence" in sent.loc[request, "server_says"]
        assert sent.loc[request, "sequence_id"] in sent.loc[request, "server_says"]
