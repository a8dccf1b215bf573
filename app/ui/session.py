"""The one server, deployer and learner identity each page uses (Streamlit's cache and state).

The server lives in st.cache_resource so every browser session and rerun shares one Triton;
the learner id lives in st.session_state and in the URL (?learner=...), so a link keeps it.
"""
from __future__ import annotations

import secrets

import streamlit as st

from app.lab.deployer import Deployer
from app.lab.server.connection import LabServer
from app.lab.server.errors import ServerError
from app.i18n import N_
from app.ui.language import _, t


@st.cache_resource(show_spinner=False)
def _start_lab() -> tuple[LabServer, Deployer]:
    server = LabServer.from_env()
    server.start()
    return server, Deployer(server)


def _lab() -> tuple[LabServer, Deployer]:
    # The spinner is drawn here, not by the cache, so its text is in this learner's language.
    with st.spinner(_("Starting Triton (about 10 s on two cores)...")):
        return _start_lab()


_lab.clear = _start_lab.clear  # type: ignore[attr-defined]


def lab() -> tuple[LabServer, Deployer] | None:
    """The live server and deployer, or None after showing why not (with a way to recover)."""
    try:
        server, deployer = _lab()
    except ServerError as err:
        st.error(t().render(N_("The Triton server could not be started: `{error:text}`"), error=err))
        if st.button(_("Try again"), key="lab-retry-start"):
            _lab.clear()
            st.rerun()
        return None
    if not server.alive():
        if server.is_embedded:
            st.error(_("The embedded Triton server has stopped (it crashed or was killed)."))
            if st.button(_("Restart the server"), key="lab-restart"):
                with st.spinner(_("Restarting Triton...")):
                    server.restart()
                    deployer.forget()
                st.rerun()
        else:
            st.error(t().render(N_("The Triton server at {url:text} does not answer: start it again, then reload this page."),
                                url=server.url))
        return None
    return server, deployer


def learner() -> str:
    """A stable id for this learner: from the URL if given, else made once per browser session."""
    if "learner" not in st.session_state:
        from_url = st.query_params.get("learner")
        st.session_state["learner"] = from_url or f"learner-{secrets.token_hex(3)}"
    return st.session_state["learner"]
