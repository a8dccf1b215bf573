"""What the exercises' figures share (no Streamlit): colours, session labels, layout.

Each exercise draws its own figures in its module (`figures(result)`), from the result's
tables, so what a learner sees is exactly what the CLI's JSON holds.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

READ_COLOURS = {"own": "#2ca02c", "fresh": "#9edae5", "refused": "#d62728", "unknown": "#7f7f7f"}
LETTER = {True: "right letter", False: "wrong letter"}
VERDICT_COLOURS = {"intact": "#2ca02c", "lost": "#ff7f0e", "foreign": "#9467bd", "garbage": "#8c564b", "error": "#d62728"}


def sessions(frame: pd.DataFrame) -> pd.Series:
    return "session " + (frame["session"].astype(int) + 1).astype(str)


def layout(fig: go.Figure, height: int = 320) -> go.Figure:
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=40, b=10), legend_title_text="")
    return fig
