"""Figures of the forgot_ready exercise (engine.py beside it), drawn only from its result's
tables and numbers; captions, axes and legends pass through _ (a Words, for the learner's language)."""
from __future__ import annotations

import plotly.express as px

from app.charts import plots
from app.charts.figures import Chart, listed, render
from app.exercise_kit import ExerciseResult
from app.i18n import N_, Say
from app.recogniser.exercises.forgot_ready.words import CHART_SUMMARIES as SAID

RUN_LABELS = {"ready_ignored": N_("READY ignored"), "ready_honoured": N_("READY honoured")}


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    """The exercise's charts, each drawn from one of the result's tables, labels through _."""
    s = result.tables["sessions"].assign(who=lambda f: plots.session_names(f, _))
    s["verdict"] = s["verdict"].map(lambda code: plots.verdict_name(code, _))
    s["run"] = s["run"].map(lambda code: _(RUN_LABELS[code]))
    fig = px.bar(s, x="who", y="wrong_symbols", color="verdict", facet_row="run", color_discrete_map=plots.verdict_colours(_),
                 labels={"who": "", "wrong_symbols": _(N_("wrong symbols")), "verdict": _(N_("verdict")), "run": ""},
                 title=_(N_("Wrong symbols per session")))
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    return [Chart(_(N_("Sessions")), plots.layout(fig, 420), _summary(result, _))]


def _summary(result: ExerciseResult, _: Say = str) -> str:
    """Per run (a row of the chart): how many sessions stayed intact, how many wrong symbols in all."""
    s = result.tables["sessions"]
    runs = [render(_, SAID["run_item"], run=_(RUN_LABELS[run]), intact=int((mine["verdict"] == "intact").sum()),
                   total=len(mine), wrong=int(mine["wrong_symbols"].sum()))
            for run, mine in s.groupby("run", sort=False)]
    return render(_, SAID["sessions"], runs=listed(runs, _, clauses=True))
