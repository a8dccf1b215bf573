"""Score, topics to revisit, review of every answer, and the CSV export."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app.content.lessons import Lesson
from app.i18n import N_, formats
from app.quiz import access_rules
from app.quiz.attempt import QuizAttempt
from app.quiz.links import LessonRef, lesson_ref
from app.ui import quiz_feedback
from app.ui.language import _, t
from app.ui.lesson_link import show_lesson_link


def score_line(quiz: QuizAttempt) -> str:
    s = quiz.summary()
    return t().render(N_("Score {score:text} / {max:count} · {answered:count} of {max:count} answered"),
                      score=quiz_feedback.fmt_number(round(s.score, 2)), max=s.max, answered=s.answered)


def show_final(quiz: QuizAttempt, lessons: list[Lesson], why: str) -> None:
    s = quiz.summary()
    _t = t()
    st.subheader(_("Your result"))
    st.caption(why)
    cols = st.columns(3)
    cols[0].metric(_("Final score"), f"{quiz_feedback.fmt_number(round(s.score, 2))} / {s.max}")
    cols[1].metric(_("Share"), formats.percent(s.fraction, _t))
    cols[2].metric(_("Answered"), _t.render(N_("{answered:count} of {max:count}"), answered=s.answered, max=s.max))
    share = _("share")
    topics = pd.DataFrame(
        [{_("topic"): quiz_feedback.topic_label(ts.topic), _("score"): round(ts.score, 2), _("of"): ts.max,
          share: ts.fraction} for ts in s.topics.values()]
    )
    st.dataframe(topics, hide_index=True,
                 column_config={share: st.column_config.ProgressColumn(share, format="percent", min_value=0, max_value=1)})
    if s.revisit:
        st.warning(_t.render(N_("Topics to revisit: {topics:text}"),
                             topics=_(", ").join(quiz_feedback.topic_label(topic) for topic in s.revisit)))
        # One link per lesson section behind the missed items of those topics.
        refs: dict[str, LessonRef] = {}
        for item_id in s.missed:
            item = quiz.bank[item_id]
            if item.topic in s.revisit:
                refs.setdefault(item.lesson, lesson_ref(item.lesson, lessons))
        with st.expander(_t.render(N_("Lesson sections to re-read ({n:count})"), n=len(refs))):
            for ref in refs.values():
                show_lesson_link(ref)
    else:
        st.success(_("Every topic at 70 % or more: nothing to revisit."))


def show_review(quiz: QuizAttempt, lessons: list[Lesson]) -> None:
    entries = [e for e in quiz.review() if e.record is not None]
    if not entries:
        st.info(_("Nothing answered yet in this attempt."))
        return
    st.caption(t().render(N_("{answered:count} answered of {total:count}, in question order."),
                          answered=len(entries), total=len(quiz.order)))
    for entry in entries:
        record = entry.record
        assert record is not None  # entries are the answered items
        mark = (":material/check_circle:" if record.correct
                else ":material/contrast:" if record.score > 0 else ":material/cancel:")
        short = entry.item.prompt[:90] + ("…" if len(entry.item.prompt) > 90 else "")
        with st.expander(f"Q{entry.number}: {short}", icon=mark):
            st.markdown(entry.item.prompt)
            quiz_feedback.show_explanations(entry.item, entry.options, record)
            show_lesson_link(lesson_ref(entry.item.lesson, lessons))


def download_csv(quiz: QuizAttempt) -> None:
    # Named after the learner's name, not their id: the id is the key to their progress.
    st.download_button(
        _("Download my answers (CSV)"), quiz.export_csv(), file_name=f"quiz-{access_rules.learner_name(quiz.learner)}.csv",
        mime="text/csv", key="quiz-csv", on_click="ignore", icon=":material/download:",
    )
