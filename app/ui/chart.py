"""The one way a page shows a chart: the figure, then its message in words beneath it.

A learner who cannot tell the chart's colours apart, or reads the page with a screen reader, gets
what the chart shows from the sentence (each chart module's summary, built from the same table as
the figure). tests/charts/test_chart_summaries.py holds every page to calling this, never
st.plotly_chart directly.
"""
from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import streamlit as st


def show(fig: go.Figure, summary: str, key: str, where: Any = None, **options: Any) -> None:
    """Draw fig in `where` (a column or container; the page by default), with `summary` under it."""
    where = st if where is None else where
    where.plotly_chart(fig, key=key, **options)
    where.caption(summary)
