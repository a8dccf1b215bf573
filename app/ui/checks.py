"""End-of-lesson self-check: each question graded once, then its explanation shown."""
from __future__ import annotations

import streamlit as st

from app.content.lessons import Lesson


def lesson_checks(lesson: Lesson) -> None:
    if not lesson.checks:
        return
    st.markdown("## Check your understanding")
    for index, check in enumerate(lesson.checks):
        key = f"check:{lesson.id}:{index}"
        answered = st.session_state.get(f"{key}:graded")
        with st.container(border=True, key=f"{key}:box".replace(":", "-")):
            # Once graded the choice is locked: the explanation would otherwise give the answer away.
            choice = st.radio(
                f"**{index + 1}.** {check.question}",
                options=range(len(check.options)),
                format_func=lambda i, c=check: c.options[i],
                index=answered if answered is not None else None,
                key=f"{key}:choice",
                disabled=answered is not None,
            )
            if answered is None:
                if st.button("Check answer", key=f"{key}:submit", disabled=choice is None):
                    st.session_state[f"{key}:graded"] = choice
                    st.rerun()
            else:
                if answered == check.answer:
                    st.success(f"Correct. {check.explain}")
                else:
                    st.error(f"Not quite: the answer is “{check.options[check.answer]}”. {check.explain}")
                if check.source:
                    st.caption(f"Source: {check.source}")
