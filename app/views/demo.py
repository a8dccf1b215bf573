"""Join a class demo: a learner opens /demo?code=ABCD (or types the code) and votes on the
presenter's question, in their own language. Other learners' names are never shown."""
from __future__ import annotations

from functools import partial

import streamlit as st

from app.i18n import N_
from app.presenter import view as demos
from app.quiz import votes
from app.ui import class_store, learner_id
from app.ui.language import _, t

st.title(_("Class vote"))

given = votes.normalise_code(st.query_params.get("code"))
typed = st.text_input(_("Code shown by your presenter"), value=given, max_chars=8, key="demo-code",
                      placeholder="ABCD")
code = votes.normalise_code(typed)
if not code:
    st.info(_("Type the code your presenter shows, or open the link they share."))
    st.stop()
if st.query_params.get("code") != code:
    st.query_params["code"] = code

store = votes.store()
try:
    poll = store.poll(code)
except votes.PollNotFound:
    st.error(t().render(N_("No class vote has the code `{code:text}`. Check it with your presenter."), code=code))
    st.stop()

demo = demos.known(poll.demo)  # either family: its question and options are worded by app/presenter/view.py
options = demos.demo_options(demo)
choice_words = partial(demos.option_label, demo)
voter = learner_id.learner()
if st.query_params.get("learner") != voter:
    st.query_params["learner"] = voter  # a reload comes back as the same voter (as the quiz's link does)
st.markdown("## " + demos.demo_title(demo, t()))
st.markdown("### " + demos.demo_question(demo, t()))


@st.fragment(run_every=3.0)
@class_store.guarded("demo-retry")
def ballot() -> None:
    """Re-read every few seconds, so the page follows the presenter: closed, then revealed."""
    current = store.poll(code)
    mine = store.my_vote(code, voter)
    if current.is_open:
        choice = st.radio(_("Your prediction"), list(options), key="demo-choice",
                          index=list(options).index(mine) if mine in options else None,
                          format_func=partial(choice_words, words=t()))
        if st.button(_("Vote"), key="demo-vote", type="primary", disabled=choice is None) and choice is not None:
            try:
                store.vote(code, voter, choice)
                mine = choice
            except votes.PollClosed:
                st.warning(_("Voting closed just before your vote arrived."))
        if mine:
            st.success(t().render(N_("Your vote: {choice:text}. You can change it until your presenter closes the vote."),
                                  choice=choice_words(mine, t())))
        return
    if current.state == votes.CLOSED:
        st.info(_("Voting is closed: watch the run on the presenter's screen."))
    if mine:
        st.markdown(t().render(N_("Your vote: {choice:text}."), choice=choice_words(mine, t())))
    else:
        st.caption(_("You did not vote on this one."))
    if current.state == votes.REVEALED and current.right is not None:
        right = [choice_words(o, t()) for o in current.right]
        if right:
            st.markdown(_("What the server did makes these answers right:") + "\n" + "\n".join(f"- {r}" for r in right))
        else:
            st.markdown(_("None of the answers held completely: discuss why with the class."))
        if mine:
            (st.success if mine in current.right else st.error)(
                _("Your prediction held.") if mine in current.right else _("Your prediction did not hold."))


ballot()
