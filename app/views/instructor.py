"""Instructor page: how the whole class did, per item, per learner, and in the lab's predictions; and
the server's memory: its budget, what each loaded deployment costs, what was unloaded to make room.

Attempts are stored by item id and option key, so answers given in any language count together;
the prompts and option texts shown are those of the instructor's language.

Behind the instructor key when one is configured (app/ui/access.py); the CSV exports live only
here. Learners appear by the name part of their id: their ids hold the key to their progress,
so neither the tables nor the exports show them.
"""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from app.i18n import N_
from app.quiz import access_rules, instructor, item_analysis
from app.quiz.report import REVISIT_BELOW
from app.ui import access, quiz_feedback, shared_server
from app.ui import item_analysis as analysis_words
from app.ui import quiz_sources as sources
from app.ui.language import _, t
from app.views.instructor_parts import server_memory

# Column names stay codes (the CSV downloads keep them); the headers people read are these.
LABELS = {
    "item": N_("item"), "prompt": N_("question"), "topic": N_("topic"), "type": N_("type"),
    "attempts": N_("attempts"), "share_correct": N_("share correct"), "mean_score": N_("mean score"),
    "most_chosen_wrong": N_("most chosen wrong answer"), "most_chosen_wrong_count": N_("chosen by"),
    "learner": N_("learner"), "latest_attempt": N_("latest attempt"), "seed": N_("seed"), "timed": N_("timed"),
    "answered": N_("answered"), "score": N_("score"), "max": N_("of"), "share": N_("share"),
    "revisit": N_("topics to revisit"), "exercise": N_("exercise"), "runs": N_("runs"), "learners": N_("learners"),
    "held": N_("held"), "share_held": N_("share held"), "observed_corrupted": N_("corrupted runs"),
    "prediction": N_("prediction"), "outcome": N_("outcome"), "at": N_("at"),
    "facility": N_("facility index"), "discrimination": N_("discrimination index"), "flags": N_("flags"),
    "options": N_("times each option was chosen"), "letter": N_("letter"), "option": N_("option"),
    "correct": N_("right answer"), "chosen": N_("chosen by"), "items": N_("items"), "mastery": N_("class mastery"),
    "revisit_topic": N_("worth revisiting"),
}
PERCENT = ("share_correct", "mean_score", "share", "share_held", "facility", "mastery")
DECIMAL = ("discrimination",)  # -1..1: a correlation, not a share


def columns(frame: pd.DataFrame) -> dict[str, Any]:  # Streamlit's column configs, whose type it does not export
    """Translated headers for frame's columns; shares drawn as percentage bars."""
    config: dict[str, Any] = {}
    for name in frame.columns:
        label = _(LABELS[name]) if name in LABELS else name
        if name in PERCENT:
            config[name] = st.column_config.ProgressColumn(label, format="percent", min_value=0, max_value=1)
        elif name in DECIMAL:
            config[name] = st.column_config.NumberColumn(label, format="%.2f")
        else:
            config[name] = st.column_config.Column(label)
    return config


st.title(_("Instructor view"))
access.require_instructor()

lesson_list = sources.lessons()
bank = sources.bank(lesson_list)
if bank is None:
    st.stop()
store = sources.store()

report = store.class_report(bank)
report.insert(1, "prompt", [bank[item_id].prompt for item_id in report["item"]])
report_shown = report.assign(topic=report["topic"].map(quiz_feedback.topic_label),
                             type=[quiz_feedback.type_label(bank[i]) for i in report["item"]])
# Names, never ids: an id is the key to that learner's progress.
names = access_rules.display_names(store.learners())
scores = instructor.learner_scores(store, bank)
scores["learner"] = scores["learner"].map(names)
preds = instructor.predictions(store)
preds["learner"] = preds["learner"].map(names)

answered = report_shown[report_shown["attempts"] > 0]
a, b, c = st.columns(3)
a.metric(_("Learners"), len(scores))
b.metric(_("Items answered at least once"), t().render(N_("{n:count} of {total:count}"), n=len(answered), total=len(bank)))
c.metric(_("Answers"), int(report["attempts"].sum()))

st.subheader(_("Per item"))
st.caption(_("Share correct across all attempts, and the wrong choice most learners made: the misconception to address."))
only_answered = st.toggle(_("Only items someone answered"), value=True, key="instructor-only-answered")
shown = (answered if only_answered else report_shown).sort_values(["share_correct", "attempts"], ascending=[True, False])
st.dataframe(shown, hide_index=True, column_config=columns(shown))
st.download_button(_("Per-item report (CSV)"), report.to_csv(index=False), file_name="class-report.csv",
                   mime="text/csv", key="instructor-items-csv", on_click="ignore", icon=":material/download:")

st.subheader(_("Per learner"))
st.caption(_("Each learner's latest attempt: score out of every item in the bank, and topics under 70 %."))
if scores.empty:
    st.info(_("No quiz attempts yet."))
else:
    scores_shown = scores.assign(revisit=[_(", ").join(quiz_feedback.topic_label(topic) for topic in r.split(", ") if topic)
                                          for r in scores["revisit"]])
    st.dataframe(scores_shown, hide_index=True, column_config=columns(scores_shown))
    st.download_button(_("Learner scores (CSV)"), scores.to_csv(index=False), file_name="learner-scores.csv",
                       mime="text/csv", key="instructor-scores-csv", on_click="ignore", icon=":material/download:")

st.subheader(_("Predictions on the live server"))
st.caption(_("What learners predicted before a lab run or a quiz verification, against what Triton did."))
if preds.empty:
    st.info(_("No predictions recorded yet."))
else:
    by_exercise = instructor.predictions_by_exercise(preds)
    st.dataframe(by_exercise, hide_index=True, column_config=columns(by_exercise))
    with st.expander(t().render(N_("Every prediction ({n:count})"), n=len(preds))):
        st.dataframe(preds, hide_index=True, column_config=columns(preds))
    st.download_button(_("Predictions (CSV)"), preds.to_csv(index=False), file_name="predictions.csv",
                       mime="text/csv", key="instructor-predictions-csv", on_click="ignore", icon=":material/download:")

st.subheader(_("Item analysis"))
st.caption(t().render(N_(
    "Facility index: the mean score of those who answered an item, from 0 % (nobody got it) to 100 % (everyone "
    "did); at {easy:percent} or more an item is flagged too easy, at {hard:percent} or less too hard. "
    "Discrimination index: whether the learners who did well on the rest of the quiz also did well on this item, "
    "from -1 to 1; higher is better, and below 0 the stronger learners got it wrong more often, so check its key "
    "and wording. Each learner counts once, with their latest attempt that has an answer. Options are lettered "
    "in the bank's order (learners saw them shuffled); ✓ marks the right ones."),
    easy=item_analysis.TOO_EASY_FROM, hard=item_analysis.TOO_HARD_UP_TO))
analysis = item_analysis.analyse(store.answer_table(), bank)
if analysis.attempts == 0:
    st.info(_("No answers yet, so there is nothing to analyse."))
else:
    items_shown = analysis_words.items_table(analysis, bank)
    if only_answered:
        items_shown = items_shown[items_shown["answered"] > 0]
    st.dataframe(items_shown, hide_index=True, column_config=columns(items_shown))
    with st.expander(_("Every option, by letter")):
        options_shown = analysis_words.options_table(analysis, bank)
        st.dataframe(options_shown, hide_index=True, column_config=columns(options_shown))
    st.markdown("**" + _("Mastery per topic") + "**")
    st.caption(t().render(N_("The class's mean share of each topic's points, items left unanswered counting 0; "
                             "a topic under {below:percent} is worth revisiting."), below=REVISIT_BELOW))
    topics_shown = analysis_words.topics_table(analysis)
    st.dataframe(topics_shown, hide_index=True, column_config=columns(topics_shown))
    st.download_button(_("Item analysis (CSV)"), item_analysis.csv_frame(analysis).to_csv(index=False),
                       file_name="item-analysis.csv", mime="text/csv", key="instructor-item-analysis-csv",
                       on_click="ignore", icon=":material/download:")

# Last on the page: it needs the server, which the rest does not.
lab = shared_server.lab()
if lab is not None:
    server_memory.draw(lab[0].models.memory())
