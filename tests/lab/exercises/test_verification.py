"""The rollout guide's experiments on the real server, run once, checked on the raw measurements.

The exercise computes its own `as_expected` column; these tests do not read it. They check
what the server returned (transcripts, STATE_OWNER, slots, labels, scores) against what is
known without the code under test: the texts sent and the reviews' obvious sentiment.
"""
from __future__ import annotations

import pytest

from app.charts import exercises as charts
from app.i18n import words
from app.lab.exercises import verification
from app.lab.judgement import evidence
from app.text import exercises as text

# Of the twelve reviews five carry only positive lexicon words, six only negative ones, and one
# ("the film was lovely, see you soon") nets to zero under the word hashing, so the encoder's
# nuance decides it: 5 or 6 positive, the same in every mode.
CLEARLY_POSITIVE = 5


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
    assert [f.code for f in result.explanation] == ["why_stateless", "why_recogniser", "why_sequence_passed", "why_every_deployment"]
    assert result.explanation[1].values["wrong"] == result.numbers["recogniser_dynamic_wrong_symbols"] > 0


def test_every_finding_and_figure_renders_in_both_languages(result):
    rendered = [text.finding("verification", f, words(lang)) for f in result.findings + result.explanation for lang in ("en", "zh")]
    assert all(rendered)
    assert "STATE_OWNER 0" in text.finding("verification", result.findings[1], words("en"))
    for lang in ("en", "zh"):
        assert len(charts.figures(result, words(lang))) == 3
