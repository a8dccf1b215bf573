"""Link a quiz item to the lesson section that teaches it.

st.page_link to the lesson's page when the app registers one (app/ui/course.py knows
which file shows which lesson), with ?section=<anchor>; otherwise, e.g. when a page
runs on its own without app/main.py's navigation, it names lesson and section.
"""
from __future__ import annotations

import streamlit as st
from streamlit.errors import StreamlitAPIException

from app.quiz.links import LessonRef
from app.ui import course


def show_lesson_link(ref: LessonRef) -> None:
    page = course.page_of(ref.lesson_id)
    if page is not None:
        try:
            st.page_link(page, label=f"Read the lesson: {ref.label}", icon=":material/menu_book:",
                         query_params={"section": ref.anchor} if ref.anchor else None)
            return
        except StreamlitAPIException:
            pass  # the page is not registered in this run's navigation
    st.caption(f":material/menu_book: Taught in the lesson **{ref.title}**, section **{ref.section}**")
