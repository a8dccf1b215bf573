"""The one server and deployer every page uses (Streamlit's cache): the lab's shared server.

The server lives in st.cache_resource so every browser and rerun shares one Triton (the
learner's own identity is app/ui/learner_id.py).

The server starts in a background thread the first time any page runs (app/main.py calls
start_in_background()), so Home, lesson text and quiz text draw at once; only what needs the
server calls lab(), which waits for the start there (with a spinner in the learner's language).
"""
from __future__ import annotations

import threading

import streamlit as st

from app.i18n import N_
from app.lab.deployment import Deployer, instance_kind
from app.lab.server import LabServer, ServerError
from app.text.errors import SERVER_SILENT, explain
from app.ui.language import _, t

# What to do when the app's own server stops answering under a page (app/text/errors.explain's
# next_steps): lab() offers the restart once the page is drawn again.
NEXT_STEPS = {SERVER_SILENT: N_("If it stopped, reload the page: it then offers to restart it.")}

GRACE_S = 0.25  # a page waits this long at most before drawing "still starting" instead


class Start:
    """One start of the lab's server, running in a daemon thread (it never holds up the app's exit;
    the server's guardian ends tritonserver when the app's process goes, however it goes)."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._result: tuple[LabServer, Deployer] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="triton-lab-start", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            server = LabServer.from_env()
            server.start()
            instance_kind()  # imports torch (seconds) here, not in the first page that shows the status
            self._result = (server, Deployer(server))
        except BaseException as err:  # handed to the page that waits, which shows it
            self._error = err
        finally:
            self._done.set()

    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout_s: float | None = None) -> bool:
        return self._done.wait(timeout_s)

    def result(self) -> tuple[LabServer, Deployer]:
        """The server and its deployer once started (waits until then); raises the start's error."""
        self._done.wait()
        if self._error is not None:
            if isinstance(self._error, ServerError):
                raise self._error
            raise ServerError("server_start_failed", kind=type(self._error).__name__, error=str(self._error)) from self._error
        assert self._result is not None
        return self._result


@st.cache_resource(show_spinner=False)
def _start_lab() -> Start:
    return Start()


def start_in_background() -> Start:
    """Begin starting the server if nothing has yet; returns at once."""
    return _start_lab()


def starting(grace_s: float = GRACE_S) -> bool:
    """True while the server is still starting (after a short grace, so a quick start never shows as one)."""
    return not _start_lab().wait(grace_s)


def _lab() -> tuple[LabServer, Deployer]:
    start = _start_lab()
    if not start.done():
        # The spinner is drawn here, not by the cache, so its text is in this learner's language.
        with st.spinner(_("Starting Triton...")):
            start.wait()
    return start.result()


_lab.clear = _start_lab.clear  # type: ignore[attr-defined]


def lab() -> tuple[LabServer, Deployer] | None:
    """The live server and deployer, or None after showing why not (with a way to recover)."""
    try:
        server, deployer = _lab()
    except ServerError as err:
        st.error(t().render(N_("The Triton server could not be started: {reason:text}"), reason=str(explain(err, t()))))
        if st.button(_("Try again"), key="lab-retry-start"):
            _lab.clear()  # type: ignore[attr-defined]  # set on the function after its definition, below
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
