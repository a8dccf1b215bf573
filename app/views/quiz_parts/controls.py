"""Which attempt and question the quiz page shows, and the controls that change them.

Session state holds only ids (attempt, item); the URL mirrors learner, seed and item,
so ?learner=<learner id>&seed=42&item=choose-same-shape opens that question of that seed's
order, and a reload lands where the learner was. A learner id holds a key
(app/quiz/access_rules.py): a bare ?learner=ada opens no one's progress.
"""
from __future__ import annotations

import streamlit as st

from app.i18n import N_
from app.quiz import access_rules
from app.quiz.attempt import ANSWERING, QuizAttempt
from app.quiz.bank import Bank
from app.quiz.shuffle import SEED_LIMIT, new_seed
from app.quiz.store import AttemptNotFound, ProgressStore
from app.ui import language, learner_id, quiz_feedback
from app.ui.language import _, t

ATTEMPT, ITEM, SEED, TIMED, MINUTES, NAME, MODE = (
    "quiz-attempt", "quiz-item", "quiz-seed", "quiz-timed", "quiz-minutes", "quiz-name", "quiz-mode",
)
CONTROL_FLASH = "quiz-control-flash"
# Modes are codes; their words are in MODE_WORDS, so a language switch keeps the mode.
REVIEW = "review"
ANSWER = "answer"
MODE_WORDS = {ANSWER: N_("Answer questions"), REVIEW: N_("Review answers")}


def _parse_seed(text: object) -> int | None:
    try:
        seed = int(str(text).strip())
    except ValueError:
        return None
    return seed if 0 <= seed < SEED_LIMIT else None


def _adopt(quiz: QuizAttempt, item: str | None = None) -> None:
    """Make quiz the page's attempt (safe in callbacks: runs before the widgets are drawn)."""
    st.session_state[ATTEMPT] = quiz.id
    st.session_state[ITEM] = item if item and quiz.bank.get(item) else quiz.first_unanswered()
    st.session_state[SEED] = str(quiz.seed)


def current(store: ProgressStore, bank: Bank, learner: str) -> QuizAttempt:
    """This browser's attempt; on first load the learner's latest, or the URL's seed."""
    state = st.session_state
    quiz = None
    if ATTEMPT in state:
        try:
            quiz = QuizAttempt.load(store, bank, state[ATTEMPT])
        except AttemptNotFound:  # reset from another tab
            quiz = None
        if quiz is not None and quiz.learner != learner:
            quiz = None
    if quiz is None:
        asked_seed, asked_item = st.query_params.get("seed"), st.query_params.get("item")
        quiz = QuizAttempt.resume(store, bank, learner, seed=_parse_seed(asked_seed))
        _adopt(quiz, asked_item)
        _link_fallbacks(quiz, asked_seed, asked_item)
    elif state.get(ITEM) is None or bank.get(state[ITEM]) is None:
        # After a language switch the browser names the question by its old label: go back to
        # the question on screen (remembered by language.choice), else the first unanswered.
        shown = state.get(language.chosen_key(ITEM), (None, None))[1]
        state[ITEM] = shown if shown and bank.get(shown) else quiz.first_unanswered()
    # Mirror where we are in the URL, so a link or a reload comes back here.
    st.query_params.update({"learner": learner, "seed": str(quiz.seed), "item": state[ITEM]})
    return quiz


SEED_FALLBACK = N_("The link's `seed={asked:text}` is not a seed (a whole number from 0 to {last:text}); "
                   "seed {used:text} is used instead.")
ITEM_FALLBACK = N_("The link's `item={asked:text}` names no question of this quiz; showing question "
                   "{number:text} (`{used:text}`) instead.")


def _link_fallbacks(quiz: QuizAttempt, asked_seed: str | None, asked_item: str | None) -> None:
    """Say which of the link's seed and item could not be used, and what is shown instead."""
    if asked_seed is not None and _parse_seed(asked_seed) is None:
        st.warning(t().render(SEED_FALLBACK, asked=asked_seed, last=str(SEED_LIMIT - 1), used=str(quiz.seed)))
    if asked_item and quiz.bank.get(asked_item) is None:
        used = st.session_state[ITEM]
        st.warning(t().render(ITEM_FALLBACK, asked=asked_item, number=str(quiz.number(used)), used=used))


def _time_limit() -> float | None:
    if not st.session_state.get(TIMED):
        return None
    return float(st.session_state.get(MINUTES) or 15) * 60


def _start(store: ProgressStore, bank: Bank, learner: str, seed: int) -> None:
    _adopt(QuizAttempt.start(store, bank, learner, seed, _time_limit()))


def _use_seed(store: ProgressStore, bank: Bank, learner: str) -> None:
    seed = _parse_seed(st.session_state.get(SEED))
    if seed is None:
        st.session_state[CONTROL_FLASH] = t().render(N_("A seed is a whole number from 0 to {last:text}."),
                                                      last=str(SEED_LIMIT - 1))
        return
    _start(store, bank, learner, seed)


def _rename(store: ProgressStore) -> None:
    # A new name keeps this learner's key and progress (app/ui/learner_id.py); it never opens
    # another learner's progress, whatever name is typed.
    learner_id.rename_learner(store, str(st.session_state.get(NAME) or ""))
    st.session_state.pop(NAME, None)  # redrawn from the id: a blank or trimmed name shows as kept


def _reset(quiz: QuizAttempt) -> None:
    _adopt(quiz.reset(time_limit_s=_time_limit()))


def _finish(quiz: QuizAttempt) -> None:
    quiz.finish()


def _go(quiz: QuizAttempt, delta: int) -> None:
    st.session_state[ITEM] = quiz.step(st.session_state[ITEM], delta)


def show_settings(quiz: QuizAttempt, store: ProgressStore, bank: Bank) -> None:
    state = st.session_state
    if NAME not in state:
        state[NAME] = access_rules.learner_name(quiz.learner)
    left, middle, right = st.columns([1.1, 1.2, 1])
    with left:
        st.text_input(_("Your name"), key=NAME, on_change=_rename, args=(store,),
                      help=_("The name your instructor sees. Your progress is kept under this page's link, not "
                             "the name: bookmark the link to come back, and keep it to yourself."))
    with middle:
        st.text_input(_("Seed"), key=SEED,
                      help=_("The seed fixes the order of questions and options: share it so a class sees the same quiz."))
        a, b = st.columns(2)
        a.button(_("Use this seed"), key="quiz-use-seed", on_click=_use_seed, args=(store, bank, quiz.learner),
                 help=_("Starts a new attempt in this seed's order; earlier attempts stay saved."))
        b.button(_("New seed"), key="quiz-new-seed", on_click=lambda: _start(store, bank, quiz.learner, new_seed()),
                 help=_("Starts a new attempt in a fresh random order."))
    with right:
        st.checkbox(_("Timed practice"), key=TIMED, help=_("Applies to the next attempt you start."))
        st.number_input(_("Minutes per attempt"), min_value=1, max_value=240, value=15, step=1, key=MINUTES,
                        disabled=not state.get(TIMED))
    flash = state.pop(CONTROL_FLASH, None)
    if flash:
        st.error(flash)


def show_timer(quiz: QuizAttempt) -> None:
    if not quiz.attempt.timed:
        return

    # Ticks on its own once a second; when time runs out the whole page reruns to close the attempt.
    @st.fragment(run_every=1.0 if quiz.phase() == ANSWERING else None)
    def _tick() -> None:
        left = quiz.remaining_s() or 0.0
        minutes, seconds = divmod(int(left), 60)
        st.markdown(":material/timer: " + t().render(N_("**{left:text}** left of {limit:count} min"),
                                                     left=f"{minutes}:{seconds:02d}",
                                                     limit=int((quiz.attempt.time_limit_s or 0) // 60)))  # timed: it has a limit
        if left <= 0 and st.session_state.get("quiz-timer-open", True):
            st.session_state["quiz-timer-open"] = False
            st.rerun()

    st.session_state["quiz-timer-open"] = quiz.phase() == ANSWERING
    _tick()


def show_navigation(quiz: QuizAttempt) -> str:
    """Previous / jump / next; returns the id of the item to show."""

    words = t()  # bound now: Streamlit may format the options again outside this run

    def label(item_id: str) -> str:
        # Streamlit matches the browser's choice by this text, so it must not change
        # between reruns (an "answered" mark here would send the learner to Q1).
        item = quiz.bank[item_id]
        short = item.prompt[:60] + ("…" if len(item.prompt) > 60 else "")
        return f"Q{quiz.number(item_id)} · {words(quiz_feedback.TYPE_LABELS[item.type])} · {short}"

    prev, jump, nxt = st.columns([1.3, 6, 1.1], vertical_alignment="bottom")
    prev.button(_("Previous"), icon=":material/chevron_left:", key="quiz-prev", on_click=_go, args=(quiz, -1), width="stretch")
    with jump:
        language.choice(st.selectbox, _("Question"), [item.id for item, _options in quiz.order], key=ITEM,
                        format_func=label)
    nxt.button(_("Next"), icon=":material/chevron_right:", icon_position="right", key="quiz-next", on_click=_go, args=(quiz, 1), width="stretch")
    shown: str = st.session_state[ITEM]
    return shown


def show_mode() -> str:
    words = t()  # bound now: Streamlit may format the options again outside this run
    mode: str = language.choice(st.radio, words(N_("Mode")), list(MODE_WORDS), key=MODE, horizontal=True,
                                label_visibility="collapsed", format_func=lambda mode: words(MODE_WORDS[mode]))
    return mode


def show_actions(quiz: QuizAttempt) -> None:
    a, b = st.columns(2)
    a.button(_("Finish and see my score"), key="quiz-finish", on_click=_finish, args=(quiz,),
             disabled=not quiz.accepting(), help=_("Closes this attempt; unanswered questions score 0."))
    with b.popover(_("Reset: start over")):
        st.markdown(_("Deletes all your attempts and answers, then starts again with the same seed."))
        st.button(_("Yes, delete and start over"), key="quiz-reset", on_click=_reset, args=(quiz,), type="primary")
