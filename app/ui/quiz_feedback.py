"""Feedback for one answered item: the grade, then why every option is right or wrong.

Shared by the question card and review mode so both explain an answer the same way.
"""
from __future__ import annotations

import streamlit as st

from app.quiz.bank import Item, Option
from app.quiz.session import chosen_keys
from app.quiz.store import AnswerRecord

TYPE_LABELS = {
    "single": "one answer",
    "multiple": "several answers",
    "numeric": "a number",
    "predict": "predict, then verify on the server",
}


def fmt_number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def headline(record: AnswerRecord) -> str:
    if record.correct:
        return f"Correct: {fmt_number(record.score)} point"
    if record.score > 0:
        return f"Partly right: {record.score:.2f} of 1 point"
    return "Not right: 0 points"


def show_grade(record: AnswerRecord) -> None:
    text = headline(record)
    # Material icons ship with Streamlit; emoji depend on the learner's fonts.
    if record.correct:
        st.success(text, icon=":material/check_circle:")
    elif record.score > 0:
        st.warning(text, icon=":material/contrast:")
    else:
        st.error(text, icon=":material/cancel:")


def show_explanations(item: Item, options: list[Option], record: AnswerRecord) -> None:
    """The grade plus every option's explanation, in the order the learner saw them."""
    show_grade(record)
    if item.type == "numeric":
        unit = f" {item.unit}" if item.unit else ""
        st.markdown(f"Your answer: **{fmt_number(record.answer)}{unit}** · "
                    f"expected: **{fmt_number(item.answer)}{unit}**"
                    + (f" (± {fmt_number(item.tolerance)})" if item.tolerance else ""))
        st.markdown(item.explain or "")
        show_source(item)
        return
    if item.type == "multiple":
        st.caption(record.detail)  # "2 of 3 correct options picked, 1 wrong pick."
    picked = chosen_keys(record.answer)
    lines = []
    for opt in options:
        mark = ":green[**Right**]" if opt.correct else ":red[**Wrong**]"
        mine = " · :blue-background[your choice]" if opt.key in picked else ""
        lines.append(f"- {mark}{mine}: {opt.text}  \n  {opt.explain}")
    st.markdown("**Every option explained**\n\n" + "\n".join(lines))
    if item.explain:
        st.info(item.explain)
    show_source(item)


def show_source(item: Item) -> None:
    """Where the key comes from, so a learner can check the answer against Triton itself."""
    if item.source:
        st.caption("Source: " + " · ".join(f"`{part.strip()}`" for part in item.source.split(";")))
