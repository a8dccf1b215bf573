"""Each lesson's live element, by the name its front matter gives in `live:`: the registry (LIVE: name -> the
view that draws it, imported here) and render_live, which a lesson page calls.

It sits above the features and imports their views statically: lesson 8's and lesson 9's belong to the generation
feature (app/generation/live_view.py, app/generation/paged/lesson/view.py), which draws with app/live/common, so
listing them inside app/live would make the two features import each other."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

from app.generation import live_view as generation
from app.generation.paged.lesson import view as paged
from app.i18n import N_
from app.live.rollout import view as rollout
from app.live.sentiment import view as sentiment
from app.recogniser import live_view as recogniser
from app.ui import shared_server
from app.ui.language import _, t

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.server import LabServer

LiveView = Callable[["LabServer", "Deployer"], None]  # draws the element on the lab's server

LIVE: dict[str, LiveView] = {
    "batch_vs_single": sentiment.batch_vs_single,
    "dynamic_batching_demo": sentiment.dynamic_batching_demo,
    "the_mistake": recogniser.the_mistake,
    "sequence_controls": recogniser.sequence_controls,
    "direct_vs_oldest": recogniser.direct_vs_oldest,
    "instances_vs_batching": recogniser.instances_vs_batching,
    "rollout_checks": rollout.rollout_checks,
    "generation_in_flight": generation.generation_in_flight,
    "kv_memory": paged.kv_memory,
}


def view(name: str) -> LiveView:
    """The function that draws the live element `name` (a key of LIVE)."""
    return LIVE[name]


def render_live(name: str) -> None:
    if name not in LIVE:
        st.warning(t().render(N_("This lesson names a live exercise '{name:text}' that the app does not have."), name=name))
        return
    st.markdown("### " + _("Live on the server"))
    lab = shared_server.lab()  # explains a dead server and offers a restart
    if lab is None:
        return
    view(name)(*lab)
