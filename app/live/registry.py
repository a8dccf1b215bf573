"""Each lesson's live element, by the name its front matter gives in `live:`: the registry, as data
(LIVE: name -> "module:function" of the view that draws it), and render_live, which a lesson page calls.

The views are imported when a lesson draws one, not here: lesson 8's and lesson 9's views belong to
the generation feature (app/generation/live_view.py, app/generation/paged/lesson/view.py), which
itself draws with app/live/common, so a static import of them here would make the two features
import each other."""
from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import streamlit as st

from app.i18n import N_
from app.ui import shared_server
from app.ui.language import _, t

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.server import LabServer

LiveView = Callable[["LabServer", "Deployer"], None]  # draws the element on the lab's server

LIVE = {
    "batch_vs_single": "app.live.sentiment.view:batch_vs_single",
    "dynamic_batching_demo": "app.live.sentiment.view:dynamic_batching_demo",
    "the_mistake": "app.live.recogniser.view:the_mistake",
    "sequence_controls": "app.live.recogniser.view:sequence_controls",
    "direct_vs_oldest": "app.live.recogniser.view:direct_vs_oldest",
    "instances_vs_batching": "app.live.recogniser.view:instances_vs_batching",
    "rollout_checks": "app.live.rollout.view:rollout_checks",
    "generation_in_flight": "app.generation.live_view:generation_in_flight",
    "kv_memory": "app.generation.paged.lesson.view:kv_memory",
}


def view(name: str) -> LiveView:
    """The function that draws the live element `name` (a key of LIVE)."""
    module, function = LIVE[name].split(":")
    return cast("LiveView", getattr(importlib.import_module(module), function))


def render_live(name: str) -> None:
    if name not in LIVE:
        st.warning(t().render(N_("This lesson names a live exercise '{name:text}' that the app does not have."), name=name))
        return
    st.markdown("### " + _("Live on the server"))
    lab = shared_server.lab()  # explains a dead server and offers a restart
    if lab is None:
        return
    view(name)(*lab)
