"""Figures of the cancelled_request exercise (engine.py beside it), drawn only from its result's
tables and numbers; captions, axes and legends pass through _ (a Words, for the learner's language)."""
from __future__ import annotations

import plotly.express as px

from app.charts import palette, plots
from app.charts.figures import Chart, listed, render
from app.exercise_kit import ExerciseResult
from app.i18n import N_, Say
from app.recogniser.exercises.cancelled_request.words import CHART_SUMMARIES as SAID

OUTCOME_LABELS = {
    "right": N_("right symbol"), "wrong": N_("wrong symbol"), "gave_up": N_("client gave up"),
    "refused_no_start": N_("refused: no START"), "cancelled": N_("cancelled"), "error": N_("other error"),
}
OUTCOME_COLOURS = {
    "right": palette.GOOD, "wrong": palette.ORANGE, "gave_up": palette.GREY, "refused_no_start": palette.BAD,
    "cancelled": palette.REDDISH_PURPLE, "error": palette.BLACK,
}
CLIENT_LABELS = {
    "grpc_carry_on": N_("gRPC: gives up, carries on"),
    "grpc_retry": N_("gRPC: gives up, retries"),
    "http_retry": N_("HTTP: gives up, retries"),
    "grpc_restart": N_("gRPC: new ID with START"),
    "grpc_long_timeout": N_("gRPC: timeout above the queue wait"),
}
NOTES = {
    "": "", "gives_up": N_("client gives up"), "carries_on": N_("carries on"), "retries": N_("retries the same chunk"),
    "restart": N_("new ID, START, context resent"),
}


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    chunks = result.tables["chunks"].copy()
    chunks["chunk no."] = chunks["chunk"] + 1
    chunks["client"] = [_(CLIENT_LABELS[r]) for r in chunks["run"]]
    chunks["what came back"] = [_(OUTCOME_LABELS[o]) for o in chunks["outcome"]]
    chunks["note"] = [_(NOTES[n]) if n else "" for n in chunks["note"]]
    steps = px.scatter(
        chunks, x="step", y="client", color="what came back", text="chunk no.",
        color_discrete_map={_(OUTCOME_LABELS[k]): c for k, c in OUTCOME_COLOURS.items()},
        hover_data=["corrid", "start", "timeout_s", "error", "state_in", "expected", "symbol", "note"],
        labels={"step": _(N_("request, in the order the client sent them")), "client": "", "what came back": "",
                "chunk no.": _(N_("chunk")), "start": "START", "timeout_s": _(N_("timeout (s)")),
                "error": _(N_("error text")), "expected": _(N_("expected")), "symbol": _(N_("symbol")), "note": _(N_("note"))},
        title=_(N_("Each client's requests: which chunk, and what came back")),
    )
    steps.update_traces(marker_size=20, textfont_color="white")
    figs = [Chart(_(N_("What each client got back")), plots.layout(steps, height=300), _steps_summary(result, _))]
    log = result.tables["server_log"]
    if not log.empty:
        counts = log.groupby("code").size().reset_index(name="lines")
        bars = px.bar(counts, x="code", y="lines", labels={"code": _(N_("log line")), "lines": _(N_("lines"))},
                      title=_(N_("What the server logged (verbosity 1)")))
        told = render(_, SAID["log"], lines=int(counts["lines"].sum()),
                      codes=listed([render(_, SAID["log_item"], n=r.lines, code=r.code) for r in counts.itertuples()], _))
        figs.append(Chart(_(N_("Server log")), plots.layout(bars), told))
    return figs


def _steps_summary(result: ExerciseResult, _: Say = str) -> str:
    """What came back to each client, counted by outcome (the colours of the steps chart)."""
    chunks = result.tables["chunks"]
    clients = []
    for run, mine in chunks.groupby("run", sort=False):
        came = mine["outcome"].value_counts()
        outcomes = listed([render(_, SAID["outcome_item"], n=int(came[code]), outcome=_(OUTCOME_LABELS[code]))
                           for code in OUTCOME_LABELS if code in came], _)
        clients.append(render(_, SAID["client_item"], client=_(CLIENT_LABELS[run]), outcomes=outcomes))
    return render(_, SAID["steps"], clients=listed(clients, _, clauses=True))
