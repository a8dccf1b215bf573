"""Server status panel: where Triton runs, on what, which version, and how each model is scheduled."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app.i18n import N_
from app.text.errors import EXPLAINED, explain
from app.ui import shared_server
from app.ui.language import _, t

MODEL_COLUMNS = {"name": N_("model"), "state": N_("state"), "scheduler": N_("scheduler"),
                 "instances": N_("instances"), "kind": N_("kind")}


def server_status() -> None:
    if shared_server.starting():
        _starting()  # the page is drawn now; this panel fills in when the server is up
        return
    lab = shared_server.lab()  # shows the error and a restart button when the server is down
    if lab is None:
        return
    server, _unused = lab
    try:
        info = server.status()
    except EXPLAINED as err:  # a server dying between alive() and status() is still data
        st.error(t().render(N_("The server stopped answering: {reason:text}"), reason=str(explain(err, t(), next_steps=shared_server.NEXT_STEPS))))
        return
    device = "GPU" if info["instance_kind"] == "KIND_GPU" else "CPU"
    where = _("embedded (started by this app)") if info["mode"] == "embedded" else _("external (TRITON_URL)")
    cols = st.columns(3)
    cols[0].metric(_("Server"), _("running") if info["alive"] else _("down"), help=where)
    cols[1].metric(_("Triton version"), info["version"] or "?")
    cols[2].metric(_("Model instances run on"), device)
    st.caption(t().render(N_("Server: {where:text}, at {url:text}."), where=where, url=info["url"]))
    if info.get("allocator") == "glibc malloc":
        st.warning(_(
            "The embedded Triton 2.51 runs on glibc malloc here. Its request tracing has a known bug "
            "(fixed upstream in server PR 8144) that can crash the server after some thousands of traced "
            "requests; install jemalloc (`apt-get install libjemalloc2`) and restart to avoid it."
        ))
    if info["models"]:
        table = pd.DataFrame(info["models"]).rename(columns={k: _(v) for k, v in MODEL_COLUMNS.items()})
        st.dataframe(table, hide_index=True, width="stretch")


@st.fragment(run_every=1.0)
def _starting() -> None:
    """Says the server is starting, checks once a second, and redraws the page once it is up."""
    if shared_server.starting(grace_s=0):
        st.info(_("Triton is starting in the background. Lessons and the quiz can be read meanwhile; "
                  "this panel shows the server once it is up."),
                icon=":material/hourglass_top:")
    else:
        st.rerun()  # the whole page, so this panel is drawn without the fragment
