"""Verify a prediction: one click runs the item's scenario on the real server.

The run takes a few seconds, so it happens in the script run the click starts (with
a progress bar) rather than in a callback, which could show nothing while it works.
The last result stays in session state; after a restart the stored prediction
record still says what the server did.
"""
from __future__ import annotations

import streamlit as st

from app.i18n import N_
from app.quiz.attempt import QuizAttempt
from app.quiz.bank import Item
from app.quiz.store import AnswerRecord
from app.recogniser.quiz_verify import Verification, exercise_name, verify
from app.recogniser.words import presets as preset_words
from app.text import verdicts as verdict_words
from app.text.errors import EXPLAINED, explain
from app.ui import shared_server
from app.ui.language import _, t
from app.ui.progress import run_with_progress

OUTCOME_WORDS = {"intact": N_("all transcripts intact"), "corrupted": N_("transcripts corrupted")}
OUTCOME_COLOURS = {"intact": "green", "corrupted": "red"}
COLUMN_LABELS = {"session": N_("Session"), "expected_text": N_("Said"), "received_text": N_("Transcribed"),
                 "verdict": N_("Verdict"), "detail": N_("Where it broke")}


def _outcome(outcome: str) -> str:
    colour = OUTCOME_COLOURS.get(outcome, "gray")
    words = OUTCOME_WORDS.get(outcome)
    return f":{colour}[**{_(words) if words else outcome}**]"


def _key(quiz: QuizAttempt, item: Item) -> str:
    return f"quiz-{quiz.id}-{item.id}-verify"


def _run(quiz: QuizAttempt, item: Item, chosen: int) -> Verification | None:
    lab = shared_server.lab()  # shows why when the server is not there
    if lab is None:
        return None
    server, deployer = lab
    try:
        # The driver reports progress from its own threads; run_with_progress draws it here.
        return run_with_progress(
            lambda progress: verify(server, deployer, quiz.store, quiz.learner, item, chosen, progress=progress),
            t().render(N_("Running {scenario:text} on Triton"), scenario=t()(preset_words.TITLES[str(item.scenario)])),
        )
    except EXPLAINED as err:
        st.error(t().render(N_("The scenario could not run on the server: {reason:text}"), reason=str(explain(err, t(), next_steps=shared_server.NEXT_STEPS))))
        return None


def _earlier_outcome(quiz: QuizAttempt, item: Item) -> str | None:
    """What the server did when this learner verified this item during this attempt."""
    mine = [p for p in quiz.store.predictions(quiz.learner)
            if p.exercise == exercise_name(item) and p.at >= quiz.attempt.started_at]
    return mine[-1].outcome if mine else None


def show_verify(quiz: QuizAttempt, item: Item, record: AnswerRecord) -> None:
    st.markdown("#### " + _("Verify on the server"))
    chosen = item.option(record.answer)
    key = _key(quiz, item)
    result: Verification | None = st.session_state.get(key)
    clicked = st.button(_("Run it again") if result else _("Run this scenario on the server"), icon=":material/play_arrow:",
                        key=f"{key}-run", type="secondary" if result else "primary")
    if clicked:
        fresh = _run(quiz, item, record.answer)
        if fresh is not None:
            st.session_state[key] = fresh
            st.rerun()  # redraw from the top, so the button already reads "Run it again"
    observed = result.observed if result else _earlier_outcome(quiz, item)
    left, right = st.columns(2)
    with left:
        st.markdown("**" + _("You predicted") + "**")
        st.markdown(_outcome(chosen.outcome or ""))
        st.caption(chosen.text)
    # Keyed so the browser test can read this column (one verify panel per page run).
    with right.container(key="quiz-verify-observed"):
        st.markdown("**" + _("The server showed") + "**")
        if observed is None:
            st.markdown(_("Not run yet: click the button to see what Triton does."))
        else:
            broken = (" " + t().render(N_("({broken:count} of {total:count} sessions broken)"), broken=result.broken,
                                        total=len(result.transcripts))) if result and result.broken else ""
            st.markdown(_outcome(observed) + broken)
    if observed is not None:
        if observed == chosen.outcome:
            st.success(_("Your prediction held on the real server."), icon=":material/verified:")
        else:
            st.error(_("The server did something other than you predicted: read the explanations above."),
                     icon=":material/search:")
    if result is None:
        return
    if result.observed != result.usual:
        st.info(t().render(N_("This deployment usually shows {usual:text}; batching depends on arrival timing, "
                              "so run it again to see its usual behaviour."), usual=_outcome(result.usual)))
    st.caption(t().render(N_("Model {model:text}, {n:count} interleaved sessions, {wall:seconds}. "
                             "Each row: what the session said, and what the server transcribed."),
                          model=result.model, n=len(result.transcripts), wall=result.wall_s))
    words = t()
    rows = result.transcripts
    table = rows.loc[:, ["session", "expected_text", "received_text"]].copy()
    table["verdict"] = [verdict_words.verdict(v, words) for v in rows["verdict"]]  # codes as words
    table["detail"] = [verdict_words.detail(row, words) for row in rows.to_dict("records")]
    st.dataframe(table, hide_index=True,
                 column_config={name: st.column_config.Column(_(label)) for name, label in COLUMN_LABELS.items()})
