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


@st.cache_resource(show_spinner="Starting Triton (about 10 s on two cores)...")
def _lab() -> tuple[LabServer, Deployer]:
    server = LabServer.from_env()
    server.start()
    return server, Deployer(server)


def lab() -> tuple[LabServer, Deployer] | None:
    """The live server and deployer, or None after showing why not (with a way to recover)."""
    try:
        server, deployer = _lab()
    except ServerError as err:
        st.error(f"The Triton server could not be started: {err}")
        if st.button("Try again", key="lab-retry-start"):
            _lab.clear()
            st.rerun()
        return None
    if not server.alive():
        if server.is_embedded:
            st.error("The embedded Triton server has stopped (it crashed or was killed).")
            if st.button("Restart the server", key="lab-restart"):
                with st.spinner("Restarting Triton..."):
                    server.restart()
                    deployer.forget()
                st.rerun()
        else:
            st.error(f"The Triton server at {server.url} does not answer: start it again, then reload this page.")
        return None
    return server, deployer


def learner() -> str:
    """A stable id for this learner: from the URL if given, else made once per browser session."""
    if "learner" not in st.session_state:
        from_url = st.query_params.get("learner")
        st.session_state["learner"] = from_url or f"learner-{secrets.token_hex(3)}"
    return st.session_state["learner"]
