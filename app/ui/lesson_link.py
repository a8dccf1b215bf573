"""Link a quiz item to the lesson section that teaches it.

st.page_link to the lesson's page when the app registers one (app/ui/course.py knows
which page shows which lesson), with ?section=<anchor>; otherwise, e.g. when a page
runs on its own without app/main.py's navigation, it names lesson and section.
"""
from __future__ import annotations

import streamlit as st
from streamlit.errors import StreamlitAPIException

from app.i18n import N_
from app.quiz.links import LessonRef
from app.ui import course
from app.ui.language import t


def show_lesson_link(ref: LessonRef) -> None:
    page = course.page_of(ref.lesson_id)
    if page is not None:
        try:
            st.page_link(page, label=t().render(N_("Read the lesson: {where:text}"), where=ref.label), icon=":material/menu_book:",
                         query_params={"section": ref.anchor} if ref.anchor else None)
            return
        except StreamlitAPIException:
            pass  # the page is not registered in this run's navigation
    st.caption(":material/menu_book: " + t().render(N_("Taught in the lesson **{title:text}**, section **{section:text}**"),
                                                   title=ref.title, section=ref.section))
