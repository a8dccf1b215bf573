"""The server log panel: the lines Triton wrote about one run or exercise, quoted verbatim.

Used by the lab page and the exercises page. The engine hands over a run_log.RunLog (codes
and the raw lines); the one-line readings come from app/ui/log_readings.py.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app.lab.run_log import RunLog
from app.ui.log_readings import UNAVAILABLE, reading, routine_counts


def table(log: RunLog) -> pd.DataFrame:
    """The evidence lines: time, level, the line exactly as Triton wrote it, and what it says."""
    rows = [{"time": e.time, "level": e.level.name.lower(), "log line (verbatim)": e.raw, "what it says": reading(e)}
            for e in log.evidence()]
    return pd.DataFrame(rows, columns=["time", "level", "log line (verbatim)", "what it says"])


def show(log: RunLog | None, key: str) -> None:
    if log is None:
        return
    if not log.available:
        with st.expander("Server log: not available", expanded=False):
            st.info(UNAVAILABLE[log.unavailable])
        return
    evidence = table(log)
    with st.expander(f"Server log: {len(evidence)} line(s) of evidence", expanded=False):
        st.caption(
            "What Triton itself wrote about this run's models and correlation IDs, quoted from its log file. "
            "At the default verbosity Triton logs little (loads and correlation-ID conflicts); exercises that "
            "need the backlog, the reaper or refusals as evidence raise it to 1 for their own run."
        )
        if evidence.empty:
            st.markdown("Triton wrote no line of evidence about this run.")
        else:
            st.dataframe(evidence, hide_index=True, width="stretch", key=f"{key}-lines",
                         column_config={"log line (verbatim)": st.column_config.TextColumn(width="large"),
                                        "what it says": st.column_config.TextColumn(width="large")})
        routine = routine_counts(log)
        if routine:
            st.caption(f"Also counted, not quoted (one per request at verbosity 1): {routine}.")
