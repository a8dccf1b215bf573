"""The rollout guide's experiments: the judge on hand-made tables, one test per outcome; then the real
server, run once, checked on the raw measurements.

The real-run tests do not read the exercise's own `as_expected` column. They check what the server
returned (transcripts, STATE_OWNER, slots, labels, scores) against what is known without the code
under test: the texts sent and the reviews' obvious sentiment.
"""
from __future__ import annotations

import pandas as pd
import pytest

from app.charts import exercises as charts
from app.i18n import words
from app.lab.exercises import verification
from app.lab.exercises.common import sentiment_check
from app.lab.exercises.common.base import ExerciseResult, Finding, Measured
from app.lab.judgement import evidence
from app.text import exercises as text
from tests.lab.exercises.renderings import TRANSLATED, untranslated, untranslated_figures

# Of the twelve reviews five carry only positive lexicon words, six only negative ones, and one
# ("the film was lovely, see you soon") nets to zero under the word hashing, so the encoder's
# nuance decides it: 5 or 6 positive, the same in every mode.
CLEARLY_POSITIVE = 5
TEXTS = ["HI", "YO", "OK"]


def _session(run, i, verdict="intact", received=None, wrong=0, slots=((0, 0),)):
    return {"run": run, "session": i, "tag": 11 + i, "verdict": verdict, "slots": list(slots), "expected_text": TEXTS[i],
            "received_text": TEXTS[i] if received is None else received, "wrong_symbols": wrong}


def _tables(sentiment_same=True, recogniser_same=False, leaked=False) -> dict:
    """Hand-made measurements of the five experiments. `leaked`: in the interleaved run session 1's
    second chunk read session 0's state (tag 11), so the sequence checks fail."""
    sessions = [_session("interleaved", i, "foreign" if leaked and i == 1 else "intact", slots=((0, i),)) for i in range(3)]
    requests = [{"run": "interleaved", "session": i, "chunk": k, "state_in": k, "state_owner": (11 if leaked and i == 1 else 11 + i) if k else 0}
                for i in range(3) for k in range(2)]
    for run in ("after_end", "cancelled"):
        sessions += [_session(run, i) for i in range(2)]
        requests += [{"run": run, "session": i, "chunk": k, "state_in": k, "state_owner": 11 + i if k else 0} for i in range(2) for k in range(2)]
    waits = [{"run": "cancelled", "session": i, "arrived_s": 0.25 * i, "wait_ms": w, "source": "queue_time"} for i, w in enumerate((1.0, 180.0))]
    diff = 2e-7 if sentiment_same else 0.3
    sentiment = [{"mode": m, "batch_sizes": {1: 12} if m == "in_order_single" else {6: 2}, "labels_identical": sentiment_same or m == "in_order_single",
                  "max_score_diff": 0.0 if m == "in_order_single" else diff, "positive": 5, "identical": sentiment_same or m == "in_order_single"}
                 for m in sentiment_check.MODES]
    sessions += [_session("dynamic_alone", i) for i in range(3)]
    sessions += [_session("dynamic_together", i) if recogniser_same or i == 2 else _session("dynamic_together", i, "garbage", "HX", wrong=1)
                 for i in range(3)]
    return {"sessions": pd.DataFrame(sessions), "requests": pd.DataFrame(requests), "waits": pd.DataFrame(waits),
            "sentiment": pd.DataFrame(sentiment)}


def test_judge_sentiment_when_only_the_stateless_model_is_order_invariant():
    judged = verification.judge(_tables())
    n = judged.numbers
    assert judged.outcome == "sentiment"
    assert n == {"checks_as_expected": 5, "checks": 5, "sentiment_identical": True, "sentiment_max_score_diff": 2e-7,
                 "recogniser_dynamic_consistent": False, "recogniser_dynamic_wrong_symbols": 2}
    assert judged.findings == [
        Finding("interleaved", {"as_expected": True, "sessions": 3, "verdicts": {"intact": 3}, "own": True}),
        Finding("after_end", {"as_expected": True, "state_in": 0, "state_owner": 0, "reused": True}),
        Finding("cancelled", {"as_expected": True, "verdict": "intact", "state_owner": 0, "wait": 180.0}),
        Finding("sentiment", {"as_expected": True, "diff": 2e-7, "labels_identical": True, "tolerance": sentiment_check.SCORE_TOLERANCE}),
        Finding("recogniser", {"as_expected": True, "alone": {"intact": 3}, "together": {"garbage": 2, "intact": 1}}),
    ]
    assert judged.explanation == [Finding("why_stateless", {"diff": 2e-7}), Finding("why_recogniser", {"wrong": 2}),
                                  Finding("why_sequence_passed"), Finding("why_every_deployment"), Finding("why_your_own")]
    assert list(judged.tables["checks"]["check"]) == list(verification.CHECKS) and judged.tables["checks"]["as_expected"].all()
    transcripts = judged.tables["recogniser_transcripts"]
    assert list(transcripts["arrival"]) == ["one_at_a_time"] * 3 + ["all_at_once"] * 3
    assert list(transcripts["received_text"]) == ["HI", "YO", "OK", "HX", "HX", "OK"]


def test_judge_both_when_the_recogniser_happened_to_come_out_the_same():
    judged = verification.judge(_tables(recogniser_same=True))
    assert judged.outcome == "both"
    assert judged.numbers["recogniser_dynamic_consistent"] and judged.numbers["checks_as_expected"] == 4
    assert judged.findings[-1] == Finding("recogniser", {"as_expected": False, "alone": {"intact": 3}, "together": {"intact": 3}})


def test_judge_recogniser_when_only_the_recogniser_is_order_invariant():
    judged = verification.judge(_tables(sentiment_same=False, recogniser_same=True))
    assert judged.outcome == "recogniser"
    assert judged.numbers["sentiment_max_score_diff"] == 0.3 and not judged.numbers["sentiment_identical"]
    assert judged.findings[3].values == {"as_expected": False, "diff": 0.3, "labels_identical": False,
                                         "tolerance": sentiment_check.SCORE_TOLERANCE}


def test_judge_neither_and_a_failed_sequence_check():
    judged = verification.judge(_tables(sentiment_same=False, leaked=True))
    assert judged.outcome == "neither"
    assert judged.findings[0] == Finding("interleaved", {"as_expected": False, "sessions": 3,
                                                         "verdicts": {"intact": 2, "foreign": 1}, "own": False})
    assert judged.explanation[2] == Finding("why_sequence_failed")
    assert judged.numbers["checks_as_expected"] == 3  # interleaved and sentiment failed


@pytest.mark.parametrize("lang", TRANSLATED)
def test_judged_findings_and_figures_render_translated(lang):
    """Every template the judge can pick, on the hand-made tables, in every translated language."""
    passed, failed = verification.judge(_tables()), verification.judge(_tables(sentiment_same=False, leaked=True))
    found = [f for j in (passed, failed) for f in j.findings + j.explanation]
    assert {f.code for f in found} == set(text.module("verification").FINDINGS)
    assert not untranslated("verification", found, lang)
    assert not untranslated_figures(ExerciseResult.of(verification.EXERCISE, Measured(tables=_tables()), passed), lang)


@pytest.fixture(scope="module")
def result(exercise_result):
    return exercise_result("verification")


def first_chunk(run, session: int):
    q = run.requests
    return q[(q["session"] == session) & (q["chunk"] == 0)].iloc[0]


def test_interleaved_sessions_hear_exactly_what_was_said(result):
    run = result.runs["interleaved"]
    assert list(run.sessions["received_text"]) == verification.TEXTS
    assert evidence.read_only_own_state(run)


def test_new_sequence_after_end_starts_fresh_on_the_reused_slot(result):
    run = result.runs["after_end"]
    first = first_chunk(run, 1)
    assert first["state_in"] == 0 and first["state_owner"] == 0
    assert (int(first["instance"]), int(first["slot"])) == (0, 0)  # 1 instance x 1 slot: nowhere else
    assert set(zip(run.requests["instance"], run.requests["slot"], strict=True)) == {(0, 0)}
    assert list(run.sessions["received_text"]) == verification.TEXTS[:2]


def test_cancelled_session_does_not_pollute_the_next(result):
    run = result.runs["cancelled"]
    sent = run.requests.groupby("session").size().to_dict()
    assert sent == {0: 3, 1: len(verification.TEXTS[1])}  # it vanished after three chunks, without END
    first = first_chunk(run, 1)
    assert first["state_in"] == 0 and first["state_owner"] == 0
    assert (int(first["instance"]), int(first["slot"])) == (0, 0)
    assert run.sessions.set_index("session").loc[1, "received_text"] == verification.TEXTS[1]


def test_sentiment_gives_the_same_labels_and_scores_in_every_order_and_split(result):
    sentiment = result.tables["sentiment"]
    assert len(sentiment) == 4
    assert sentiment["positive"].nunique() == 1, sentiment.to_dict("records")
    assert sentiment["positive"].iloc[0] in (CLEARLY_POSITIVE, CLEARLY_POSITIVE + 1)
    assert sentiment["labels_identical"].all()
    assert (sentiment["max_score_diff"] <= 1e-5).all(), sentiment["max_score_diff"].tolist()
    assert result.outcome == "sentiment"


def test_recogniser_behind_the_dynamic_batcher_changes_with_arrival_order(result):
    t = result.tables["recogniser_transcripts"]
    together = t[t["arrival"] == "all_at_once"]
    alone = t[t["arrival"] == "one_at_a_time"]
    assert list(together["expected_text"]) == verification.TEXTS
    assert (together["received_text"] != together["expected_text"]).any()
    assert list(alone["received_text"]) != list(together["received_text"])
    assert not result.numbers["recogniser_dynamic_consistent"]


def test_findings_are_the_guides_checks_as_codes_and_values(result):
    assert [f.code for f in result.findings] == list(verification.CHECKS)
    found = {f.code: f.values for f in result.findings}
    assert all(v["as_expected"] for v in found.values()), found
    assert found["interleaved"]["verdicts"] == {"intact": len(verification.TEXTS)} and found["interleaved"]["own"]
    assert (found["after_end"]["state_in"], found["after_end"]["state_owner"], found["after_end"]["reused"]) == (0, 0, True)
    assert found["cancelled"]["verdict"] == "intact" and found["cancelled"]["state_owner"] == 0
    assert found["sentiment"]["labels_identical"] and found["sentiment"]["diff"] <= 1e-5
    assert found["recogniser"]["together"] != {"intact": len(verification.TEXTS)}
    assert list(result.tables["checks"]["check"]) == list(verification.CHECKS)
    assert [f.code for f in result.explanation] == ["why_stateless", "why_recogniser", "why_sequence_passed", "why_every_deployment",
                                                     "why_your_own"]
    assert result.explanation[1].values["wrong"] == result.numbers["recogniser_dynamic_wrong_symbols"] > 0


def test_every_finding_and_figure_renders_in_every_language(result):
    assert "STATE_OWNER 0" in text.finding("verification", result.findings[1], words("en"))
    assert [caption for caption, _ in charts.figures(result, words("en"))] == ["Checks", "Sentiment", "Recogniser"]
    for lang in TRANSLATED:
        assert not untranslated("verification", result.findings + result.explanation, lang)
        assert not untranslated_figures(result, lang)
    assert set(result.numbers) == set(text.module("verification").NUMBERS)
    assert set(verification.EXERCISE.options) == set(text.module("verification").OPTIONS)
