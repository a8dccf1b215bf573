"""Which servers the "Check a deployment" page may check, for safety in a class.

The rules (plain functions, so tests read them without a page):
- the app's own server, the one every page uses, is always offered;
- so is every address listed in TRITON_LAB_CHECK_URLS (comma-separated host:port, http:// allowed);
- a free-form address is offered only when the app listens on loopback (nobody but this computer
  reaches the page) or this browser session entered the instructor key (app/ui/access.py). Otherwise
  anyone who can open the page could make the app's machine send traffic to any address it reaches.
The page asks allowed() again when Run is pressed. What a check may do on the server it reaches
is the engine's rule: it never loads or unloads a model it did not create (app/checker/engine/target.py),
and it holds the run queue's lease for the model while it runs (app/checker/engine/run.py).
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import streamlit as st

from app.checker.words import page as words
from app.lab.server import address
from app.quiz import access_rules
from app.ui import access
from app.ui.language import _, t

if TYPE_CHECKING:
    from app.i18n import Words

ENV = "TRITON_LAB_CHECK_URLS"
OWN, LISTED, ENTERED = "own", "listed", "entered"


@dataclass(frozen=True)
class Choice:
    kind: str  # OWN, LISTED or ENTERED
    url: str  # host:port ("" while an entered address is still empty)


def normalise(text: str | None) -> str | None:
    """'http://host:port/' -> 'host:port' (as tritonclient takes it); None when it is no host:port.
    The same reading as every other address (app/lab/server/address.py)."""
    parsed = address.parse(text, "http")
    return parsed[0] if parsed else None


def listed(environ: Mapping[str, str] | None = None) -> tuple[list[str], list[str]]:
    """(addresses, entries that are not addresses) of TRITON_LAB_CHECK_URLS, in its order, once each."""
    raw = (os.environ if environ is None else environ).get(ENV, "")
    good: list[str] = []
    bad: list[str] = []
    for entry in (e.strip() for e in raw.split(",")):
        if not entry:
            continue
        url = normalise(entry)
        if url is None:
            bad.append(entry)
        elif url not in good:
            good.append(url)
    return good, bad


def free_form_refusal(address: str | None, key: str | None, unlocked: bool) -> str | None:
    """None when a free-form address may be offered; else why not: "no_key" (the app listens beyond
    loopback and no instructor key is set) or "locked" (a key is set and this session has not entered it)."""
    if access_rules.is_loopback(address):
        return None
    if key is None:
        return "no_key"
    return None if unlocked else "locked"


def allowed(url: str, own_url: str, listed_urls: list[str], free_form: bool) -> bool:
    """May the page send a check to `url`?"""
    return url == own_url or url in listed_urls or free_form


def refusal_here() -> str | None:
    """free_form_refusal for this app and this browser session."""
    key = access.configured_key()
    return free_form_refusal(access.listening_address(), key, key is not None and access.instructor_unlocked())


def _label(option: str, own_url: str, _: Words) -> str:
    kind, _sep, url = option.partition(":")
    return _.render(words.SERVERS[kind], url=own_url if kind == OWN else url)


def choose(own_url: str, key: str = "check") -> Choice | None:
    """The server widget; the chosen server, or None after saying why an entered address cannot be used."""
    urls, bad = listed()
    for entry in bad:
        st.warning(t().render(words.PROBLEMS["check_address_syntax"], value=entry) + f" ({ENV})")
    refusal = refusal_here()
    options = [OWN] + [f"{LISTED}:{u}" for u in urls if u != own_url] + ([ENTERED] if refusal is None else [])
    asked = st.query_params.get("server")
    if asked and st.session_state.get(f"{key}.server") is None:
        wanted = normalise(asked)
        match = next((o for o in options if wanted and o.endswith(f":{wanted}")), None)
        if match is not None:
            st.session_state[f"{key}.server"] = match
    option = st.selectbox(_("Server"), options, key=f"{key}.server", format_func=partial(_label, own_url=own_url, _=t()))
    if refusal is not None:
        st.caption(_(words.NO_FREE_FORM[refusal]))
        if refusal == "locked":
            with st.expander(_("Enter the instructor key")):
                access.key_form(f"{key}-access")
    if option == OWN:
        return Choice(OWN, own_url)
    if option != ENTERED:
        assert option is not None  # the box always offers OWN and has no empty choice
        return Choice(LISTED, option.partition(":")[2])
    text = st.text_input(_("Server address (host:port)"), key=f"{key}.address", placeholder="127.0.0.1:8000")
    if not text.strip():
        return Choice(ENTERED, "")
    url = normalise(text)
    if url is None:
        st.error(t().render(words.PROBLEMS["check_address_syntax"], value=text.strip()))
        return None
    return Choice(ENTERED, url)
