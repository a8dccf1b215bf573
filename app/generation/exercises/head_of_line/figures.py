"""Figures of the head_of_line exercise: both timelines and the latencies, from its result's tables."""
from __future__ import annotations

from app.charts import plots
from app.charts.figures import Chart, render, sentences
from app.exercise_kit import ExerciseResult
from app.generation import figures as drawing
from app.generation.exercises.head_of_line import engine
from app.generation.exercises.head_of_line.words import CHART_SUMMARIES as SAID
from app.i18n import N_, Say


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    tokens, requests = result.tables["tokens"], result.tables["requests"]
    rows = engine.SETUP.max_batch_size
    out = [Chart(render(_, N_("Timeline: {mode:text}"), mode=drawing.mode_name(str(mode), _)),
                 plots.layout(drawing.timeline(mine, rows, "tick", _), 320), drawing.timeline_summary(mine, rows, "tick", _))
           for mode, mine in tokens.groupby("mode", sort=False)]
    said = render(_, SAID["ttft"], static=result.numbers["short_ttft_static_ms"], inflight=result.numbers["short_ttft_inflight_ms"])
    out.append(Chart(_(N_("Latency per request")), plots.layout(drawing.latencies(requests, _), 360),
                     sentences(said, drawing.latencies_summary(requests, _))))
    return out
