"""Figures of the pipelined_client exercise (engine.py beside it), drawn only from its result's
tables and numbers; captions, axes and legends pass through _ (a Words, for the learner's language)."""
from __future__ import annotations

import pandas as pd
import plotly.express as px

from app.charts import palette, plots
from app.charts.figures import Chart, listed, render
from app.exercise_kit import ExerciseResult
from app.i18n import N_, Say
from app.recogniser.exercises.pipelined_client import engine as pipelined_client
from app.recogniser.exercises.pipelined_client.words import CHART_SUMMARIES as SAID

RUN_LABELS = {
    "http_async": N_("HTTP async_infer, {in_flight} in flight"),
    "grpc_async": N_("gRPC async_infer, {in_flight} in flight"),
    "grpc_stream": N_("gRPC stream, {in_flight} in flight"),
    "serial": N_("HTTP, one at a time"),
}
PLACED_LABELS = {True: N_("overtaken / overtaking"), False: N_("in order")}
ENDED_LABELS = {"intact": N_("intact"), "wrong": N_("wrong"), "refused": N_("refused")}


def run_label(code: str, _: Say = str) -> str:
    return _(RUN_LABELS[code]).format(in_flight=pipelined_client.IN_FLIGHT)


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    rounds = result.tables["rounds"].copy()
    rounds["transport"] = rounds["run"].map(lambda code: run_label(code, _))
    bars = px.bar(
        rounds, x="round", y="sessions_reordered", color="transport", barmode="group",
        labels={"sessions_reordered": _(N_("sessions with a chunk overtaken")), "round": _(N_("round")), "transport": ""},
        title=_(N_("How often chunks overtook each other, per round (from the server's trace)")),
    )
    arrival = result.tables["arrival"]
    shown = []
    for label in [r[0] for r in pipelined_client.RUNS]:
        mine = arrival[arrival["run"] == label]
        worst = mine.groupby("round")["out_of_place"].sum()
        pick = int(worst.idxmax()) if not worst.empty else 1  # the round with most to see
        shown.append(mine[mine["round"] == pick].assign(transport=run_label(label, _)))
    shown = pd.concat(shown, ignore_index=True)
    shown["placed"] = shown["out_of_place"].map(lambda placed: _(PLACED_LABELS[bool(placed)]))
    shown["session no."] = shown["session"] + 1
    shown["verdict"] = shown["verdict"].map(lambda v: plots.verdict_name(v, _))
    order = px.scatter(
        shown, x="chunk", y="arrival_rank", color="placed", facet_col="transport", facet_col_wrap=2,
        hover_data=["session no.", "verdict", "error"],
        color_discrete_map={_(PLACED_LABELS[True]): palette.BAD, _(PLACED_LABELS[False]): palette.GOOD},
        labels={"chunk": _(N_("sent as chunk")), "arrival_rank": _(N_("reached the scheduler as")), "placed": "",
                "session no.": _(N_("session")), "verdict": _(N_("verdict")), "error": _(N_("error text"))},
        title=_(N_("Sent order vs the order chunks reached the scheduler (all sessions, one round each)")),
    )
    order.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))  # facet titles: the transport only
    verdicts = rounds.groupby("transport")[["intact", "wrong", "refused"]].sum().reset_index()
    verdicts = verdicts.melt(id_vars="transport", var_name="ended", value_name="sessions")
    verdicts["ended"] = verdicts["ended"].map(lambda code: _(ENDED_LABELS[code]))
    colours = {"intact": plots.VERDICT_COLOURS["intact"], "wrong": plots.VERDICT_COLOURS["lost"], "refused": plots.VERDICT_COLOURS["error"]}
    outcome = px.bar(
        verdicts, x="transport", y="sessions", color="ended",
        color_discrete_map={_(ENDED_LABELS[k]): c for k, c in colours.items()},
        labels={"transport": "", "sessions": _(N_("sessions")), "ended": ""},
        title=_(N_("Transcripts over all rounds")),
    )
    per_round = [render(_, SAID["rounds_item"], transport=name, sessions=int(mine["sessions_reordered"].sum()),
                        reordered=int((mine["sessions_reordered"] > 0).sum()), rounds=len(mine))
                 for name, mine in rounds.groupby("transport", sort=False)]
    placed = [render(_, SAID["order_item"], transport=name, out=int(mine["out_of_place"].astype(bool).sum()), chunks=len(mine),
                     round=int(mine["round"].iloc[0]))
              for name, mine in shown.groupby("transport", sort=False)]
    ended = verdicts.pivot(index="transport", columns="ended", values="sessions").reindex(verdicts["transport"].unique())
    said = [render(_, SAID["verdicts_item"], transport=name, intact=int(row[_(ENDED_LABELS["intact"])]),
                   wrong=int(row[_(ENDED_LABELS["wrong"])]), refused=int(row[_(ENDED_LABELS["refused"])]))
            for name, row in ended.iterrows()]
    return [
        Chart(_(N_("Reordering per round")), plots.layout(bars), render(_, SAID["rounds"], runs=listed(per_round, _, clauses=True))),
        Chart(_(N_("Sent vs arrival order")), plots.layout(order, height=520), render(_, SAID["order"], runs=listed(placed, _, clauses=True))),
        Chart(_(N_("Verdicts")), plots.layout(outcome), render(_, SAID["verdicts"], runs=listed(said, _, clauses=True))),
    ]
