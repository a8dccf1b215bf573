"""Entry point: `streamlit run app/main.py`. Builds the navigation; each page lives in app/pages/."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from app.ui import course

PAGES = Path(__file__).resolve().parent / "pages"
# Pages other engineers own; each joins the navigation once its file exists.
OPTIONAL = {
    "Practice": [("exercises.py", "Failure modes", ":material/warning:"), ("quiz.py", "Quiz", ":material/quiz:")],
    "Teach": [("instructor.py", "Instructor", ":material/school:")],
}

st.set_page_config(page_title="Triton Batching Lab", page_icon=":material/science:", layout="wide")

sections: dict[str, list] = {"Start": [st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)]}
# No custom url_path: Streamlit resolves the very first request of a fresh server by the
# file name under pages/, so any other path shows a "Page not found" dialog on a deep link.
sections["Lessons"] = [
    st.Page(course.lesson_page(number), title=f"{number}. {lesson.title}")
    for number, lesson in enumerate(course.lessons_or_error(), start=1)
    if (PAGES / f"lesson_{number:02d}.py").exists()
]
sections["Practice"] = [st.Page("pages/lab.py", title="Live lab", icon=":material/science:", url_path="lab")]
for section, entries in OPTIONAL.items():
    for name, title, icon in entries:
        if (PAGES / name).exists():
            sections.setdefault(section, []).append(st.Page(f"pages/{name}", title=title, icon=icon))

st.navigation({name: pages for name, pages in sections.items() if pages}).run()
