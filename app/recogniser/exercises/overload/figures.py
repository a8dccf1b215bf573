"""Figures of the overload exercise (engine.py beside it), drawn only from its result's
tables and numbers; captions, axes and legends pass through _ (a Words, for the learner's language)."""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from app.charts import palette, plots
from app.charts.figures import Chart, listed, render
from app.exercise_kit import ExerciseResult
from app.i18n import N_, Say
from app.recogniser.exercises.overload.words import CHART_SUMMARIES as SAID

REMEDY_LABELS = {
    "admission_limit": N_("admission limit"),
    "more_slots": N_("more slots"),
    "longer_idle_timeout": N_("longer idle timeout"),
}
ENDED_LABELS = {
    "intact": N_("intact"), "reaped": N_("reaped after getting a slot"), "refused_at_start": N_("refused at the start"),
    "lost": N_("lost"), "foreign": N_("foreign"), "garbage": N_("garbage"), "error": N_("error"),
}
ENDED_COLOURS = {"intact": palette.GOOD, "reaped": palette.BAD, "refused_at_start": palette.GREY}


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    """The exercise's charts, each drawn from one of the result's tables."""
    s = result.tables["sessions"].copy()
    loads = result.tables["loads"]
    ended = s.apply(lambda r: "reaped" if r.reaped else ("refused_at_start" if r.refused_at_start else r.verdict), axis=1)
    s["ended"] = [_(ENDED_LABELS.get(code, code)) for code in ended]
    s["ended_code"] = list(ended)
    by_load = s[s["run"].isin(loads["run"])].merge(loads[["run", "sessions"]], on="run")
    timeout_s = result.numbers["idle_timeout_s"]
    wait = px.strip(by_load, x="sessions", y="wait_s", color="ended",
                    color_discrete_map={_(ENDED_LABELS[k]): c for k, c in ENDED_COLOURS.items()},
                    labels={"sessions": _(N_("sessions opened at once")),
                            "wait_s": _(N_("wait before the first chunk ran (s)")), "ended": ""},
                    title=_(N_("Wait against load (capacity {capacity})")).format(capacity=result.numbers["capacity_sequences"]))
    wait.add_hline(y=timeout_s, line_dash="dot", annotation_text=_(N_("idle timeout {timeout} s")).format(timeout=f"{timeout_s:g}"))
    heaviest = loads["run"].iloc[-1]
    remedies = pd.concat([loads[loads["run"] == heaviest], result.tables["remedies"]], ignore_index=True)
    remedies["run"] = [_(N_("no remedy ({load})")).format(load=code) if code == heaviest else _(REMEDY_LABELS[code])
                       for code in remedies["run"]]
    bars = go.Figure([
        go.Bar(name=_(N_("longest wait (s)")), x=remedies["run"], y=remedies["max_wait_s"], text=remedies["max_wait_s"].round(2)),
        go.Bar(name=_(N_("sessions reaped")), x=remedies["run"], y=remedies["reaped"], text=remedies["reaped"]),
    ])
    bars.update_layout(barmode="group", title=_(N_("Remedies at the heaviest load: the wait, and who was reaped")))
    # One group of points per load, as the strip chart draws them (the ended column is their colour).
    loads_said = [render(_, SAID["load_item"], sessions=n, wait=float(mine["wait_s"].max()),
                         reaped=int((mine["ended_code"] == "reaped").sum()),
                         refused=int((mine["ended_code"] == "refused_at_start").sum()))
                  for n, mine in by_load.groupby("sessions", sort=True)]
    told_wait = render(_, SAID["wait"], loads=listed(loads_said, _, clauses=True), timeout=timeout_s)
    told_remedies = render(_, SAID["remedies"], runs=listed(
        [render(_, SAID["remedy_item"], run=name, wait=float(w), reaped=int(r))
         for name, w, r in zip(remedies["run"], remedies["max_wait_s"], remedies["reaped"], strict=True)], _, clauses=True))
    return [Chart(_(N_("Wait against load")), plots.layout(wait, 380), told_wait),
            Chart(_(N_("Remedies")), plots.layout(bars), told_remedies)]
