"""Instructor page: how the whole class did, per item, per learner, and in the lab's predictions."""
from __future__ import annotations

import streamlit as st

from app.quiz import instructor
from app.ui import quiz_sources as sources

st.title("Instructor view")

bank = sources.bank(sources.lessons())
if bank is None:
    st.stop()
store = sources.store()

report = store.class_report(bank)
scores = instructor.learner_scores(store, bank)
preds = instructor.predictions(store)

answered = report[report["attempts"] > 0]
a, b, c = st.columns(3)
a.metric("Learners", len(scores))
b.metric("Items answered at least once", f"{len(answered)} of {len(bank)}")
c.metric("Answers", int(report["attempts"].sum()))

percent = st.column_config.ProgressColumn(format="percent", min_value=0, max_value=1)

st.subheader("Per item")
st.caption("Share correct across all attempts, and the wrong choice most learners made: the misconception to address.")
only_answered = st.toggle("Only items someone answered", value=True, key="instructor-only-answered")
shown = (answered if only_answered else report).sort_values(["share_correct", "attempts"], ascending=[True, False])
st.dataframe(shown, hide_index=True, column_config={"share_correct": percent, "mean_score": percent})
st.download_button("Per-item report (CSV)", report.to_csv(index=False), file_name="class-report.csv",
                   mime="text/csv", key="instructor-items-csv", on_click="ignore", icon=":material/download:")

st.subheader("Per learner")
st.caption("Each learner's latest attempt: score out of every item in the bank, and topics under 70 %.")
if scores.empty:
    st.info("No quiz attempts yet.")
else:
    st.dataframe(scores, hide_index=True, column_config={"share": percent})
    st.download_button("Learner scores (CSV)", scores.to_csv(index=False), file_name="learner-scores.csv",
                       mime="text/csv", key="instructor-scores-csv", on_click="ignore", icon=":material/download:")

st.subheader("Predictions on the live server")
st.caption("What learners predicted before a lab run or a quiz verification, against what Triton did.")
if preds.empty:
    st.info("No predictions recorded yet.")
else:
    st.dataframe(instructor.predictions_by_exercise(preds), hide_index=True,
                 column_config={"share_held": percent})
    with st.expander(f"Every prediction ({len(preds)})"):
        st.dataframe(preds, hide_index=True)
    st.download_button("Predictions (CSV)", preds.to_csv(index=False), file_name="predictions.csv",
                       mime="text/csv", key="instructor-predictions-csv", on_click="ignore", icon=":material/download:")
