"""The transcript board: per session, what was said next to what the server heard.

Wrong letters are red, the first wrong one is boxed and pointed at, and the session's
audio can be played. Built as small inline-styled HTML (st.markdown) so it reads in any theme.
"""
from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from app.i18n import N_, Words
from app.recogniser.engine.audio import to_wav
from app.recogniser.engine.judgement import analysis
from app.text import verdicts as verdict_words
from app.ui.language import _, t

if TYPE_CHECKING:
    from collections.abc import Iterable

    from app.lab.records import RunResult

VERDICT_COLOUR = {"intact": "#1b7f3b", "lost": "#b54708", "foreign": "#c11f1f", "garbage": "#8e24aa", "error": "#555555"}
# A board longer than this shows the broken sessions first and folds the rest into an expander,
# so 64 sessions stay readable and only the shown ones carry an audio player.
FULL_BOARD = 12
_CELL = "display:inline-block;width:1.05em;text-align:center;"
_ROW = "font-family:ui-monospace,monospace;font-size:0.95rem;white-space:nowrap;line-height:1.5;"


def _char(c: str) -> str:
    return "&nbsp;" if c == " " else html.escape(c)


def _row(label: str, cells: Iterable[analysis.Cell], attr: str) -> str:
    parts = []
    for cell in cells:
        style = _CELL
        if attr == "received" and cell.wrong:
            style += "background:#ffd7d7;color:#a50000;font-weight:700;"
        if cell.first:
            style += "outline:2px solid #a50000;"
        parts.append(f'<span style="{style}">{_char(getattr(cell, attr))}</span>')
    return f'<div style="{_ROW}"><span style="display:inline-block;width:5.5em;color:#666">{label}</span>{"".join(parts)}</div>'


def _marker(cells: Iterable[analysis.Cell]) -> str:
    marks = "".join(f'<span style="{_CELL}color:#a50000">{"▲" if c.first else "&nbsp;"}</span>' for c in cells)
    return f'<div style="{_ROW}line-height:1"><span style="display:inline-block;width:5.5em"></span>{marks}</div>'


def session_html(row: Any, words: Words | None = None) -> str:  # a row of the sessions table: pandas rows are untyped
    words = words or t()
    colour = VERDICT_COLOUR.get(row.verdict, "#555")
    badge = html.escape(verdict_words.badge(row.verdict, words))
    cells = analysis.transcript_cells(row.expected_text, row.received_text, row.first_wrong)
    first = None if pd.isna(row.first_wrong) else int(row.first_wrong) + 1
    if first:
        where = words.render(N_("first wrong at letter {letter:count}: {detail:text}"), letter=first,
                             detail=html.escape(verdict_words.detail(row, words)))
    else:
        where = words(N_("every letter right"))
    name = html.escape(words.render(N_("Session {number:count}"), number=int(row.session) + 1))
    lines = [
        f'<div style="margin:0.1rem 0 0.2rem 0"><b>{name}</b> '
        f'<span style="background:{colour};color:white;border-radius:4px;padding:1px 6px;font-size:0.8rem">{badge}</span> '
        f'<span style="color:#444;font-size:0.85rem">{where}</span></div>',
        '<div style="overflow-x:auto">',
        _row(html.escape(words(N_("expected"))), cells, "expected"),
        _row(html.escape(words(N_("received"))), cells, "received"),
    ]
    if first:
        lines.append(_marker(cells))
    lines.append("</div>")
    return "".join(lines)


def verdict_summary(sessions: pd.DataFrame, words: Words | None = None) -> str:
    words = words or t()
    counts = sessions["verdict"].value_counts()
    total = len(sessions)
    intact = int(counts.get("intact", 0))
    if intact == total:
        return words.render(N_("All {total:count} sessions intact: {why:text}."), total=total,
                            why=verdict_words.explanation("intact", words))
    parts = [words.render(N_("{n:count} {verdict:verdict} ({why:text})"), n=int(n), verdict=v,
                          why=verdict_words.explanation(v, words)) for v, n in counts.items() if v != "intact"]
    return words.render(N_("{broken:count} of {total:count} sessions corrupted: {parts:text}."),
                        broken=total - intact, total=total, parts=words(N_("; ")).join(parts))


def board_order(sessions: pd.DataFrame, full: int = FULL_BOARD) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(shown, folded): all sessions in order when they fit; else broken ones first, then the rest."""
    if len(sessions) <= full:
        return sessions, sessions.iloc[0:0]
    ranked = sessions.assign(_intact=sessions["verdict"].eq("intact")).sort_values(["_intact", "session"], kind="stable")
    ranked = ranked.drop(columns="_intact")
    return ranked.iloc[:full], ranked.iloc[full:]


def board(result: RunResult, key: str = "transcript-board", audio: bool = True) -> None:
    """Every session of `result` (a driver RunResult), expected above received."""
    sessions = result.sessions
    plans = {p.index: p for p in result.plans}
    with st.container(key=key, border=True):
        st.markdown("#### " + _("Transcript board"))
        summary = verdict_summary(sessions)
        (st.success if sessions["verdict"].eq("intact").all() else st.error)(summary)
        shown, folded = board_order(sessions)
        if len(folded):
            st.caption(t().render(N_("{total:count} sessions: the first {shown:count} shown, sessions that broke first."),
                                  total=len(sessions), shown=len(shown)))
        for row in shown.itertuples():
            if audio:
                text_col, audio_col = st.columns([4, 1], vertical_alignment="center")
            else:
                text_col, audio_col = st.container(), None
            text_col.markdown(session_html(row), unsafe_allow_html=True)
            plan = plans.get(row.session)
            if audio_col is not None and plan is not None and plan.audio is not None:
                audio_col.audio(to_wav(plan.audio[: plan.send_count]), format="audio/wav")
        if len(folded):
            counts = folded["verdict"].value_counts().to_dict()
            with st.expander(t().render(N_("The other {n:count} sessions ({counts:verdicts})"), n=len(folded), counts=counts)):
                for row in folded.itertuples():
                    st.markdown(session_html(row), unsafe_allow_html=True)
