"""Small helpers the live elements share: keep a result across reruns, report failures plainly."""
from __future__ import annotations

from contextlib import contextmanager

import streamlit as st
from tritonclient.utils import InferenceServerException

from app.i18n import N_
from app.lab.problems import LabError
from app.lab.server.errors import ServerError
from app.text.problems import error as problem_text
from app.ui.language import t


def stored(key: str):
    return st.session_state.get(f"live-result:{key}")


def store(key: str, value) -> None:
    st.session_state[f"live-result:{key}"] = value


@contextmanager
def explained_failures():
    """Show what went wrong (bad input, a refused deployment, a dead server) instead of a traceback.

    Input problems (a LabError: bad settings, bad text, Triton refusing a deployment) are worded in
    the learner's language; Triton's and the system's own text is quoted as it is."""
    try:
        yield
    except LabError as err:
        st.error(problem_text(err, t()))
    except ValueError as err:
        st.error(t().render(N_("That input cannot be used: `{error:text}`"), error=err))
    except InferenceServerException as err:
        st.error(t().render(N_("Triton refused the request: `{message:text}`"), message=err.message()))
    except (ServerError, ConnectionError, OSError) as err:  # a ServerError in the learner's words, others as they are
        st.error(t().render(N_("The server did not answer (`{error:text}`). If it stopped, the restart button appears on reload."),
                            error=problem_text(err, t())))
