"""Figures of the verification exercise (engine.py beside it), drawn only from its
result's verdicts table (the deployment checker's verdicts, one row per check and variant); checks,
variants and verdicts in the checker's own words (app/checker/words/labels.py), passed through _ (a Words)."""
from __future__ import annotations

import plotly.graph_objects as go

from app.charts import palette, plots
from app.charts.figures import Chart, listed, render
from app.checker import words as check_words
from app.exercise_kit import ExerciseResult
from app.i18n import N_, Say
from app.recogniser.exercises.verification import engine as verification
from app.recogniser.exercises.verification.words import CHART_SUMMARIES as SAID

DEPLOYMENT_LABELS = {
    "sequence": N_("recogniser, sequence batcher"),
    "sentiment": N_("sentiment, dynamic batcher"),
    "recogniser": N_("recogniser, dynamic batcher"),
}
# not_exercised: held without its witness (app/checker/engine/witness.py), neither good nor bad, apart from skipped
VERDICT_COLOURS = {"held": palette.GOOD, "broken": palette.BAD, "skipped": palette.GREY, "not_exercised": palette.ORANGE}


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    """The checker's verdicts per deployment: counted, then listed check by check."""
    verdicts = result.tables["verdicts"]
    labels = [_(DEPLOYMENT_LABELS[d]) for d in verification.DEPLOYMENTS]
    counts = go.Figure([
        go.Bar(name=_(check_words.VERDICTS[verdict]), x=labels, marker_color=colour,
               y=[int(((verdicts["deployment"] == d) & (verdicts["verdict"] == verdict)).sum()) for d in verification.DEPLOYMENTS])
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
    per_deployment = [render(_, SAID["counts_item"], deployment=label,
                             **{v: int(((verdicts["deployment"] == d) & (verdicts["verdict"] == v)).sum()) for v in VERDICT_COLOURS})
                      for d, label in zip(verification.DEPLOYMENTS, labels, strict=True)]
    broken = verdicts[verdicts["verdict"] == "broken"]
    which = [render(_, SAID["broken_item"], check=_(check_words.CHECKS[r.check]), variant=_(check_words.VARIANTS[r.variant]),
                    deployment=_(DEPLOYMENT_LABELS[r.deployment])) for r in broken.itertuples()]
    listed_checks = (render(_, SAID["broken"], n=len(broken), checks=len(verdicts), which=listed(which, _)) if which
                     else render(_, SAID["none_broken"], checks=len(verdicts)))
    return [Chart(_(N_("Verdicts")), plots.layout(counts), render(_, SAID["counts"], deployments=listed(per_deployment, _, clauses=True))),
            Chart(_(N_("Checks")), plots.layout(table, 120 + 28 * len(verdicts)), listed_checks)]
