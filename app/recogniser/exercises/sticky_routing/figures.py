"""Figures of the sticky_routing exercise (engine.py beside it), drawn only from its result's
tables and numbers; captions, axes and legends pass through _ (a Words, for the learner's language)."""
from __future__ import annotations

import pandas as pd
import plotly.express as px

from app.charts import plots
from app.charts.figures import Chart, listed, render
from app.exercise_kit import ExerciseResult
from app.i18n import N_, Say
from app.recogniser.exercises.sticky_routing import engine as sticky_routing
from app.recogniser.exercises.sticky_routing.words import CHART_SUMMARIES as SAID

REPLICA_LABEL = N_("replica {name}")
ANSWER_LABELS = {"right": N_("right"), "wrong": N_("wrong"), "refused": N_("refused")}
POLICY_LABELS = {"round_robin": N_("round robin"), "sticky": N_("hash on the session")}


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    """The exercise's charts, each drawn from one of the result's tables, labels through _."""
    routes = result.tables["routes"].assign(who=lambda f: plots.session_names(f, _), chunk_no=lambda f: f["chunk"] + 1)
    answer = routes.apply(lambda r: "refused" if r["error"] else ("right" if r["right"] else "wrong"), axis=1)
    said = _summary(routes.assign(answer_code=answer), _)
    routes["answer"] = answer.map(lambda code: _(ANSWER_LABELS[code]))
    routes["replica"] = routes["replica"].map(
        lambda name: _(N_("not logged")) if name == sticky_routing.NOT_LOGGED else _(REPLICA_LABEL).format(name=name))
    routes["policy"] = routes["policy"].map(lambda code: _(POLICY_LABELS[code]))
    fig = px.scatter(routes, x="chunk_no", y="who", color="replica", symbol="answer", facet_row="policy",
                     labels={"chunk_no": _(N_("chunk")), "who": "", "replica": "", "answer": "", "policy": ""},
                     title=_(N_("Which replica served each chunk (from nginx's access log)")),
                     symbol_map={_(ANSWER_LABELS["right"]): "circle", _(ANSWER_LABELS["wrong"]): "diamond",
                                 _(ANSWER_LABELS["refused"]): "x"})
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    fig.update_traces(marker_size=12)
    return [Chart(_(N_("Routing")), plots.layout(fig, 420), said)]


def _summary(routes: pd.DataFrame, _: Say = str) -> str:
    """Per policy (a row of the chart): sessions served by more than one replica, and the answers."""
    policies = []
    for policy, mine in routes.groupby("policy", sort=False):
        logged = mine[mine["replica"] != sticky_routing.NOT_LOGGED]
        moved = int((logged.groupby("session")["replica"].nunique() > 1).sum())
        counts = mine["answer_code"].value_counts()
        policies.append(render(_, SAID["policy_item"], policy=_(POLICY_LABELS[policy]), moved=moved,
                               sessions=mine["session"].nunique(), right=int(counts.get("right", 0)),
                               wrong=int(counts.get("wrong", 0)), refused=int(counts.get("refused", 0))))
    return render(_, SAID["routing"], policies=listed(policies, _, clauses=True))
