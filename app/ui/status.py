"""Server status panel: where Triton runs, on what, which version, and how each model is scheduled."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app.ui import session


def server_status() -> None:
    lab = session.lab()  # shows the error and a restart button when the server is down
    if lab is None:
        return
    server, _ = lab
    try:
        info = server.status()
    except Exception as err:  # a server dying between alive() and status() is still data
        st.error(f"The server stopped answering: {err}")
        return
    device = "GPU" if info["instance_kind"] == "KIND_GPU" else "CPU"
    where = "embedded (started by this app)" if info["mode"] == "embedded" else "external (TRITON_URL)"
    cols = st.columns(3)
    cols[0].metric("Server", "running" if info["alive"] else "down", help=where)
    cols[1].metric("Triton version", info["version"] or "?")
    cols[2].metric("Model instances run on", device)
    st.caption(f"Server: {where}, at {info['url']}.")
    if info.get("allocator") == "glibc malloc":
        st.warning(
            "The embedded Triton 2.51 runs on glibc malloc here. Its request tracing has a known bug "
            "(fixed upstream in server PR 8144) that can crash the server after some thousands of traced "
            "requests; install jemalloc (`apt-get install libjemalloc2`) and restart to avoid it."
        )
    if info["models"]:
        table = pd.DataFrame(info["models"]).rename(
            columns={"name": "model", "state": "state", "scheduler": "scheduler", "instances": "instances", "kind": "kind"}
        )
        st.dataframe(table, hide_index=True, width="stretch")
