"""The server's memory as the lab's budget sees it: the budget, what each loaded deployment costs
and whether a run uses it, and what was unloaded to make room (app/lab/deployment/loaded_models.py).
Drawn last on the Instructor page."""
from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd
import streamlit as st

from app.i18n import N_, formats
from app.lab.deployment import MemoryReport
from app.ui.language import _, t

COLUMNS = {"deployment": N_("deployment"), "instances": N_("model processes"), "memory_mb": N_("memory booked (MB)"),
           "measured": N_("measured"), "running": N_("a run uses it"), "made_room_for": N_("to make room for"),
           "at": N_("at")}


def _columns(frame: pd.DataFrame) -> dict[str, Any]:  # Streamlit's column configs, whose type it does not export
    return {name: st.column_config.Column(_(COLUMNS[name])) for name in frame.columns}


def deployments_table(report: MemoryReport) -> pd.DataFrame:
    words = t()
    return pd.DataFrame([{"deployment": d.name, "instances": d.instances, "memory_mb": round(d.cost_mb),
                          "measured": formats.yes_no(d.measured, words), "running": formats.yes_no(d.running, words)}
                         for d in report.deployments], columns=["deployment", "instances", "memory_mb", "measured", "running"])


def unloaded_table(report: MemoryReport) -> pd.DataFrame:
    return pd.DataFrame([{"deployment": u.name, "memory_mb": round(u.cost_mb), "made_room_for": u.made_room_for,
                          "at": dt.datetime.fromtimestamp(u.at).strftime("%H:%M:%S")}
                         for u in reversed(report.unloaded)], columns=["deployment", "memory_mb", "made_room_for", "at"])


def draw(report: MemoryReport) -> None:
    st.subheader(_("The server's memory"))
    st.caption(_("Every instance of a Python-backend model runs in a process of its own on the server. The lab loads a deployment when a run first "
                 "needs it, within a memory budget; to make room it unloads the deployments used least recently that no "
                 "run is using. When running deployments fill the budget, a learner's run waits for one to end and is "
                 "then refused with the reason, rather than the machine running out of memory. What a deployment books is "
                 "the private memory of its processes, measured after its load, with a quarter more for growth as it "
                 "serves; where the server's processes cannot be read (a server on another machine) it is an estimate."))
    a, b, c = st.columns(3)
    a.metric(_("Memory budget"), t().render(N_("{n:count} MB"), n=round(report.budget_mb)))
    b.metric(_("Held by loaded deployments"), t().render(N_("{n:count} MB"), n=round(report.in_use_mb)))
    c.metric(_("Model processes"), t().render(N_("{n:count} of {total:count}"), n=report.stubs_in_use, total=report.stub_budget))
    loaded = deployments_table(report)
    if loaded.empty:
        st.info(_("Nothing is loaded on the server now."))
    else:
        st.dataframe(loaded, hide_index=True, column_config=_columns(loaded))
    unloaded = unloaded_table(report)
    st.markdown("**" + _("Unloaded to make room") + "**")
    if unloaded.empty:
        st.caption(_("Nothing has been unloaded to make room yet."))
    else:
        st.dataframe(unloaded, hide_index=True, column_config=_columns(unloaded))
