"""The item analysis (app/quiz/item_analysis.py) in the reader's words, for the instructor and
presenter pages: flags as words, options by letter and text, topics by name.

Letters follow the bank's order of options (A is the bank's first option), not the order a
learner saw: the quiz shuffles options per learner, so the bank's order is the only one all
learners share. The texts are those of the page's bank, so in the instructor's language.
"""
from __future__ import annotations

import pandas as pd

from app.i18n import N_
from app.quiz import item_analysis
from app.quiz.bank import Bank, Item
from app.ui import quiz_feedback
from app.ui.language import _, t

FLAG_WORDS = {
    "too_easy": N_("too easy"),
    "too_hard": N_("too hard"),
    "negative_discrimination": N_("negative discrimination"),
}
RIGHT_MARK = "✓"
ITEM_TABLE_COLUMNS = ["item", "prompt", "topic", "type", "answered", "facility", "discrimination", "flags", "options"]
OPTION_TABLE_COLUMNS = ["item", "letter", "option", "correct", "chosen"]
TOPIC_TABLE_COLUMNS = ["topic", "items", "attempts", "mastery", "revisit_topic"]


def letter(position: int) -> str:
    """A, B, C... for the option at this position in the bank (past Z: its number)."""
    return chr(ord("A") + position) if 0 <= position < 26 else str(position + 1)


def flags_text(row: pd.Series) -> str:
    """The item's raised flags in words, '' when none."""
    return _(", ").join(_(FLAG_WORDS[flag]) for flag in item_analysis.FLAGS if bool(row[flag]))


def counts_text(item: Item, counts: dict[int, int]) -> str:
    """'A ✓: 3, B: 1, C: 0' (the right options marked); '' for a numeric item."""
    return _(", ").join(f"{letter(k)}{' ' + RIGHT_MARK if o.correct else ''}: {counts.get(o.key, 0)}"
                        for k, o in enumerate(item.options))


def items_table(analysis: item_analysis.ItemAnalysis, bank: Bank) -> pd.DataFrame:
    """The per-item table as the instructor reads it: prompt, topic and type in words, flags in
    words, option counts by letter. Column names stay codes (the page's LABELS head them)."""
    frame = analysis.items
    return frame.assign(
        prompt=[bank[i].prompt for i in frame["item"]],
        topic=frame["topic"].map(quiz_feedback.topic_label),
        type=[quiz_feedback.type_label(bank[i]) for i in frame["item"]],
        flags=[flags_text(row) for _i, row in frame.iterrows()],
        options=[counts_text(bank[i], analysis.option_counts(i)) for i in frame["item"]],
    )[ITEM_TABLE_COLUMNS]


def options_table(analysis: item_analysis.ItemAnalysis, bank: Bank) -> pd.DataFrame:
    """Every option of every option item: its letter, its text and how many chose it."""
    rows = []
    for item_id, key, correct, chosen in analysis.options[["item", "option", "correct", "chosen"]].itertuples(
            index=False):
        item = bank[item_id]
        position = next(k for k, o in enumerate(item.options) if o.key == key)
        rows.append({"item": item_id, "letter": letter(position), "option": item.option(key).text,
                     "correct": bool(correct), "chosen": int(chosen)})
    return pd.DataFrame.from_records(rows, columns=OPTION_TABLE_COLUMNS)


def topics_table(analysis: item_analysis.ItemAnalysis) -> pd.DataFrame:
    return analysis.topics.assign(topic=analysis.topics["topic"].map(quiz_feedback.topic_label))[TOPIC_TABLE_COLUMNS]


def option_lines(item: Item, counts: dict[int, int]) -> list[str]:
    """One markdown line per option: its letter, its text, how many chose it, and whether it is right."""
    lines = []
    for k, o in enumerate(item.options):
        line = t().render(N_("**{letter:text}.** {option:text}: {n:count}"), letter=letter(k), option=o.text,
                          n=counts.get(o.key, 0))
        lines.append(f"- {line}" + (f" · **{_('right answer')}**" if o.correct else ""))
    return lines
