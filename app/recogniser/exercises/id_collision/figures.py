"""Figures of the id_collision exercise (engine.py beside it), drawn only from its result's
tables and numbers; captions, axes and legends pass through _ (a Words, for the learner's language)."""
from __future__ import annotations

import plotly.express as px

from app.charts import palette, plots
from app.charts.figures import Chart, listed, render
from app.exercise_kit import ExerciseResult
from app.i18n import N_, Say
from app.recogniser.exercises.id_collision.words import CHART_SUMMARIES as SAID

RUN_LABELS = {"same_id": N_("same ID"), "unique_ids": N_("unique IDs")}


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    """The exercise's charts, each drawn from one of the result's tables, labels through _."""
    chunks = result.tables["chunks"].assign(who=lambda f: plots.session_names(f, _))
    chunks["letter"] = plots.symbol_words(chunks["right"], _)
    chunks["read"] = [
        plots.session_name(other, _) if read == "other" else _(plots.READ_LABELS[read])
        for read, other in zip(chunks["read_state_of"], chunks["other_session"], strict=True)
    ]
    chunks["run"] = chunks["run"].map(lambda code: _(RUN_LABELS[code]))
    colours = {_(plots.READ_LABELS[code]): colour for code, colour in plots.READ_COLOURS.items()}
    colours.update({plots.session_name(0, _): palette.BLUE, plots.session_name(1, _): palette.REDDISH_PURPLE})
    fig = px.scatter(chunks, x="t_send", y="who", color="read", symbol="letter", facet_row="run",
                     color_discrete_map=colours,
                     labels={"t_send": _(N_("sent at (s)")), "who": "", "read": _(N_("read state of")), "run": "",
                             "letter": ""},
                     title=_(N_("Whose state each chunk read")))
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    fig.update_traces(marker_size=10)
    return [Chart(_(N_("Chunks")), plots.layout(fig, 420), _summary(result, _))]


def _summary(result: ExerciseResult, _: Say = str) -> str:
    """Per run (a row of the chart): chunks that read the other session's state, and right letters."""
    chunks = result.tables["chunks"]
    runs = [render(_, SAID["run_item"], run=_(RUN_LABELS[run]), other=int((mine["read_state_of"] == "other").sum()),
                   chunks=len(mine), right=int(mine["right"].astype(bool).sum()))
            for run, mine in chunks.groupby("run", sort=False)]
    return render(_, SAID["chunks"], runs=listed(runs, _, clauses=True))
