"""Entry point: `streamlit run app/main.py`. Builds the navigation; each page lives in app/views/ (a
script per page; the lesson pages are one function, app/views/lesson_parts/page.py, given each lesson's number).

Every page title and section name is in the learner's language (?lang=, the sidebar switch);
the lesson pages take their titles from the lessons of that language.
"""
from __future__ import annotations

from functools import partial

import streamlit as st
from streamlit.navigation.page import StreamlitPage

from app.i18n import N_
from app.lab.database import DatabaseError
from app.ui import class_store, course, language, shared_server, style
from app.ui.access import warn_at_startup
from app.ui.language import _, t
from app.views.lesson_parts import page as lesson_page

st.set_page_config(page_title=_(N_("Triton Batching Lab")), page_icon=":material/science:", layout="wide")
style.apply()  # readable syntax colours on every page (the theme in .streamlit/config.toml does the rest)
shared_server.start_in_background()  # returns at once: pages draw while Triton starts; live elements wait for it
language.show(key="language")
warn_at_startup()  # once per process: listening beyond localhost with no instructor key

sections: dict[str, list[StreamlitPage]] = {
    _(N_("Start")): [st.Page("views/home.py", title=_(N_("Home")), icon=":material/home:", default=True)],
}
# Pages live in app/views/, not app/pages/: Streamlit would also treat a pages/ folder as
# old-style automatic pages and serve a deep link from it without this navigation.
# One page per lesson in lessons/, drawn by one function: a new lesson needs no Python file.
lessons = course.lessons_or_error()
lesson_pages = [
    st.Page(partial(lesson_page.render, number), url_path=course.lesson_url(number),
            title=t().render(N_("{number:count}. {title:text}"), number=number, title=lesson.title))
    for number, lesson in enumerate(lessons, start=1)
]
course.keep_lesson_pages({lesson.id: page for lesson, page in zip(lessons, lesson_pages, strict=True)})  # for links to them
sections[_(N_("Lessons"))] = lesson_pages
sections[_(N_("Practice"))] = [
    st.Page("views/lab.py", title=_(N_("Live lab")), icon=":material/science:", url_path="lab"),
    st.Page("views/generation.py", title=_(N_("Generation lab")), icon=":material/text_fields:", url_path="generation"),
    st.Page("views/exercises.py", title=_(N_("Failure modes")), icon=":material/warning:"),
    st.Page("views/check.py", title=_(N_("Check a deployment")), icon=":material/fact_check:", url_path="check"),
    st.Page("views/quiz.py", title=_(N_("Quiz")), icon=":material/quiz:"),
    st.Page("views/demo.py", title=_(N_("Class vote")), icon=":material/how_to_vote:", url_path="demo"),
]
sections[_(N_("Teach"))] = [
    st.Page("views/instructor.py", title=_(N_("Instructor")), icon=":material/school:"),
    st.Page("views/presenter.py", title=_(N_("Presenter")), icon=":material/co_present:", url_path="presenter"),
]

# Every page listed: folded after ten, the Teach and Practice sections hid behind "View more".
try:
    st.navigation({name: pages for name, pages in sections.items() if pages}, expanded=True).run()
except DatabaseError as err:  # the class database is away: this page says so and offers to try again
    class_store.unavailable(err)
