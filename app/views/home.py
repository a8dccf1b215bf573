"""Home: what the course teaches, the path through it, and the live server it runs on."""
import streamlit as st

from app.ui import course
from app.ui.status import server_status

st.title("Triton Batching Lab")
st.markdown(
    "Learn how NVIDIA Triton Inference Server groups requests, and why a stateful model needs a different "
    "scheduler from a stateless one, by running every idea on a real Triton server."
)

st.markdown("## After this course you will be able to")
st.markdown(
    "- explain why accelerators want batches, and what Triton's **dynamic batcher** does with independent requests;\n"
    "- show why a **stateful** streaming model behind the dynamic batcher returns wrong answers without any error;\n"
    "- configure the **sequence batcher** (correlation IDs, START/END/READY controls) and choose between "
    "**direct** and **oldest**;\n"
    "- size **instances** and **slots** for a load, and read queue time, batch sizes and latency percentiles;\n"
    "- verify a scheduler change with interleaved experiments before rolling it out."
)

st.markdown("## The path")
lessons = course.lessons_or_error()
for number, lesson in enumerate(lessons, start=1):
    if (course.PAGES / f"lesson_{number:02d}.py").exists():
        st.page_link(course.lesson_page(number), label=f"{number}. {lesson.title}", icon=":material/menu_book:")
        if lesson.summary:
            st.caption(lesson.summary)
st.page_link(course.LAB_PAGE, label="Live lab: any set-up, your prediction, the evidence", icon=":material/science:")
for name, label, icon in (("exercises.py", "Failure modes", ":material/warning:"), ("quiz.py", "Quiz", ":material/quiz:")):
    if (course.PAGES / name).exists():
        st.page_link(f"views/{name}", label=label, icon=icon)

st.markdown("## The server")
server_status()
