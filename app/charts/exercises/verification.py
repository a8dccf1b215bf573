"""Figures of the verification exercise (app/lab/exercises/verification.py), drawn only from its
result's verdicts table (the deployment checker's verdicts, one row per check and variant); checks,
variants and verdicts in the checker's own words (app/text/checker.py), passed through _ (a Words)."""
from __future__ import annotations

import plotly.graph_objects as go

from app.charts import plots
from app.i18n import N_
from app.lab.exercises.common.base import ExerciseResult
from app.lab.exercises.verification import DEPLOYMENTS
from app.text import checker as check_words

DEPLOYMENT_LABELS = {
    "sequence": N_("recogniser, sequence batcher"),
    "sentiment": N_("sentiment, dynamic batcher"),
    "recogniser": N_("recogniser, dynamic batcher"),
}
VERDICT_COLOURS = {"held": "#2ca02c", "broken": "#d62728", "skipped": "#9e9e9e"}


def figures(result: ExerciseResult, _=str) -> list[tuple[str, go.Figure]]:
    """The checker's verdicts per deployment: counted, then listed check by check."""
    verdicts = result.tables["verdicts"]
    labels = [_(DEPLOYMENT_LABELS[d]) for d in DEPLOYMENTS]
    counts = go.Figure([
        go.Bar(name=_(check_words.VERDICTS[verdict]), x=labels, marker_color=colour,
               y=[int(((verdicts["deployment"] == d) & (verdicts["verdict"] == verdict)).sum()) for d in DEPLOYMENTS])
        for verdict, colour in VERDICT_COLOURS.items()
    ])
    counts.update_layout(barmode="stack", title=_(N_("The checker's verdicts on each deployment")),
                         yaxis_title=_(N_("checks")))
    table = go.Figure(go.Table(
        header=dict(values=[_(N_("deployment")), _(N_("check")), _(N_("variant")), _(N_("verdict"))], align="left"),
        cells=dict(values=[[_(DEPLOYMENT_LABELS[d]) for d in verdicts["deployment"]],
                           [_(check_words.CHECKS[c]) for c in verdicts["check"]],
                           [_(check_words.VARIANTS[v]) for v in verdicts["variant"]],
                           [_(check_words.VERDICTS[v]) for v in verdicts["verdict"]]],
                   align="left"),
    ))
    table.update_layout(title=_(N_("Check by check")))
    return [(_(N_("Verdicts")), plots.layout(counts)), (_(N_("Checks")), plots.layout(table, 120 + 28 * len(verdicts)))]
