"""Quiz page: seeded questions, one at a time, graded once, explained, some verified on Triton.

URL: ?learner=<learner id>&seed=<n>&item=<item id> opens that learner's attempt in that
seed's order at that question (the browser tests use it to find items). A learner id is
"<name>.<token>" (app/quiz/access_rules.py): the link is the learner's key, and a bare name
opens no one's progress.
"""
from __future__ import annotations

import streamlit as st

from app.i18n import N_
from app.quiz.attempt import ANSWERING, COMPLETE, FINISHED
from app.ui import learner_id
from app.ui import quiz_sources as sources
from app.ui.language import _, t
from app.views.quiz_parts import controls, results
from app.views.quiz_parts.item import show_item

st.title(_("Quiz"))
learner_id.show_learner_notice()

lessons = sources.lessons()
bank = sources.bank(lessons)
if bank is None:
    st.stop()  # the error above names file, item and field

store = sources.store()
quiz = controls.current(store, bank, learner_id.learner())

st.caption(t().render(
    N_("{questions:count} questions across {topics:count} topics. Each is graded once, then every option "
       "is explained. Predict questions run their scenario on the real Triton server."),
    questions=len(bank), topics=len(bank.topics),
))
controls.show_settings(quiz, store, bank)

status, timer = st.columns([3, 1])
status.markdown(f"**{results.score_line(quiz)}** · "
                + t().render(N_("attempt {attempt:text}, seed {seed:text}"), attempt=str(quiz.id), seed=str(quiz.seed)))
with timer:
    controls.show_timer(quiz)

phase = quiz.phase()
if phase != ANSWERING:
    why = {COMPLETE: N_("Every question is answered."), FINISHED: N_("You finished this attempt.")}.get(
        phase, N_("The time limit of this attempt ran out."))
    results.show_final(quiz, lessons, _(why) + " " + _("Start a new attempt with a seed above, or reset to start over."))

st.divider()
if controls.show_mode() == controls.REVIEW:
    results.show_review(quiz, lessons)
else:
    item_id = controls.show_navigation(quiz)
    show_item(quiz, bank[item_id], lessons)

st.divider()
controls.show_actions(quiz)
results.download_csv(quiz)
