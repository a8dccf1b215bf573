"""Figures of the verification exercise (app/lab/exercises/verification.py), drawn only from its result's
tables and numbers; captions, axes and legends pass through _ (a Words, for the learner's language)."""
from __future__ import annotations

import plotly.express as px
import plotly.graph_objects as go

from app.charts import plots
from app.i18n import N_
from app.lab.exercises.common import sentiment_check
from app.lab.exercises.common.base import ExerciseResult

CHECK_LABELS = {
    "interleaved": N_("interleaved sessions stay intact, each reading only its own state"),
    "after_end": N_("a new sequence after END inherits nothing"),
    "cancelled": N_("a session cancelled mid-way does not pollute the next one on its slot"),
    "sentiment": N_("the stateless sentiment model gives identical results in any order and batch split"),
    "recogniser": N_("the recogniser behind the dynamic batcher is NOT order-invariant (must not be assumed)"),
}
MODE_LABELS = {
    "in_order_single": N_("in order, one at a time"),
    "reversed_6": N_("reversed, 6 at once"),
    "shuffled_all": N_("shuffled, all at once"),
    "shuffled_one_request": N_("shuffled, one request of 12"),
}
ARRIVAL_LABELS = {"one_at_a_time": N_("one at a time"), "all_at_once": N_("all at once")}


def _yes_no(value: bool, _) -> str:
    return _(N_("yes")) if value else _(N_("NO"))


def _batches(sizes, _) -> str:
    """{size: executions} as the bar's text: '12 of 1, 0 of 12'."""
    if not sizes:
        return _(N_("(not reported)"))
    return ", ".join(_(N_("{n} of {size}")).format(n=n, size=size) for size, n in dict(sizes).items())


def figures(result: ExerciseResult, _=str) -> list[tuple[str, go.Figure]]:
    """The exercise's charts, each drawn from one of the result's tables; what each check
    observed is in result.findings (one per check, in the same order)."""
    checks = result.tables["checks"]
    table = go.Figure(go.Table(
        header=dict(values=[_(N_("check")), _(N_("as expected"))], align="left"),
        cells=dict(values=[[_(CHECK_LABELS[c]) for c in checks["check"]], [_yes_no(v, _) for v in checks["as_expected"]]],
                   align="left"),
    ))
    table.update_layout(title=_(N_("The rollout guide's experiments")))
    sentiment = result.tables["sentiment"].copy()
    sentiment["mode"] = [_(MODE_LABELS[m]) for m in sentiment["mode"]]
    sentiment["batches"] = [_batches(b, _) for b in sentiment["batch_sizes"]]
    diff = px.bar(sentiment, x="mode", y="max_score_diff", text="batches",
                  labels={"mode": "", "max_score_diff": _(N_("largest score difference vs in-order singles"))},
                  title=_(N_("Sentiment: same reviews, other orders and batches (bar text: batches run, 'N of size')"))
                  + "<br>" + _(N_("labels identical: {answer}; scores must agree within {tolerance}")).format(
                      answer=_yes_no(sentiment["labels_identical"].all(), _), tolerance=f"{sentiment_check.SCORE_TOLERANCE:g}"))
    transcripts = result.tables["recogniser_transcripts"]
    rec = go.Figure(go.Table(
        header=dict(values=[_(N_("arrival")), _(N_("expected")), _(N_("received")), _(N_("verdict"))], align="left"),
        cells=dict(values=[[_(ARRIVAL_LABELS[a]) for a in transcripts["arrival"]], transcripts["expected_text"],
                           transcripts["received_text"], [plots.verdict_name(v, _) for v in transcripts["verdict"]]],
                   align="left"),
    ))
    rec.update_layout(title=_(N_("Recogniser behind the dynamic batcher")))
    return [(_(N_("Checks")), plots.layout(table, 330)), (_(N_("Sentiment")), plots.layout(diff)),
            (_(N_("Recogniser")), plots.layout(rec, 330))]
