"""The pure diagnosis on hand-made tables: which hypotheses a broken session gets, how replies
are matched and classed, and what the check then advises (no server; replay.py plays them)."""
from __future__ import annotations

import dataclasses

import numpy as np

from app.checker.engine import TensorSpec
from app.checker.engine.compare import Tolerance
from app.checker.engine.sequences import diagnosis
from app.checker.engine.sequences.diagnosis import Send
from app.checker.engine.sequences.judge import judge
from app.checker.engine.sequences.observed import Observations, kept_above
from tests.checker.tables import Rows, facts, tables

EXACT = [Tolerance("OUTPUT", "INT64", 0.0, "exact", 0.0, True)]


def out(value) -> dict:
    return {"OUTPUT": np.array([[value]], dtype=np.int64)}


def interleaved_tables(diverged_at: int = 1, placed: bool = False):
    """Two sessions of three steps, interleaved; session 1 (sequence 11) goes wrong at `diverged_at`.
    Session 0's steps are replied before session 1's next one is sent."""
    rows = Rows().reference(steps=3)
    where = {"instance": "m_0_0", "slot": 0} if placed else {}
    for k in range(3):
        rows.add("interleaved", "interleaved", 10, 0, k, 0.0, variant="all_instances", corrid="a", t=10.0 + 2 * k, recv=10.5 + 2 * k, **where)
        rows.add("interleaved", "interleaved", 11, 1, k, 9.0 if k >= diverged_at else 0.0, variant="all_instances", corrid="b",
                 t=11.0 + 2 * k, recv=11.5 + 2 * k, end=k == 2, **where)
    t = tables(rows)
    t.lengths = [3, 3]
    t.references = {(s, k): out(10 * s + k) for s in range(2) for k in range(3)}
    t.observed = {r["request_id"]: out(100 + r["step"]) for r in rows.rows
                  if r["phase"] == "interleaved" and r["conversation"] == 11 and r["step"] >= diverged_at}
    return t


def test_a_broken_session_gets_lost_then_foreign_hypotheses_from_its_first_wrong_step():
    t = interleaved_tables(diverged_at=1)
    plans = diagnosis.plan(t, judge(t))
    assert [(p.verdict.id, p.broken_sessions) for p in plans] == [("interleaved/all_instances", 1)]
    (b,) = plans[0].sessions
    assert (b.sequence, b.session, b.corrid, b.step) == (11, 1, "b", 1)
    assert [int(o["OUTPUT"][0][0]) for o in b.observed] == [101, 102]  # its own replies from step 1, kept while measuring
    kinds = [(h.kind, h.form) for h in b.hypotheses]
    assert kinds == [("lost", ""), ("foreign", "replace"), ("foreign", "mix")]
    lost, replace, mix = b.hypotheses
    # lost: a new sequence at step 1; the last compared step carried END, so nothing closes it
    assert lost.sends == (Send(1, 1, start=True, compared=True), Send(1, 2, compared=True))
    # foreign: session 0's steps replied before session 1's step 1 was sent (at 13: its steps 0 and 1), then session 1's
    assert replace.sends == (Send(0, 0, start=True), Send(0, 1), Send(1, 1, compared=True), Send(1, 2, compared=True))
    assert replace.source == {"conversation": 10, "session": 0, "corrid": "a", "role": "interleaved", "instance": None,
                              "slot": None, "ended_before": False}
    # mix: both histories before step 1 in the order they were sent
    assert mix.sends == (Send(0, 0, start=True), Send(1, 0, start=True), Send(0, 1), Send(1, 1, compared=True),
                         Send(1, 2, compared=True))


def test_a_step_that_did_not_carry_end_gets_a_closing_request_and_a_divergence_at_start_no_lost():
    t = interleaved_tables(diverged_at=0)
    steps = t.steps
    steps.loc[(steps["conversation"] == 11) & (steps["step"] == 2), "end"] = False
    (b,) = diagnosis.plan(t, judge(t))[0].sessions
    assert b.step == 0 and len(b.observed) == 3
    # lost at step 0 would be the reference itself, and a mix before step 0 the replacement: one foreign hypothesis,
    # session 0's first step (replied at 10.5, before session 1's first request at 11) and then session 1's steps
    assert [h.kind for h in b.hypotheses] == ["foreign"]
    (h,) = b.hypotheses
    assert h.sends[0] == Send(0, 0, start=True) and h.sends[1] == Send(1, 0, start=True, compared=True)
    assert h.sends[-1] == Send(1, 2)  # the closing request repeats the last step (the session has no step 3)


def test_earlier_sequences_of_the_same_id_are_the_stale_hypotheses():
    rows = Rows().reference(steps=2)
    rows.add("id_reuse", "first_use", 20, 0, 0, variant="all_instances", corrid="x", t=10.0, instance="m_0_0", slot=0)
    rows.add("id_reuse", "first_use", 20, 0, 1, variant="all_instances", corrid="x", t=11.0, end=True, instance="m_0_0", slot=0)
    rows.add("id_reuse", "reuse", 21, 1, 0, variant="all_instances", corrid="x", t=12.0, instance="m_0_1", slot=0)
    rows.add("id_reuse", "reuse", 21, 1, 1, variant="all_instances", corrid="x", t=13.0, end=True, instance="m_0_1", slot=0)
    rows.add("id_reuse", "chain", 22, 0, 0, 5.0, variant="all_instances", corrid="x", t=14.0, instance="m_0_0", slot=0)
    rows.add("id_reuse", "chain", 22, 0, 1, 5.0, variant="all_instances", corrid="x", t=15.0, end=True, instance="m_0_0", slot=0)
    t = tables(rows)
    t.references = {(s, k): out(k) for s in range(2) for k in range(2)}
    t.observed = {r["request_id"]: out(50 + r["step"]) for r in rows.rows if r["conversation"] == 22}
    (b,) = diagnosis.plan(t, judge(t))[0].sessions
    assert (b.sequence, b.step, b.role) == (22, 0, "chain")
    stale = [h for h in b.hypotheses if h.kind == "stale"]
    assert [h.form for h in stale] == ["last", "instance", "all"]
    own = (Send(0, 0, start=True, compared=True), Send(0, 1, compared=True))
    assert stale[0].sends == (Send(1, 0, start=True), Send(1, 1)) + own  # the last sequence of its ID
    assert stale[1].sends == (Send(0, 0, start=True), Send(0, 1)) + own  # those the log placed on its instance
    assert stale[2].sends == (Send(0, 0, start=True), Send(0, 1), Send(1, 0, start=True), Send(1, 1)) + own
    assert stale[1].source["conversation"] == 20 and stale[1].source["ended_before"] is True
    assert all(h.kind != "foreign" for h in b.hypotheses)  # the other sequences share its ID: they are stale ones


def test_foreign_candidates_rank_the_same_slot_first_then_the_same_instance():
    rows = Rows().reference(sequences=4, steps=2)
    places = {10: ("m_0_1", 0), 11: ("m_0_0", 1), 12: ("m_0_0", 0)}
    for c, (instance, slot) in places.items():
        rows.add("interleaved", "interleaved", c, c - 10, 0, variant="all_instances", corrid=str(c), t=1.0 + c / 100, instance=instance, slot=slot)
    rows.add("interleaved", "interleaved", 13, 3, 0, variant="all_instances", corrid="13", t=1.0, instance="m_0_0", slot=0)
    rows.add("interleaved", "interleaved", 13, 3, 1, 4.0, variant="all_instances", corrid="13", t=5.0, end=True, instance="m_0_0", slot=0)
    t = tables(rows)
    t.lengths = [2, 2, 2, 2]
    t.references = {(s, k): out(k) for s in range(4) for k in range(2)}
    t.observed = {rows.rows[-1]["request_id"]: out(7)}
    (b,) = diagnosis.plan(t, judge(t))[0].sessions
    sources = [h.source["conversation"] for h in b.hypotheses if h.kind == "foreign" and h.form == "replace"]
    assert sources == [12, 11, 10]  # same instance and slot, same instance, another instance


def test_the_best_scoring_hypothesis_names_the_class_and_its_source():
    t = interleaved_tables(diverged_at=1)
    (b,) = diagnosis.plan(t, judge(t))[0].sessions
    lost, replace, mix = b.hypotheses
    entry = diagnosis.classify(b, [(lost, 1), (replace, 2), (mix, 2)])
    assert (entry["class"], entry["matched"], entry["compared"], entry["form"]) == ("foreign", 2, 2, "replace")
    assert entry["source"]["session"] == 0 and entry["source"]["corrid"] == "a"
    assert diagnosis.classify(b, [(lost, 1), (replace, 1)])["class"] == "lost"  # a tie: the order tried
    other = diagnosis.classify(b, [(lost, 0), (replace, 0)])
    assert (other["class"], other["matched"], "source" in other) == ("other", 0, False)


def test_replies_match_within_the_output_tolerances_in_a_row_from_the_first():
    observed = (out(3), out(4), out(5))
    assert diagnosis.matched(observed, [out(3), out(4), out(9)], EXACT) == 2
    assert diagnosis.matched(observed, [out(2), out(4), out(5)], EXACT) == 0  # the first must match
    assert diagnosis.matched(observed, [out(3)], EXACT) == 1  # the replay stopped (a refused request)
    score = [Tolerance("S", "FP32", 1e-3, "derived", 0.0, True)]
    near = ({"S": np.array([1.0], dtype=np.float32)},)
    assert diagnosis.matched(near, [{"S": np.array([1.0005], dtype=np.float32)}], score) == 1
    assert diagnosis.matched(near, [{"S": np.array([1.01], dtype=np.float32)}], score) == 0


def test_the_advice_follows_the_strongest_class_present_and_the_scheduler():
    def entry(kind, step=1, ended=False):
        return {"class": kind, "step": step, **({"source": {"ended_before": ended}} if kind in ("foreign", "stale") else {})}

    assert diagnosis.advice([entry("lost"), entry("lost"), entry("other")], "oldest") == "lost_state"
    assert diagnosis.advice([entry("foreign")], "oldest") == "foreign_state_oldest"
    assert diagnosis.advice([entry("foreign")], "direct") == "foreign_state_direct"
    assert diagnosis.advice([entry("stale", step=0)], "direct") == "stale_state"
    # began with what a sequence that had stopped left behind: START did not reset it
    assert diagnosis.advice([entry("foreign", step=0, ended=True)], "direct") == "stale_state"
    # a session with another's state explains those that found none (a row nobody had written)
    assert diagnosis.advice([entry("lost"), entry("lost"), entry("foreign"), entry("other")], "oldest") == "foreign_state_oldest"
    assert diagnosis.advice([entry("lost"), entry("stale", step=0)], "direct") == "stale_state"
    assert diagnosis.advice([entry("other"), entry("other")], "direct") is None
    assert diagnosis.advice([], "direct") is None


def test_attach_puts_the_diagnosis_in_the_values_and_moves_its_check_to_the_advice():
    t = interleaved_tables(diverged_at=1)
    judgement = judge(t)
    assert judgement.diagnoses == [{"code": "sessions_mix", "checks": ["interleaved/all_instances"]}]
    p = diagnosis.plan(t, judgement)[0]
    entry = diagnosis.classify(p.sessions[0], [(p.sessions[0].hypotheses[0], 2)])
    summary = diagnosis.summary(p, [entry], replayed=2, scheduler="direct")
    assert summary["advice"] == "lost_state" and summary["caps"]["sessions"] == diagnosis.MAX_SESSIONS
    attached = diagnosis.attach(judgement, {"interleaved/all_instances": summary})
    assert attached.verdict("interleaved", "all_instances").values["diagnosis"]["sessions"] == [entry]
    assert attached.verdict("interleaved", "all_instances").reason == "sessions_mix"  # the check's reason stays
    assert attached.diagnoses == [{"code": "lost_state", "checks": ["interleaved/all_instances"]}]
    none = diagnosis.attach(judgement, {"interleaved/all_instances": {**summary, "advice": None}})
    assert none.diagnoses == judgement.diagnoses  # other: the check's own diagnosis


def test_a_reply_past_the_memory_cap_leaves_its_session_undiagnosed_from_there():
    t = interleaved_tables(diverged_at=1)
    step2 = t.steps[(t.steps["conversation"] == 11) & (t.steps["step"] == 2)]["request_id"].iloc[0]
    t.observed.pop(step2)
    t.unobserved = {step2}
    (b,) = diagnosis.plan(t, judge(t))[0].sessions
    assert len(b.observed) == 1  # step 1 only: step 2's reply is unknown
    t.unobserved = set()
    (b,) = diagnosis.plan(t, judge(t))[0].sessions
    assert [int(o["OUTPUT"][0][0]) for o in b.observed] == [101, 12]  # not kept: within tolerance, so its reference


def test_at_most_max_sessions_are_diagnosed_the_earliest_to_diverge():
    rows = Rows().reference(sequences=8, steps=2)
    for s in range(8):
        rows.add("interleaved", "interleaved", 10 + s, s, 0, variant="all_instances", corrid=str(s), t=1.0 + s)
        rows.add("interleaved", "interleaved", 10 + s, s, 1, 3.0, variant="all_instances", corrid=str(s), t=20.0 - s, end=True)
    t = tables(rows)
    t.lengths = [2] * 8
    t.references = {(s, k): out(k) for s in range(8) for k in range(2)}
    t.observed = {r["request_id"]: out(9) for r in rows.rows if r["phase"] == "interleaved" and r["step"] == 1}
    p = diagnosis.plan(t, judge(t))[0]
    assert p.broken_sessions == 8 and [b.session for b in p.sessions] == [7, 6, 5, 4, 3, 2, 1, 0][: diagnosis.MAX_SESSIONS]
    assert all(len(b.hypotheses) <= diagnosis.MAX_HYPOTHESES for b in p.sessions)


def test_stateless_checks_and_held_checks_are_not_diagnosed():
    rows = Rows().reference()
    assert diagnosis.plan(tables(rows), judge(tables(rows))) == []
    t = tables(Rows().reference(), facts(sequence=False))
    assert diagnosis.plan(t, judge(t)) == []


def test_only_replies_beyond_what_any_tolerance_allows_are_kept():
    specs = [TensorSpec("N", "INT64", (1,)), TensorSpec("S", "FP32", (1,))]
    assert kept_above("INT64", None) == 0.0 and kept_above("FP32", None) == 1e-6 and kept_above("FP32", 0.0) == 0.0
    kept = Observations(specs, None)
    got = {"N": np.array([1]), "S": np.array([1.0], dtype=np.float32)}
    kept.keep({"request_id": "a", "diff.N": 0.0, "diff.S": 5e-7}, got)  # float noise below the datatype's floor
    kept.keep({"request_id": "b", "diff.N": 0.0, "diff.S": None}, got)  # no reference
    kept.keep({"request_id": "c", "diff.N": 1.0, "diff.S": 0.0}, got)
    assert list(kept.arrays) == ["c"] and set(kept.arrays["c"]) == {"N", "S"}
    tight = Observations(specs, 0.0)
    tight.keep({"request_id": "a", "diff.N": 0.0, "diff.S": 5e-7}, got)
    assert list(tight.arrays) == ["a"]


def test_hypotheses_are_frozen_values():
    h = diagnosis.Hypothesis("lost", (Send(0, 1, True, True),))
    assert h.requests == 1 and dataclasses.replace(h, form="x").form == "x"
