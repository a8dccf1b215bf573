"""Lesson 4's worked example on its page: the four requests go to the real server and the page says what happened."""
from __future__ import annotations

from tests.views.conftest import RUN_TIMEOUT_S


def _send(at):
    at.button(key="wex-run").click().run(timeout=RUN_TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    return at.dataframe[0].value.set_index("request")  # the worked example comes first on the page


def test_open_sequence_runs_turns_three_and_four_on_one_slot(open_page):
    at = open_page("lesson_04")
    sent = _send(at)
    assert list(sent.index) == ["1", "2", "turn 1", "turn 2", "3", "4"]
    assert sent.loc["3", "slot"] == sent.loc["4", "slot"] and sent.loc["3", "instance"] == sent.loc["4", "instance"]
    assert sent.loc["3", "outcome"] + sent.loc["4", "outcome"] == "AT"
    assert any("decoded to AT" in s.value for s in at.success)


def test_unopened_sequence_is_refused_in_the_servers_words(open_page):
    at = open_page("lesson_04")
    at.checkbox(key="wex-open").uncheck().run(timeout=RUN_TIMEOUT_S)
    sent = _send(at)
    assert list(sent.index) == ["1", "2", "3", "4"]
    assert list(sent.loc[["3", "4"], "outcome"]) == ["refused", "refused"]
    [warning] = [w.value for w in at.warning]
    assert "must specify the START flag on the first request of the sequence" in warning
    assert sent.loc["3", "the server said"] in warning  # the table's English header for server_says
