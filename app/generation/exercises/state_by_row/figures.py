"""Figures of the state_by_row exercise: both timelines, each wrong token crossed, whose state it continued in its
hover and in the summary, from its result's tables."""
from __future__ import annotations

from app.charts import plots
from app.charts.figures import Chart, render
from app.exercise_kit import ExerciseResult
from app.generation import figures as drawing
from app.generation.exercises.state_by_row import engine
from app.i18n import N_, Say


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    rows = engine.SETUP.max_batch_size
    return [Chart(render(_, N_("Timeline: {mode:text}"), mode=drawing.mode_name(str(mode), _)),
                  plots.layout(drawing.timeline(mine, rows, "tick", _), 320), drawing.timeline_summary(mine, rows, "tick", _))
            for mode, mine in result.tables["tokens"].groupby("mode", sort=False)]
