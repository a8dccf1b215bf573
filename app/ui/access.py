"""The instructor key on the page: a key form in front of the instructor and presenter pages.

The rules (where the key comes from, how it is compared, what counts as localhost) are in
app/quiz/access_rules.py. Unlocking lasts for this browser session (st.session_state); the
key never goes into the URL. With no key configured the pages are open, and a server that
listens beyond localhost says so (at start-up in the log, and on these pages).
"""
from __future__ import annotations

import hashlib
import logging

import streamlit as st

from app.quiz import access_rules as rules
from app.ui.language import _

log = logging.getLogger("app.access")
UNLOCKED = "instructor-unlocked"  # one unlock for every instructor page of this session
_startup_warned = False


def configured_key() -> str | None:
    return rules.configured_key(secrets_source=st.secrets)


def listening_address() -> str | None:
    try:
        address = st.get_option("server.address")
        return None if address is None else str(address)
    except Exception:  # an option Streamlit no longer knows: assume the default (every interface)
        return None


def _fingerprint(key: str) -> str:
    # The session keeps a digest, not the key: a changed key locks every open session again.
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def instructor_unlocked() -> bool:
    """True when no key is configured, or this browser session gave the right one."""
    key = configured_key()
    if key is None:
        return True
    return st.session_state.get(UNLOCKED) == _fingerprint(key)


def exposed_without_key() -> bool:
    return rules.exposed_without_key(listening_address(), configured_key())


def warn_at_startup() -> None:
    """Log once per process when the app listens beyond localhost with no instructor key."""
    global _startup_warned
    if _startup_warned:
        return
    _startup_warned = True
    if exposed_without_key():
        log.warning(
            "The app listens beyond localhost (server.address=%r) and no instructor key is set: anyone who "
            "reaches it can open the Instructor page and its exports. Set %s or `%s` in .streamlit/secrets.toml, "
            "or start it with --server.address 127.0.0.1.",
            listening_address() or "", rules.ENV_KEY, rules.SECRET_NAME,
        )


def show_open_warning() -> None:
    if exposed_without_key():
        st.warning(_("This app listens beyond this computer and no instructor key is set: anyone who can reach it "
                     "can open this page, every learner's results and the exports. Set the environment variable "
                     "`TRITON_LAB_INSTRUCTOR_KEY` (or `instructor_key` in Streamlit's secrets) and restart."),
                   icon=":material/lock_open:")


def _check(key: str) -> None:
    given = st.session_state.get(f"{key}-input") or ""
    expected = configured_key()
    if rules.key_matches(given, expected):
        st.session_state[UNLOCKED] = _fingerprint(expected)  # type: ignore[arg-type]
        st.session_state.pop(f"{key}-refused", None)
    else:
        st.session_state[f"{key}-refused"] = True
    st.session_state[f"{key}-input"] = ""  # the key does not stay in the form


def lock() -> None:
    st.session_state.pop(UNLOCKED, None)


def require_instructor(key: str = "instructor-access") -> None:
    """Show the open-server warning as needed; unless unlocked, a key form, then st.stop()."""
    show_open_warning()
    if instructor_unlocked():
        if configured_key() is not None:
            st.sidebar.button(_("Lock the instructor pages"), key=f"{key}-lock", on_click=lock,
                              icon=":material/lock:")
        return
    st.info(_("This page is for the instructor. Enter the instructor key to open it."), icon=":material/lock:")
    key_form(key)
    st.stop()


def key_form(key: str) -> None:
    """The instructor key's form (widget keys start with `key`); a right key unlocks this browser
    session's instructor pages and what else asks instructor_unlocked()."""
    with st.form(key):
        st.text_input(_("Instructor key"), type="password", key=f"{key}-input", autocomplete="off")
        st.form_submit_button(_("Unlock"), key=f"{key}-submit", on_click=_check, args=(key,))
    if st.session_state.get(f"{key}-refused"):
        st.error(_("That is not the instructor key. Ask whoever started the app for it."))
