"""Every chart the app shows has its message said in words beside it, in every language, read from
the data the chart draws (issue 24: a learner who cannot tell the colours apart, or uses a screen
reader, gets what the chart shows). Pure: figures built from the hand-made tables of the judge and
figure tests; the pages read as source.
"""
from __future__ import annotations

import ast
import inspect
import re

import pandas as pd
import plotly.graph_objects as go
import pytest

from app.charts import item_analysis
from app.checker import figures as check_charts
from app.i18n import SOURCE_LANGUAGE, languages, words
from app.lab.paths import REPO_ROOT
from app.live.sentiment import figures as sentiment_figures
from app.presenter import figures as presenter
from app.recogniser import figures, replay
from app.recogniser.engine.judgement import analysis
from app.recogniser.engine.judgement.analysis import RunAnalysis
from tests.charts.test_chart_palette import SERVER, hand_made_run
from tests.checker.test_placement_and_report import broken_result
from tests.recogniser.engine.test_analysis import request

LANGS = languages()
OTHERS = [lang for lang in LANGS if lang != SOURCE_LANGUAGE]


@pytest.fixture()
def requests() -> pd.DataFrame:
    return hand_made_run()


class Run:
    """What a RunResult gives the charts (requests, sessions, server) and a sentiment run (mode, throughput)."""

    def __init__(self, requests: pd.DataFrame | None = None, mode: str = "single", throughput: float = 40.0,
                 concurrency: int = 1, batch_sizes: dict | None = None):
        self.requests = requests
        self.sessions = pd.DataFrame({"session": [0, 1, 2], "chunks": [2, 1, 2]})
        self.server = {**SERVER, "batch_sizes": batch_sizes or SERVER["batch_sizes"]}
        self.mode, self.throughput, self.concurrency = mode, throughput, concurrency


def drawn(requests: pd.DataFrame, _) -> dict[str, tuple[go.Figure, str]]:
    """Every chart outside the exercises, with its summary, in _'s language: one of each the pages show."""
    run = Run(requests)
    cells = pd.DataFrame({"t": [0.0, 1.0, 0.0, 1.0], "instance": ["0", "0", "1", "1"], "cells": [1, 2, 0, 1],
                          "evicted": [0, 1, 0, 0]})
    sentiment = [Run(mode="single", throughput=40.0), Run(mode="concurrent", throughput=300.0, concurrency=16,
                                                          batch_sizes={8: 6, 16: 1})]
    options = (["A. a", "B. b<br>more", "C. c"], [3, 1, 0], [True, False, False], 4)
    votes = (("intact", "foreign"), {"intact": 3, "foreign": 5})
    check = broken_result()
    analysed = analysis.of_run(run, 2, 4)
    out = {name: (fig, lab) for (name, fig), lab in zip(figures.lab_figures(analysed, "direct", _=_).items(),
                                                        figures.lab_summaries(analysed, "direct", _=_).values(), strict=True)}
    out |= {
        "throughput": (sentiment_figures.throughput(sentiment, _=_), sentiment_figures.throughput_summary(sentiment, _=_)),
        "server batches": (sentiment_figures.server_batches(sentiment, _=_),
                           sentiment_figures.server_batches_summary(sentiment, _=_)),
        "state cells": (figures.state_cells(cells, _=_), figures.state_cells_summary(cells, _=_)),
        "no state cells": (figures.state_cells(None, _=_), figures.state_cells_summary(None, _=_)),
        "replay": (replay.replay_figure(run, _=_, highlight=0), replay.replay_summary(run, _=_, highlight=0)),
        "quiz options": (item_analysis.option_counts(*options, _=_), item_analysis.option_counts_summary(*options, _=_)),
        "class vote": (presenter.votes_figure(*votes, words=_), presenter.votes_summary(*votes, words=_)),
        "class vote revealed": (presenter.votes_figure(*votes, words=_, right=("intact",)),
                                presenter.votes_summary(*votes, words=_, right=("intact",))),
        "check timeline": (check_charts.timeline(check, _), check_charts.timeline_summary(check, _)),
    }
    pair = replay.side_by_side(run, run, _=_)
    said = replay.side_by_side_summaries(run, run, _=_)
    out |= {f"side by side {k}": (fig, s) for k, (fig, s) in enumerate(zip(pair, said, strict=True))}
    out |= {f"check errors {k}": (c.figure, c.summary) for k, c in enumerate(check_charts.errors(check, _))}
    return out


# Builders whose words have another name than <builder>_summary.
PAIRED = {"side_by_side": "side_by_side_summaries", "lab_figures": "lab_summaries", "replay_figure": "replay_summary",
          "votes_figure": "votes_summary"}


def test_every_figure_builder_has_a_summary_beside_it():
    """A chart module's figure builder (a public function that returns a Figure) has <name>_summary
    next to it, so a new chart cannot come without its words."""
    for module in (figures, replay, check_charts, item_analysis, presenter, sentiment_figures):
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ != module.__name__ or name.startswith("_") or name == "empty_figure":
                continue
            if "Figure" in str(function.__annotations__.get("return", "")):
                wanted = PAIRED.get(name, f"{name}_summary")
                assert callable(getattr(module, wanted, None)), f"{module.__name__}.{name} has no {wanted}"


def test_every_chart_has_a_summary_in_every_language(requests):
    english = drawn(requests, words(SOURCE_LANGUAGE))
    assert len(english) >= 16
    for name, (fig, summary) in english.items():
        assert isinstance(fig, go.Figure) and summary.strip(), name
    for lang in OTHERS:
        theirs = drawn(requests, words(lang))
        assert theirs.keys() == english.keys()
        for name, (_fig, summary) in theirs.items():
            assert summary.strip() and summary != english[name][1], (lang, name, summary)


def _bars(fig: go.Figure, prefix: str) -> list:
    return [t for t in fig.data if (t.name or "").startswith(prefix)]


def test_the_timeline_summary_counts_what_the_timeline_draws(requests):
    fig = figures.slot_timeline(RunAnalysis(requests, instances=2, slots=4), "direct")
    summary = figures.slot_timeline_summary(RunAnalysis(requests, instances=2, slots=4), "direct")
    sessions = _bars(fig, "session ")
    chunks = sum(len(t.x) for t in sessions)
    wrong = next(t for t in fig.data if t.name == "letter came back wrong")
    padding = next(t for t in fig.data if t.name == "padding row (READY=0)")
    rows = len(fig.layout.yaxis.tickvals)
    assert f"{chunks} chunks of {len(sessions)} sessions ran in {rows} instance × slot rows" in summary
    assert f"Letters that came back wrong: {len(wrong.x)}, in session 1." in summary  # session 0's second chunk: 9 for 5
    assert f"Padding rows (READY=0) in the same batches: {len(padding.x)}." in summary
    assert "the longest wait in the queue was 8.0 ms" in summary  # session 2's first chunk waited 8 ms
    assert (chunks, len(sessions), rows, len(wrong.x), len(padding.x)) == (5, 3, 8, 1, 2)


def test_the_server_side_summaries_read_the_bars_and_panels(requests):
    batches = figures.batch_sizes(RunAnalysis(requests, SERVER))
    server = next(t for t in batches.data if t.name == "server statistics")
    trace = next(t for t in batches.data if t.name == "this run's trace")
    sizes = dict(zip(server.x, server.y, strict=True))
    usual = max(sizes, key=sizes.get)
    said = figures.batch_sizes_summary(RunAnalysis(requests, SERVER))
    assert said == (f"The server counted {sum(server.y)} executions, most often of batch size {usual}, the largest of "
                    f"{max(k for k, v in sizes.items() if v)}; this run's trace counted {sum(trace.y)}.")
    work = figures.instance_work(RunAnalysis(requests))
    per_instance = dict(zip(work.data[1].x, work.data[1].y, strict=True))  # the "requests" panel
    said = figures.instance_work_summary(RunAnalysis(requests))
    for label, n in per_instance.items():
        assert re.search(rf"{label} ran {n} requests in \d+ executions", said), (label, said)


def test_an_untraced_run_says_so_in_words():
    untraced = pd.DataFrame([{**request(0, 0, 0, 0, 1, 0.01, queue_ms=0.1), "exec_start": float("nan")}])
    assert figures.slot_timeline_summary(RunAnalysis(untraced.iloc[0:0])) == \
        "No server trace for this run (external server without TRITON_TRACE_DIR)."


# ------------------------------------------------------------------ pages


def test_every_page_shows_a_chart_only_through_the_helper_that_writes_its_summary():
    """st.plotly_chart is called in one place, app/ui/chart.py, whose show() requires the summary."""
    callers = []
    for path in sorted((REPO_ROOT / "app").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.Attribute) and n.attr == "plotly_chart" for n in ast.walk(tree)):
            callers.append(path.relative_to(REPO_ROOT).as_posix())
    assert callers == ["app/ui/chart.py"]
    assert list(inspect.signature(__import__("app.ui.chart", fromlist=["show"]).show).parameters)[:3] == ["fig", "summary", "key"]


def test_a_summary_counts_one_session_in_the_singular(requests):
    one = requests[requests["session"] == requests["session"].min()]
    summary = figures.slot_timeline_summary(RunAnalysis(one, instances=2, slots=4), "direct")
    assert " of 1 session ran in " in summary, summary
