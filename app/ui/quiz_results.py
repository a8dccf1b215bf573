"""Score, topics to revisit, review of every answer, and the CSV export."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app.content.lessons import Lesson
from app.quiz.links import lesson_ref
from app.quiz.session import QuizSession
from app.ui import quiz_feedback
from app.ui.lesson_link import show_lesson_link


def score_line(quiz: QuizSession) -> str:
    s = quiz.summary()
    return f"Score {quiz_feedback.fmt_number(round(s.score, 2))} / {s.max} · {s.answered} of {s.max} answered"


def show_final(quiz: QuizSession, lessons: list[Lesson], why: str) -> None:
    s = quiz.summary()
    st.subheader("Your result")
    st.caption(why)
    cols = st.columns(3)
    cols[0].metric("Final score", f"{quiz_feedback.fmt_number(round(s.score, 2))} / {s.max}")
    cols[1].metric("Share", f"{s.fraction:.0%}")
    cols[2].metric("Answered", f"{s.answered} of {s.max}")
    topics = pd.DataFrame(
        [{"topic": t.topic, "score": round(t.score, 2), "of": t.max, "share": t.fraction} for t in s.topics.values()]
    )
    st.dataframe(topics, hide_index=True,
                 column_config={"share": st.column_config.ProgressColumn("share", format="percent", min_value=0, max_value=1)})
    if s.revisit:
        st.warning("Topics to revisit: " + ", ".join(s.revisit))
        # One link per lesson section behind the missed items of those topics.
        refs = {}
        for item_id in s.missed:
            item = quiz.bank[item_id]
            if item.topic in s.revisit:
                refs.setdefault(item.lesson, lesson_ref(item.lesson, lessons))
        with st.expander(f"Lesson sections to re-read ({len(refs)})"):
            for ref in refs.values():
                show_lesson_link(ref)
    else:
        st.success("Every topic at 70 % or more: nothing to revisit.")


def show_review(quiz: QuizSession, lessons: list[Lesson]) -> None:
    entries = [e for e in quiz.review() if e.record is not None]
    if not entries:
        st.info("Nothing answered yet in this attempt.")
        return
    st.caption(f"{len(entries)} answered of {len(quiz.order)}, in question order.")
    for entry in entries:
        mark = (":material/check_circle:" if entry.record.correct
                else ":material/contrast:" if entry.record.score > 0 else ":material/cancel:")
        short = entry.item.prompt[:90] + ("…" if len(entry.item.prompt) > 90 else "")
        with st.expander(f"Q{entry.number}: {short}", icon=mark):
            st.markdown(entry.item.prompt)
            quiz_feedback.show_explanations(entry.item, entry.options, entry.record)
            show_lesson_link(lesson_ref(entry.item.lesson, lessons))


def download_csv(quiz: QuizSession) -> None:
    st.download_button(
        "Download my answers (CSV)", quiz.export_csv(), file_name=f"quiz-{quiz.learner}.csv",
        mime="text/csv", key="quiz-csv", on_click="ignore", icon=":material/download:",
    )
