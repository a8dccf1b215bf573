"""Feedback for one answered item: the grade, then why every option is right or wrong.

Shared by the question card and review mode so both explain an answer the same way. Every
sentence is worked out here from the stored answer (option keys, a number) and the bank in
the learner's language, so an answer given in one language is explained in the other.
"""
from __future__ import annotations

import streamlit as st

from app.i18n import N_
from app.quiz.attempt import chosen_keys
from app.quiz.bank import Item, Option
from app.quiz.store import AnswerRecord
from app.ui.language import _, t

TYPE_LABELS = {
    "single": N_("one answer"),
    "multiple": N_("several answers"),
    "numeric": N_("a number"),
    "predict": N_("predict, then verify on the server"),
}


def fmt_number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def type_label(item: Item) -> str:
    return _(TYPE_LABELS[item.type])


def headline(record: AnswerRecord) -> str:
    if record.correct:
        return t().render(N_("Correct: {score:text} point"), score=fmt_number(record.score))
    if record.score > 0:
        return t().render(N_("Partly right: {score:text} of 1 point"), score=f"{record.score:.2f}")
    return _("Not right: 0 points")


def show_grade(record: AnswerRecord) -> None:
    text = headline(record)
    # Material icons ship with Streamlit; emoji depend on the learner's fonts.
    if record.correct:
        st.success(text, icon=":material/check_circle:")
    elif record.score > 0:
        st.warning(text, icon=":material/contrast:")
    else:
        st.error(text, icon=":material/cancel:")


def multiple_detail(item: Item, record: AnswerRecord) -> str:
    """What a 'multiple' answer got right and wrong, from its option keys."""
    picked = set(chosen_keys(record.answer))
    right, wrong = len(picked & item.correct_keys), len(picked - item.correct_keys)
    if picked == item.correct_keys:
        return _("All correct options and nothing else.")
    return t().render(N_("{right:count} of {total:count} correct options picked, {wrong:count} wrong."),
                      right=right, total=len(item.correct_keys), wrong=wrong)


def show_explanations(item: Item, options: list[Option], record: AnswerRecord) -> None:
    """The grade plus every option's explanation, in the order the learner saw them."""
    show_grade(record)
    if item.type == "numeric":
        unit = f" {item.unit}" if item.unit else ""
        tolerance = f" (± {fmt_number(item.tolerance)})" if item.tolerance else ""
        assert item.answer is not None  # a numeric item has its answer (the bank checks)
        st.markdown(t().render(N_("Your answer: **{answer:text}** · expected: **{expected:text}**{tolerance:text}"),
                               answer=fmt_number(record.answer) + unit, expected=fmt_number(item.answer) + unit,
                               tolerance=tolerance))
        st.markdown(item.explain or "")
        show_source(item)
        return
    if item.type == "multiple":
        st.caption(multiple_detail(item, record))
    picked = chosen_keys(record.answer)
    lines = []
    right, wrong, mine_word = _("Right"), _("Wrong"), _("your choice")
    for opt in options:
        mark = f":green[**{right}**]" if opt.correct else f":red[**{wrong}**]"
        mine = f" · :blue-background[{mine_word}]" if opt.key in picked else ""
        lines.append(f"- {mark}{mine}: {opt.text}  \n  {opt.explain}")
    st.markdown("**" + _("Every option explained") + "**\n\n" + "\n".join(lines))
    if item.explain:
        st.info(item.explain)
    show_source(item)


def show_source(item: Item) -> None:
    """Where the key comes from, so a learner can check the answer against Triton itself."""
    if item.source:
        parts = " · ".join(f"`{part.strip()}`" for part in item.source.split(";"))
        st.caption(t().render(N_("Source: {source:text}"), source=parts))


# The bank's topic codes (app/quiz/bank.TOPICS) as people read them.
TOPIC_WORDS = {
    "choosing": N_("choosing a scheduler"),
    "symptoms": N_("symptoms"),
    "guarantees": N_("guarantees"),
    "mechanics": N_("mechanics"),
    "control-tensors": N_("control tensors"),
    "direct-oldest": N_("direct and oldest"),
    "capacity": N_("capacity"),
    "failure-modes": N_("failure modes"),
    "instances": N_("instances"),
    "rollout": N_("rolling out"),
    "generation": N_("generation in flight"),
    "memory": N_("memory and the KV cache"),
}


def topic_label(topic: str) -> str:
    words = TOPIC_WORDS.get(topic)
    return _(words) if words else topic
