"""Small helpers the live elements share: keep a result across reruns, report failures plainly."""
from __future__ import annotations

from contextlib import contextmanager

import streamlit as st
from tritonclient.utils import InferenceServerException

from app.lab.deployments import DeploymentError
from app.lab.server.errors import ServerError


def stored(key: str):
    return st.session_state.get(f"live-result:{key}")


def store(key: str, value) -> None:
    st.session_state[f"live-result:{key}"] = value


@contextmanager
def explained_failures():
    """Show what went wrong (bad input, a refused deployment, a dead server) instead of a traceback."""
    try:
        yield
    except (DeploymentError, ValueError) as err:
        st.error(str(err))
    except InferenceServerException as err:
        st.error(f"Triton refused the request: {err.message()}")
    except (ServerError, ConnectionError, OSError) as err:
        st.error(f"The server did not answer ({err}). If it stopped, the restart button appears on reload.")
