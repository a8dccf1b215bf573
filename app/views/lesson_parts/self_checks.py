"""End-of-lesson self-check: each question graded once, then its explanation shown."""
from __future__ import annotations

import streamlit as st

from app.content.lessons import Lesson
from app.i18n import N_
from app.ui import language
from app.ui.language import _, t


def show_self_checks(lesson: Lesson) -> None:
    if not lesson.self_checks:
        return
    st.markdown("## " + _("Check your understanding"))
    for index, check in enumerate(lesson.self_checks):
        key = f"check:{lesson.id}:{index}"
        answered = st.session_state.get(f"{key}:graded")
        with st.container(border=True, key=f"{key}:box".replace(":", "-")):
            # Once graded the choice is locked: the explanation would otherwise give the answer away.
            choice = language.choice(
                st.radio, f"**{index + 1}.** {check.question}",
                range(len(check.options)),
                format_func=lambda i, c=check: c.options[i],
                index=answered if answered is not None else None,
                key=f"{key}:choice",
                disabled=answered is not None,
            )
            if answered is None:
                if st.button(_("Check answer"), key=f"{key}:submit", disabled=choice is None):
                    st.session_state[f"{key}:graded"] = choice
                    st.rerun()
            else:
                if answered == check.answer:
                    st.success(t().render(N_("Correct. {explain:text}"), explain=check.explain))
                else:
                    st.error(t().render(N_("Not quite: the answer is “{answer:text}”. {explain:text}"),
                                        answer=check.options[check.answer], explain=check.explain))
                if check.source:
                    st.caption(t().render(N_("Source: {source:text}"), source=check.source))
