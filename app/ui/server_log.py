"""The server log panel: the lines Triton wrote about one run or exercise, quoted verbatim.

Used by the lab page and the exercises page. The engine hands over a run_log.RunLog (codes
and the raw lines); the one-line readings come from app/text/log_readings.py.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app.i18n import N_
from app.lab.observation import RunLog
from app.text.log_readings import reading, routine_counts, unavailable
from app.ui.language import _, t

LEVELS = {"info": N_("info"), "warning": N_("warning"), "error": N_("error"), "fatal": N_("fatal")}


def table(log: RunLog) -> pd.DataFrame:
    """The evidence lines: time, level, the line exactly as Triton wrote it, and what it says."""
    columns = [_("time"), _("level"), _("log line (verbatim)"), _("what it says")]
    rows = [[e.time, _(LEVELS[e.level.name.lower()]), e.raw, reading(e, t())] for e in log.evidence()]
    return pd.DataFrame(rows, columns=columns)


def show(log: RunLog | None, key: str) -> None:
    if log is None:
        return
    if log.unavailable is not None:  # not log.available
        with st.expander(_("Server log: not available"), expanded=False):
            st.info(unavailable(log.unavailable, t()))
        return
    evidence = table(log)
    with st.expander(t().render(N_("Server log: {n:count} line(s) of evidence"), n=len(evidence)), expanded=False):
        st.caption(_(
            "What Triton itself wrote about this run's models and correlation IDs, quoted from its log file. "
            "At the default verbosity Triton logs little (loads and correlation-ID conflicts); exercises that "
            "need the backlog, the reaper or refusals as evidence raise it to 1 for their own run."
        ))
        if evidence.empty:
            st.markdown(_("Triton wrote no line of evidence about this run."))
        else:
            line, says = _("log line (verbatim)"), _("what it says")
            st.dataframe(evidence, hide_index=True, width="stretch", key=f"{key}-lines",
                         column_config={line: st.column_config.TextColumn(width="large"),
                                        says: st.column_config.TextColumn(width="large")})
        routine = routine_counts(log, t())
        if routine:
            st.caption(t().render(N_("Also counted, not quoted (one per request at verbosity 1): {routine:text}."),
                                  routine=routine))
