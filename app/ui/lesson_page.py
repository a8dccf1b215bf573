"""One lesson page: the text, its live element on the real server, a short check, links onward."""
from __future__ import annotations

import streamlit as st

from app.ui import course
from app.ui.checks import lesson_checks
from app.ui.lesson_body import render_body
from app.ui.live import render_live


def render(number: int) -> None:
    lessons = course.lessons_or_error()
    if not 1 <= number <= len(lessons):
        st.error(f"There is no lesson {number} in lessons/ (found {len(lessons)}).")
        return
    lesson = lessons[number - 1]
    st.caption(f"Lesson {number} of {len(lessons)}")
    st.title(lesson.title)
    if lesson.summary:
        st.markdown(f"*{lesson.summary}*")
    render_body(lesson)
    if lesson.live:
        with st.container(border=True, key=f"live-{lesson.live}"):
            render_live(lesson.live)
    lesson_checks(lesson)
    _onward(lesson)


def _onward(lesson) -> None:
    st.markdown("## Where next")
    for target in lesson.next:
        page = course.page_of(target)
        title = next((l.title for l in course.lessons_or_error() if l.id == target), target)
        if page:
            st.page_link(page, label=f"Next: {title}", icon=":material/arrow_forward:")
    st.page_link(course.LAB_PAGE, label="Try any set-up yourself in the Live lab", icon=":material/science:")
    st.page_link(course.HOME_PAGE, label="Back to the course overview", icon=":material/home:")
