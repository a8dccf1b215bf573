"""Each lesson's live element, by the name its front matter gives in `live:`."""
from __future__ import annotations

import streamlit as st

from app.i18n import N_
from app.ui import shared_server
from app.ui.language import _, t
from app.ui.live import generation, recogniser, rollout, sentiment

LIVE = {
    "batch_vs_single": sentiment.batch_vs_single,
    "dynamic_batching_demo": sentiment.dynamic_batching_demo,
    "the_mistake": recogniser.the_mistake,
    "sequence_controls": recogniser.sequence_controls,
    "direct_vs_oldest": recogniser.direct_vs_oldest,
    "instances_vs_batching": recogniser.instances_vs_batching,
    "rollout_checks": rollout.rollout_checks,
    "generation_in_flight": generation.generation_in_flight,
}


def render_live(name: str) -> None:
    element = LIVE.get(name)
    if element is None:
        st.warning(t().render(N_("This lesson names a live exercise '{name:text}' that the app does not have."), name=name))
        return
    st.markdown("### " + _("Live on the server"))
    lab = shared_server.lab()  # explains a dead server and offers a restart
    if lab is None:
        return
    element(*lab)
