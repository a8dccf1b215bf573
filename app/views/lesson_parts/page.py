"""One lesson page: the text, its live element on the real server, a short check, links onward.

app/main.py makes a page of render(number) for each lesson in lessons/, at course.lesson_url(number).
"""
from __future__ import annotations

import streamlit as st

from app.content.lessons import Lesson
from app.i18n import N_
from app.registry.live import render_live
from app.ui import course
from app.ui.language import _, t
from app.views.lesson_parts.body import render_body
from app.views.lesson_parts.self_checks import show_self_checks


def render(number: int) -> None:
    lessons = course.lessons_or_error()
    if not 1 <= number <= len(lessons):
        st.error(t().render(N_("There is no lesson {number:count} in lessons/ (found {found:count})."),
                            number=number, found=len(lessons)))
        return
    lesson = lessons[number - 1]
    st.caption(t().render(N_("Lesson {number:count} of {total:count}"), number=number, total=len(lessons)))
    if course.in_english(lesson.id):
        st.info(_("This lesson is not translated into this language yet, so it is shown in English."))
    st.title(lesson.title)
    if lesson.summary:
        st.markdown(f"*{lesson.summary}*")
    render_body(lesson)
    if lesson.live:
        with st.container(border=True, key=f"live-{lesson.live}"):
            render_live(lesson.live)
    show_self_checks(lesson)
    _onward(lesson)


def _onward(lesson: Lesson) -> None:
    st.markdown("## " + _("Where next"))
    for target in lesson.next:
        page = course.page_of(target)
        title = next((other.title for other in course.lessons_or_error() if other.id == target), target)
        if page:
            st.page_link(page, label=t().render(N_("Next: {title:text}"), title=title), icon=":material/arrow_forward:")
    st.page_link(course.LAB_PAGE, label=_("Try any set-up yourself in the Live lab"), icon=":material/science:")
    st.page_link(course.HOME_PAGE, label=_("Back to the course overview"), icon=":material/home:")
