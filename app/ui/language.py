"""The learner's language: from ?lang= in the URL, else the browser's locale, else English.

Every page calls _() (this session's Words) for its text. The switch in the sidebar writes the
choice into the URL, so a shared link keeps the language, and changes nothing else: the page,
its query parameters and the learner's progress stay where they were.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import streamlit as st
from streamlit.runtime.state import get_session_state

from app.i18n import N_, SOURCE_LANGUAGE, Words, languages, native_name, parse_language, words

STATE_KEY = "lang"


def _browser() -> str | None:
    try:
        return parse_language(st.context.locale)
    except Exception:  # no browser context (bare script, some test harnesses)
        return None


def current() -> str:
    """The language of this run: the URL wins, then this session's choice, then the browser."""
    asked = st.query_params.get("lang")
    lang = parse_language(asked)
    if lang is None:
        lang = st.session_state.get(STATE_KEY) or _browser() or SOURCE_LANGUAGE
    st.session_state[STATE_KEY] = lang
    return lang


def _(message: str) -> str:
    """Translate message into this session's language (a gettext-style marker for Babel)."""
    return t()(message)


def t() -> Words:
    """This session's Words: call it, or .render(template, **values)."""
    return words(current())


def bad_choice() -> str | None:
    """The ?lang= value when it names no language we have, so the page can say so."""
    asked = st.query_params.get("lang")
    return asked if asked and parse_language(asked) is None else None


def _switch(key: str) -> None:
    """The switch's callback: runs before the page, so the whole run is in the new language."""
    choice = st.session_state.get(key)
    if isinstance(choice, str) and parse_language(choice) is not None:
        st.session_state[STATE_KEY] = choice
        st.query_params["lang"] = choice  # every other query parameter, and the page, stay as they are


def show(key: str = "language") -> None:
    """The sidebar switch; the choice goes into the URL."""
    lang = current()
    options = list(languages())
    # The widget's default is the language in use: a browser whose switch was drawn afresh
    # reports no choice, and Streamlit then hands back the default (English, were it index 0),
    # which would switch a learner's pages to English. A default beside a value set through
    # state draws Streamlit's warning, so a run that sets the value leaves the default alone.
    index = options.index(lang)
    if st.session_state.get(key) != lang:  # the URL changed the language: the widget follows it
        st.session_state[key] = lang
        index = 0
    label = _(N_("Language"))
    st.sidebar.selectbox(
        label if lang == SOURCE_LANGUAGE else f"{label} · Language", options, index=index, key=key,
        # Each language names itself, so a learner who cannot read the current one finds theirs.
        format_func=native_name, on_change=_switch, args=(key,),
    )
    asked = bad_choice()
    if asked is not None:
        st.sidebar.warning(t().render(N_("There is no language {asked:text}; showing {shown:text}."),
                                      asked=asked, shown=native_name(lang)))


_CHOSEN = "{}::chosen"


def chosen_key(key: str) -> str:
    """Where choice() remembers the last id chosen in widget `key`."""
    return _CHOSEN.format(key)


def choice(widget: Callable[..., Any], label: str, options: Iterable[Any], *, key: str, **kwargs: Any) -> Any:
    """st.radio / st.selectbox over option ids whose labels are translated, that keeps its choice
    when the learner switches language.

    The browser sends a radio's or selectbox's choice back as its label; after a switch no label
    matches, and Streamlit would hand the page the old label instead of the id. So the last id
    chosen is remembered beside the widget and put back before it is drawn. And, as in show(), the
    default is the choice held: a browser that reports no choice gets the default, not option 0.
    """
    options = list(options)
    state = st.session_state
    lang = current()
    remembered_lang, remembered = state.get(chosen_key(key), (None, None))
    if key in state:
        held = state.get(key)
        if remembered_lang != lang and remembered in options:
            # First draw in a new language: the browser still holds the old label, so set the id.
            state[key] = remembered
            kwargs["index"] = 0  # the value is set through state now; a second default would warn
        elif held is not None and held not in options:
            del state[key]
        elif held is not None and not get_session_state().is_new_state_value(key):
            # (A value the page set through state this run is shown anyway; a default beside it
            # would only draw Streamlit's warning.)
            kwargs["index"] = options.index(held)
    value = widget(label, options, key=key, **kwargs)
    state[chosen_key(key)] = (lang, value)
    return value
