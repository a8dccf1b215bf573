"""Slot exhaustion: the judge on hand-made tables, one test per outcome; then the real server, run once:
sessions beyond capacity wait in the backlog, no errors."""
from __future__ import annotations

import pandas as pd
import pytest

from app.exercise_kit import ExerciseResult, Finding, Measured
from app.i18n import words
from app.recogniser.exercises.slot_exhaustion import engine as slot_exhaustion
from app.registry import exercise_words as text
from tests.exercises.renderings import TRANSLATED, untranslated, untranslated_figures

WAIT_MS = [5.0, 10.0, 150.0, 300.0, 450.0]  # two got a slot at once, three waited over WAITED_MS


def _tables(direct_waits=WAIT_MS, direct_verdicts=None, oldest_waits=(1.0, 2.0, 120.0, 240.0, 360.0)) -> dict:
    """Hand-made measurements: per session of each strategy its backlog wait and verdict, who held which
    slot when (direct: 5 s of holding over a 3 s span on 2 slots), the executions (0.4 s of computing in
    those 3 s), and a sweep of 2 and 4 sessions on each strategy."""
    def sessions(strategy, waits, verdicts):
        return [{"session": i, "arrived_s": 0.0, "wait_ms": w, "source": "queue_time", "strategy": strategy,
                 "verdict": v} for i, (w, v) in enumerate(zip(waits, verdicts, strict=True))]
    direct_verdicts = direct_verdicts or ["intact"] * len(direct_waits)
    held = [(0.0, 1.0), (0.0, 1.0), (1.0, 2.0), (1.0, 2.0), (2.0, 3.0)]
    holding = pd.DataFrame([{"session": i, "instance": 0, "slot": i % 2, "held_from": a, "held_to": b, "strategy": s}
                            for s in ("direct", "oldest") for i, (a, b) in enumerate(held)])
    runs = [(0.0, 0.1), (0.05, 0.2), (1.0, 1.1), (2.9, 3.0)]  # the first two overlap: one batch
    executions = pd.DataFrame([{"instance": 0, "exec_start": a, "exec_end": b, "error": "", "strategy": s}
                               for s in ("direct", "oldest") for a, b in runs])
    sweep = pd.DataFrame([{**row, "sessions": len(waits)} for s in ("direct", "oldest")
                          for waits in ([1.0, 3.0], [1.0, 3.0, 120.0, 200.0])
                          for row in sessions(s, waits, ["intact"] * len(waits))])
    return {
        "sessions": pd.DataFrame(sessions("direct", direct_waits, direct_verdicts)
                                 + sessions("oldest", oldest_waits, ["intact"] * len(oldest_waits))),
        "holding": holding, "executions": executions, "sweep_sessions": sweep,
    }


def test_judge_wait_when_sessions_beyond_capacity_queued_without_errors():
    judged = slot_exhaustion.judge(_tables())
    n = judged.numbers
    assert judged.outcome == "wait"
    assert (n["capacity_sequences"], n["sessions"], n["errors"]) == (2, 5, 0)
    assert (n["direct_sessions_waited"], n["direct_max_wait_ms"], n["direct_mean_wait_ms"]) == (3, 450.0, 183.0)
    assert (n["oldest_sessions_waited"], n["oldest_max_wait_ms"]) == (3, 360.0)
    assert n["direct_slots_held_pct"] == pytest.approx(100 * 5 / 6)  # 5 s held of 2 slots x 3 s
    assert n["direct_instance_busy_pct"] == pytest.approx(100 * 0.4 / 3)  # [0, 0.2] + [1, 1.1] + [2.9, 3]
    assert judged.findings[0] == Finding("direct_waited", {"waited": 3, "sessions": 5, "threshold": 100.0, "longest": 450.0})
    assert judged.findings[1].values == {"held": pytest.approx(5 / 6), "busy": pytest.approx(0.4 / 3)}
    assert [(f.values["strategy"], f.values["sessions"], f.values["longest"]) for f in judged.findings if f.code == "sweep"] == [
        ("direct", 2, 3.0), ("direct", 4, 200.0), ("oldest", 2, 3.0), ("oldest", 4, 200.0)]
    sweep = judged.tables["sweep"]
    assert list(sweep["mean_wait_ms"]) == [2.0, 81.0, 2.0, 81.0] and sweep["intact"].all()
    assert judged.explanation[1] == Finding("capacity", {"capacity": 2})
    assert judged.explanation[2].values == {"longest": 450.0, "busy": pytest.approx(0.4 / 3)}


def test_judge_interleave_when_no_first_chunk_waited_for_a_slot():
    judged = slot_exhaustion.judge(_tables(direct_waits=[5.0, 10.0, 20.0, 40.0, 99.0]))
    assert judged.outcome == "interleave"
    assert judged.numbers["direct_sessions_waited"] == 0 and judged.numbers["direct_max_wait_ms"] == 99.0


def test_judge_refused_when_a_direct_session_got_an_error():
    judged = slot_exhaustion.judge(_tables(direct_verdicts=["intact", "intact", "error", "error", "foreign"]))
    assert judged.outcome == "refused"
    assert judged.numbers["errors"] == 2
    assert judged.findings[0] == Finding("errors", {"errors": 2})


def test_judge_corrupt_when_a_session_read_another_state():
    judged = slot_exhaustion.judge(_tables(direct_verdicts=["intact", "foreign", "foreign", "intact", "intact"]))
    assert judged.outcome == "corrupt"
    assert judged.numbers["errors"] == 0 and judged.findings[0].code == "direct_waited"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_judged_findings_and_figures_render_translated(lang):
    """Every template the judge can pick, on the hand-made tables, in every translated language."""
    wait, refused = (slot_exhaustion.judge(t) for t in (_tables(), _tables(direct_verdicts=["error"] * 5)))
    assert not untranslated("slot_exhaustion", wait.findings + wait.explanation + refused.findings[:1], lang)
    result = ExerciseResult.of(slot_exhaustion.EXERCISE, Measured(tables=_tables()), wait)
    assert not untranslated_figures(result, lang)


@pytest.fixture(scope="module")
def result(exercise_result):
    """One real run. Why what these tests pin is certain:
    - `wait`, no errors: 5 lock-step sessions (each sends its next chunk only after the reply) open at
      once on capacity 1 instance x 2 slots; a sequence keeps its slot from START to END, and END
      comes after 7 think pauses of at least 35 ms (40 +- 5), so the 3rd session's START, sent with
      the others, waits in the FIFO backlog at least 245 ms less the threads' start skew: over
      WAITED_MS on direct, and on oldest, whose capacity is max_candidate_sequences = 2. The longest
      backlog wait (about two holdings, under 1 s) is far below the 5 s idle timeout, so the reaper
      refuses nobody; slot-keyed state with READY honoured cannot mix sessions.
    - the sweep: 2 sessions find 2 free slots (no backlog), 6 must wait for a holder's END (5 pauses).
    - slots held > instance busy: every execution lies inside its sessions' holdings, and each
      session's holding also spans its 7 think pauses (>= 245 ms, 1.2 s over the 5 sessions), which
      outweighs the model's millisecond executions."""
    return exercise_result("slot_exhaustion")


def test_sessions_beyond_capacity_wait_without_errors(result):
    n = result.numbers
    assert result.outcome == "wait"
    assert n["errors"] == 0
    # 5 sessions on 2 slots: at least the ones that found no free slot waited for one.
    assert n["direct_sessions_waited"] >= 1
    assert n["direct_max_wait_ms"] > slot_exhaustion.WAITED_MS
    sessions = result.tables["sessions"]
    assert set(sessions["verdict"]) == {"intact"}
    assert len(sessions) == 2 * slot_exhaustion.SESSIONS


def test_oldest_has_the_same_capacity_limit(result):
    assert result.numbers["oldest_sessions_waited"] >= 1
    assert result.numbers["oldest_max_wait_ms"] > slot_exhaustion.WAITED_MS


def test_slots_are_held_far_more_than_the_instance_computes(result):
    n = result.numbers
    assert n["direct_slots_held_pct"] > n["direct_instance_busy_pct"]


def test_sweep_wait_grows_with_sessions(result):
    sweep = result.tables["sweep"]
    assert set(sweep["sessions"]) == set(slot_exhaustion.SWEEP)
    for strategy, rows in sweep.groupby("strategy"):
        waits = rows.set_index("sessions")["max_wait_ms"]
        assert waits[max(slot_exhaustion.SWEEP)] > waits[min(slot_exhaustion.SWEEP)], strategy
        assert rows["intact"].all()


def test_findings_carry_the_measured_values(result):
    n = result.numbers
    codes = [f.code for f in result.findings]
    assert codes[:3] == ["direct_waited", "direct_held", "oldest_waited"]
    waited = result.findings[0].values
    assert waited["waited"] == n["direct_sessions_waited"] and waited["sessions"] == slot_exhaustion.SESSIONS
    assert waited["longest"] == n["direct_max_wait_ms"]
    held = result.findings[1].values
    assert held["held"] == pytest.approx(n["direct_slots_held_pct"] / 100)
    assert held["busy"] == pytest.approx(n["direct_instance_busy_pct"] / 100)
    sweep = [f.values for f in result.findings if f.code == "sweep"]
    assert {(v["strategy"], v["sessions"]) for v in sweep} == {(s, c) for s in slot_exhaustion.STRATEGIES for c in slot_exhaustion.SWEEP}
    assert [f.code for f in result.explanation] == ["slot_until_end", "capacity", "backlog", "slots_not_server", "oldest_same", "cure"]
    assert result.explanation[1].values == {"capacity": n["capacity_sequences"]}


def test_every_finding_renders_in_every_language(result):
    english = [text.finding("slot_exhaustion", f, words("en")) for f in result.findings + result.explanation]
    assert f"{result.numbers['direct_sessions_waited']} of {slot_exhaustion.SESSIONS} sessions waited" in english[0]
    for lang in TRANSLATED:
        assert not untranslated("slot_exhaustion", result.findings + result.explanation, lang)
        assert not untranslated_figures(result, lang)
    assert set(slot_exhaustion.EXERCISE.options) == set(text.module("slot_exhaustion").OPTIONS)
    assert set(result.numbers) == set(text.module("slot_exhaustion").NUMBERS)


def test_result_is_reported_as_text_and_json(result):
    summary = text.summary(result, words("en"))
    assert "Slot exhaustion" in summary and "direct: longest backlog wait (ms)" in summary
    data = result.to_json()
    assert data["exercise"] == "slot_exhaustion" and data["outcome"] == "wait"
    assert {"sessions", "holding", "sweep"} <= set(data["tables"])
    assert set(data["runs"]) == {"direct", "oldest"}
    assert data["findings"][0]["code"] == "direct_waited"


def hand_made_tables() -> dict:
    """This exercise's judge tables made by hand, for its figures and their summaries
    (tests/recogniser/exercises/test_exercise_chart_summaries.py)."""
    return _tables()
