"""What a page shows when the class database cannot be used: the reason in the learner's words,
and a button to try again. Progress, answers and votes wait for the database; nothing claims a
save that did not happen, and the rest of the app (lessons, the lab, the checker) goes on."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import streamlit as st

from app.lab.database import DatabaseError
from app.text.errors import explain
from app.ui.language import _, t


def unavailable(err: DatabaseError, key: str = "class-store-retry") -> None:
    st.error(str(explain(err, t())), icon=":material/cloud_off:")
    if st.button(_("Try again"), key=key, icon=":material/refresh:"):
        st.rerun()


def saving_failed(err: BaseException) -> str:
    """A save that failed beside a result that stands (a lab run's prediction): its reason."""
    return str(explain(err, t()))


P = ParamSpec("P")
R = TypeVar("R")


def guarded(key: str) -> Callable[[Callable[P, R]], Callable[P, R | None]]:
    """For a fragment that reads the class database on a timer: while the database is away it
    shows why (and recovers by itself on a later tick), instead of an exception box."""
    def wrap(body: Callable[P, R]) -> Callable[P, R | None]:
        @functools.wraps(body)
        def run(*args: P.args, **kwargs: P.kwargs) -> R | None:
            try:
                return body(*args, **kwargs)
            except DatabaseError as err:
                unavailable(err, key=key)
                return None
        return run
    return wrap
