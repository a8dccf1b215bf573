"""evidence on a hand-made run: whose state each chunk read, straight from STATE_OWNER.

Session 1 ("ABCD") reads session 2's state at chunk 3 and goes wrong; session 2 ("WXYZ") is
intact; session 3 ("EFG") reads a padding row's state at chunk 2; chunk 1 of session 2
read a cell an earlier run left (tag 777) yet came back right by luck.
"""
from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from app.recogniser.engine.judgement import evidence
from app.recogniser.engine.judgement.verdicts import PADDING_OWNER, judge
from tests.recogniser.engine.test_verdicts import plan, rows

STRANGER = 777


def run(*sessions, plans):
    requests = pd.DataFrame([r for s in sessions for r in s])
    judged = judge(requests, plans)
    return SimpleNamespace(plans=plans, requests=requests, sessions=judged,
                           all_intact=bool((judged["verdict"] == "intact").all()))


def mixed_run():
    a, b, c = plan(0, "ABCD"), plan(1, "WXYZ"), plan(2, "EFG")
    return run(
        rows(a, [1, 2, 5, 6], owners={2: b.tag}, states={2: 24}),
        rows(b, owners={0: STRANGER}),
        rows(c, [5, 6, 1], owners={2: PADDING_OWNER}, states={2: 20}),
        plans=[a, b, c],
    )


def test_chunks_reading_another_session_of_the_run_are_found_with_that_session():
    result = mixed_run()
    mixed = evidence.read_other_sessions(result)
    assert list(zip(mixed["session"], mixed["chunk"], mixed["owner_session"], strict=True)) == [(0, 2, 1)]
    assert len(evidence.mixing_broke_chunks(result)) == 1
    assert evidence.broke_on_another_session(result) == {0: 1}


def test_padding_and_leftovers_are_told_apart_from_mixing():
    result = mixed_run()
    assert evidence.broke_on_padding(result) == [2]
    assert evidence.strangers_read(result) == {STRANGER}
    assert not evidence.read_only_own_state(result)
    assert evidence.owners_read(result) == {0, STRANGER, PADDING_OWNER} | {p.tag for p in result.plans}


def test_a_chunk_that_read_another_session_but_came_back_right_did_not_break_a_letter():
    a, b = plan(0, "AB"), plan(1, "AB")
    # Both say "AB": session 1's chunk 2 read session 2's "A", which happens to be its own "A" too.
    result = run(rows(a, owners={1: b.tag}), rows(b), plans=[a, b])
    assert len(evidence.read_other_sessions(result)) == 1
    assert evidence.mixing_broke_chunks(result).empty
    assert result.all_intact and evidence.broke_on_another_session(result) == {}


def test_sessions_that_began_fresh_and_kept_their_own_state():
    a, b = plan(0, "HELLO"), plan(1, "WORLD")
    result = run(rows(a), rows(b), plans=[a, b])
    assert evidence.read_only_own_state(result)
    assert evidence.read_other_sessions(result).empty and not evidence.strangers_read(result)
    assert evidence.broke_on_padding(result) == [] and evidence.broke_on_another_session(result) == {}


def test_a_refused_first_wrong_chunk_has_no_owner():
    a = plan(0, "ABC")
    result = run(rows(a, [1, 2, -1], errors={2: "must specify the START flag"}), plans=[a])
    assert evidence.owner_at_first_wrong(result, 0) is None
    assert evidence.broke_on_padding(result) == [] and evidence.read_only_own_state(result)
