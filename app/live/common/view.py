"""Small helpers the live elements share: keep a result across reruns, report failures plainly."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import streamlit as st

from app.text.errors import EXPLAINED, explain
from app.ui import shared_server
from app.ui.language import t


def stored(key: str) -> Any:  # each element keeps its own result type here and reads it back as such
    return st.session_state.get(f"live-result:{key}")


def store(key: str, value: object) -> None:
    st.session_state[f"live-result:{key}"] = value


@contextmanager
def explained_failures(wording: Mapping[str, str] | None = None) -> Iterator[None]:
    """Show what went wrong (bad input, a refused deployment, a dead server) instead of a traceback,
    in the learner's language (app/text/errors.explain; `wording`: a feature's own problem codes);
    a bug keeps its traceback."""
    try:
        yield
    except EXPLAINED as err:
        st.error(str(explain(err, t(), wording=wording, next_steps=shared_server.NEXT_STEPS)))
