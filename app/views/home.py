"""Home: what the course teaches, the path through it, the course's terms, and the live server it runs on."""
import pandas as pd
import streamlit as st

from app.content.glossary import GlossaryError, load_glossary
from app.i18n import N_
from app.ui import course, language
from app.ui.language import _, t
from app.views.home_parts.status import server_status

st.title(_("Triton Batching Lab"))
st.markdown(_(
    "Learn how NVIDIA Triton Inference Server groups requests, and why a stateful model needs a different "
    "scheduler from a stateless one, by running every idea on a real Triton server."
))

st.markdown("## " + _("After this course you will be able to"))
st.markdown(_(
    "- explain why accelerators want batches, and what Triton's **dynamic batcher** does with independent requests;\n"
    "- show why a **stateful** streaming model behind the dynamic batcher returns wrong answers without any error;\n"
    "- configure the **sequence batcher** (correlation IDs, START/END/READY controls) and choose between "
    "**direct** and **oldest**;\n"
    "- size **instances** and **slots** for a load, and read queue time, batch sizes and latency percentiles;\n"
    "- verify a scheduler change with interleaved experiments before rolling it out."
))

st.markdown("## " + _("The path"))
lessons = course.lessons_or_error(notice=True)
for number, lesson in enumerate(lessons, start=1):
    page = course.page_of(lesson.id)
    if page is not None:
        st.page_link(page, icon=":material/menu_book:",
                     label=t().render(N_("{number:count}. {title:text}"), number=number, title=lesson.title))
        if lesson.summary:
            st.caption(lesson.summary)
st.page_link(course.LAB_PAGE, label=_("Live lab: any set-up, your prediction, the evidence"), icon=":material/science:")
for name, label, icon in (("exercises.py", _("Failure modes"), ":material/warning:"), ("quiz.py", _("Quiz"), ":material/quiz:")):
    if (course.PAGES / name).exists():
        st.page_link(f"views/{name}", label=label, icon=icon)


def _glossary() -> None:
    lang = language.current()
    try:
        terms = load_glossary()
    except GlossaryError as err:
        st.error(t().render(N_("The glossary could not be loaded: `{error:text}`"), error=err))
        return
    with st.expander(_("Glossary: the words this course uses"), icon=":material/translate:"):
        st.caption(_("Every lesson, question and page uses these words and no others. Kept names are the "
                     "English names engineers also say: config keys and Triton's own names."))
        table = pd.DataFrame({
            _("term"): [term.word(lang) for term in terms],
            _("English"): [term.en for term in terms],
            _("kept names"): [", ".join(term.keep) for term in terms],
        })
        st.dataframe(table, hide_index=True, width="stretch", key="home-glossary")


_glossary()

st.markdown("## " + _("The server"))
server_status()
