"""Every chart draws from app/charts/palette.py (Okabe-Ito, colour-blind safe) and gives a second
cue where colour tells categories apart. Pure: figures built from a hand-made run, and the chart
modules read as source for colours of their own."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import pytest

from app.charts import item_analysis, palette, plots
from app.i18n import words
from app.lab.paths import REPO_ROOT
from app.presenter import figures as presenter
from app.recogniser import figures
from app.recogniser.engine.judgement.analysis import RunAnalysis
from app.registry import exercise_figures as exercise_charts
from app.registry import families
from tests.recogniser.engine.test_analysis import request

CHARTS = REPO_ROOT / "app" / "charts"
NAMED = {"red", "green", "blue", "orange", "purple", "brown", "pink", "yellow", "cyan", "magenta", "teal", "navy",
         "lime", "olive", "maroon", "gold", "violet", "indigo", "crimson", "salmon", "coral", "turquoise"}
_HEX = re.compile(r"^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_RGB = re.compile(r"^rgba?\(\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)")


def rgb(colour: str) -> tuple[int, int, int] | None:
    """(r, g, b) of a #rgb, #rrggbb, rgb() or rgba() string; None for anything else."""
    colour = colour.strip().lower()
    if _HEX.match(colour):
        digits = colour[1:] if len(colour) == 7 else "".join(c * 2 for c in colour[1:])
        return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)
    if found := _RGB.match(colour):
        return tuple(round(float(v)) for v in found.groups())  # type: ignore[return-value]
    return {"white": (255, 255, 255), "black": (0, 0, 0)}.get(colour)


ALLOWED = {rgb(c) for c in (*palette.CATEGORY, palette.LIGHT_GOOD, palette.LIGHT_BAD)}


def allowed(colour: str) -> bool:
    """A palette colour (at any opacity), or a grey, which tells no category from another."""
    value = rgb(colour)
    return value is not None and (value in ALLOWED or value[0] == value[1] == value[2])


def colours_of(fig) -> list[str]:
    """Every colour a figure's traces name: markers, lines, bar patterns, heatmap scales."""
    found: list[str] = []

    def add(value) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(v for v in value if isinstance(v, str))

    for trace in fig.data:
        marker = getattr(trace, "marker", None)
        if marker is not None:
            add(marker.color)
            if getattr(marker, "line", None) is not None:
                add(marker.line.color)
        line = getattr(trace, "line", None)
        if line is not None:
            add(line.color)
        for _stop, colour in getattr(trace, "colorscale", None) or ():
            add(colour)
    for shape in fig.layout.shapes or ():
        add(shape.fillcolor)
        add(shape.line.color)
    return found


def hand_made_run() -> pd.DataFrame:
    """The hand-made run of tests/recogniser/test_figures.py, with a ninth session (the palette's second round);
    test_chart_summaries reads it too (a wrong letter, padding rows, a queue wait)."""
    return pd.DataFrame([
        request(0, 0, 0, 0, 3, 0.010, queue_ms=0.1),
        request(1, 0, 0, 2, 3, 0.010, queue_ms=0.1, owner=0),
        request(0, 1, 0, 0, 1, 0.030, queue_ms=0.1, expected=5, symbol=9, state_in=7, owner=102),
        request(2, 0, 1, 0, 1, 0.012, queue_ms=8.0),
        request(2, 1, 1, 0, 2, 0.040, queue_ms=0.1),
    ])


@pytest.fixture()
def requests() -> pd.DataFrame:
    return hand_made_run()


SERVER = {"batch_sizes": {1: 5, 2: 1, 3: 1}, "inference_count": 5, "mean_queue_us": 3000.0, "mean_compute_us": 4000.0}


def built(requests: pd.DataFrame) -> dict:
    """One of each chart the pure builders draw, by name."""
    sessions = pd.DataFrame({"session": [0, 1, 2], "chunks": [2, 1, 2]})
    cells = pd.DataFrame({"t": [0.0, 1.0, 0.0, 1.0], "instance": ["0", "0", "1", "1"], "cells": [1, 2, 0, 1],
                          "evicted": [0, 1, 0, 0]})
    _ = words("en")
    return {
        "slot timeline": figures.slot_timeline(RunAnalysis(requests, instances=2, slots=4), "direct"),
        "batch sizes": figures.batch_sizes(RunAnalysis(requests, SERVER)),
        "queue vs compute": figures.queue_vs_compute(RunAnalysis(requests, SERVER)),
        "latency": figures.latency_percentiles(RunAnalysis(requests, sessions=sessions)),
        "instances": figures.instance_work(RunAnalysis(requests)),
        "state cells": figures.state_cells(cells),
        "quiz options": item_analysis.option_counts(["a", "b", "c"], [3, 1, 0], [True, False, False], 4),
        "class vote": presenter.votes_figure(("intact", "foreign"), {"intact": 3, "foreign": 5}, _, right=("intact",)),
    }


def test_the_palette_is_okabe_ito_and_plotly_express_draws_from_it():
    assert set(palette.CATEGORY) == {"#000000", "#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7"}
    assert list(px.defaults.color_discrete_sequence) == list(palette.CATEGORY)
    assert list(px.defaults.symbol_sequence) == list(palette.SYMBOLS)
    assert list(px.defaults.line_dash_sequence) == list(palette.DASHES)


def test_every_built_chart_draws_only_palette_colours_or_greys(requests):
    for name, fig in built(requests).items():
        assert colours_of(fig), f"{name}: no colours read (the reader missed where this chart keeps them)"
        bad = [c for c in colours_of(fig) if not allowed(c)]
        assert not bad, f"{name}: colours outside app/charts/palette.py: {bad}"
        assert list(fig.layout.colorway) == list(palette.CATEGORY), name


def test_the_timeline_tells_sessions_past_the_palette_apart_by_pattern():
    rows = [request(0, 0, 0, s % 4, 1, 0.01 * (s + 1), queue_ms=0.1) for s in range(10)]
    many = pd.DataFrame([{**row, "session": s, "tag": 500 + s, "corrid": str(500 + s), "state_owner": 500 + s,
                          "request_id": f"r:{s}:0"} for s, row in enumerate(rows)])
    fig = figures.slot_timeline(RunAnalysis(many, instances=1, slots=4), "direct")
    bars = {t.name: (t.marker.color, t.marker.pattern.shape) for t in fig.data if t.name.startswith("session ")}
    assert bars["session 1"] == (palette.CATEGORY[0], "") and bars["session 9"] == (palette.CATEGORY[0], palette.PATTERNS[1])
    assert len(set(bars.values())) == len(bars)  # no two sessions look alike


def test_categories_told_apart_by_colour_get_a_second_cue(requests):
    charts = built(requests)
    grouped = [t for t in charts["batch sizes"].data]
    assert len({t.marker.pattern.shape for t in grouped}) == len(grouped) == 2  # two series: plain and hatched
    lines = [t for t in charts["state cells"].data if "cells held" in t.name]
    assert len({t.line.dash for t in lines}) == len(lines) == 2 and len({t.marker.symbol for t in lines}) == 2
    options = charts["quiz options"].data[0]
    assert list(options.marker.pattern.shape) == ["", "/", "/"]  # wrong options hatched, not only red
    vote = charts["class vote"].data[0]
    assert list(vote.marker.pattern.shape) == ["", "/"]


def test_a_lone_line_stays_solid_and_a_lone_bar_plain(requests):
    fig = figures.instance_work(RunAnalysis(requests))
    assert {t.marker.pattern.shape for t in fig.data} == {None}  # one series in three panels: no hatching
    fig = figures.slot_timeline(RunAnalysis(requests, instances=2, slots=4), "direct")
    waits = next(t for t in fig.data if t.name == "waiting in the queue")
    assert waits.line.dash == "solid"


def _colour_literals(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and (rgb(node.value) is not None or node.value.lower() in NAMED)]


def test_no_chart_module_names_a_colour_of_its_own_except_greys():
    """The palette is declared once: the chart modules name palette colours, or greys for what is
    no category (padding, queue time, empty cells); and none picks from plotly's own palettes."""
    for path in sorted(CHARTS.rglob("*.py")):
        if path.name == "palette.py":
            continue
        source = path.read_text(encoding="utf-8")
        assert "plotly.colors" not in source and "qualitative" not in source, path
        bad = [(line, value) for line, value in _colour_literals(path) if not allowed(value) or rgb(value) in ALLOWED - {(0, 0, 0)}]
        assert not bad, f"{path.relative_to(REPO_ROOT)}: colours named outside app/charts/palette.py: {bad}"


def test_every_exercise_figure_is_finished_by_the_shared_layout():
    """Each exercise module returns its figures (in Charts) through plots.layout, which ends in palette.finish,
    so what holds for the built charts above holds for every exercise's."""
    assert "palette.finish(fig)" in Path(plots.__file__).read_text(encoding="utf-8")
    for name in families.names():
        draw = exercise_charts.drawing(name)
        tree = ast.parse(Path(draw.__code__.co_filename).read_text(encoding="utf-8"))
        function = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "figures")
        charts = [n for n in ast.walk(function) if isinstance(n, ast.Call) and ast.unparse(n.func) == "Chart"
                  and len(n.args) == 3]  # Chart(caption, figure, summary)
        assert charts, f"{name}: figures() makes no Chart(caption, figure, summary) to read"
        unfinished = [ast.unparse(c) for c in charts if not ast.unparse(c.args[1]).startswith("plots.layout(")]
        assert not unfinished, f"{name}: figures not passed through plots.layout: {unfinished}"


def test_finish_takes_every_kind_of_trace_the_charts_draw():
    fig = go.Figure([go.Table(header={"values": ["a"]}, cells={"values": [[1]]}), go.Heatmap(z=[[0, 1]]),
                     go.Box(y=[1, 2], name="box"), go.Bar(x=[1], y=[1], name="bar"), go.Scatter(x=[1], y=[1], name="dots", mode="markers")])
    palette.finish(fig)
    assert fig.data[3].marker.color == palette.CATEGORY[2]  # the table and heatmap share the nameless category
    assert fig.data[4].marker.symbol == palette.SYMBOLS[0]


def _shapes(fig):
    """The bars and markers of a figure: the filled shapes whose edge a learner must see."""
    for trace in fig.data:
        if trace.type in ("bar", "histogram") or (trace.type == "scatter" and "markers" in palette._modes(trace)):
            yield trace


def test_every_bar_and_marker_stands_out_from_white_by_its_fill_or_its_outline(requests):
    """WCAG 2.1 1.4.11: a shape 3:1 against white, by its fill or by a dark edge (palette.finish)."""
    outlined = 0
    for name, fig in built(requests).items():
        for trace in _shapes(fig):
            if palette.faint(palette.fill_of(trace)):
                outlined += 1
                edge = trace.marker.line
                assert edge.color and palette.contrast(edge.color, palette.WHITE) >= palette.NON_TEXT, (name, trace.name)
                assert edge.width and edge.width >= 1, (name, trace.name)
    assert outlined, "no chart here has a light fill: the test would hold whatever finish does"


def test_a_light_fill_gets_an_outline_and_a_dark_one_or_a_chosen_edge_keeps_its_own():
    fig = palette.finish(go.Figure([
        go.Bar(x=[1], y=[1], name="light", marker={"color": palette.YELLOW}),
        go.Bar(x=[1], y=[1], name="dark", marker={"color": palette.BLUE}),
        go.Bar(x=[1], y=[1], name="edged", marker={"color": palette.SKY_BLUE, "line": {"color": palette.BLACK, "width": 2}}),
        go.Scatter(x=[1, 2], y=[1, 2], name="dots", mode="markers", marker={"color": [palette.BLUE, palette.ORANGE]}),
        go.Scatter(x=[1, 2], y=[1, 2], name="drawn", mode="lines+markers", line={"color": palette.SKY_BLUE}),
    ]))
    light, dark, edged, dots, drawn = fig.data
    assert (light.marker.line.color, light.marker.line.width) == (palette.OUTLINE, 1)
    assert dark.marker.line.color is None
    assert (edged.marker.line.color, edged.marker.line.width) == (palette.BLACK, 2)
    assert dots.marker.line.color == palette.OUTLINE  # one point of the two is light
    assert drawn.marker.line.color == palette.OUTLINE  # markers that take the line's light colour
    assert palette.contrast(palette.OUTLINE, palette.WHITE) >= palette.NON_TEXT
    assert palette.contrast(palette.YELLOW, palette.WHITE) < palette.NON_TEXT
