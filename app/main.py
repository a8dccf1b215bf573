"""Entry point: `streamlit run app/main.py`. Builds the navigation; each page lives in app/views/."""
from __future__ import annotations

import streamlit as st

from app.ui import course

st.set_page_config(page_title="Triton Batching Lab", page_icon=":material/science:", layout="wide")

sections: dict[str, list] = {"Start": [st.Page("views/home.py", title="Home", icon=":material/home:", default=True)]}
# Pages live in app/views/, not app/pages/: Streamlit would also treat a pages/ folder as
# old-style automatic pages and serve a deep link from it without this navigation.
sections["Lessons"] = [
    st.Page(course.lesson_page(number), title=f"{number}. {lesson.title}")
    for number, lesson in enumerate(course.lessons_or_error(), start=1)
]
sections["Practice"] = [
    st.Page("views/lab.py", title="Live lab", icon=":material/science:", url_path="lab"),
    st.Page("views/exercises.py", title="Failure modes", icon=":material/warning:"),
    st.Page("views/quiz.py", title="Quiz", icon=":material/quiz:"),
]
sections["Teach"] = [st.Page("views/instructor.py", title="Instructor", icon=":material/school:")]

st.navigation({name: pages for name, pages in sections.items() if pages}).run()
