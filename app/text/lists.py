"""How every feature's sentences list things: between the items of a list ("session 2, session 5"), between
clauses that hold commas, and the tail of a list cut short (app/charts/figures.listed).

Each feature's chart summaries are its own words: app/recogniser/words/charts.py, app/checker/words/charts.py,
app/live/sentiment/words.py, app/presenter/words.py, app/charts/item_analysis.py and each exercise's words.py.
"""
from __future__ import annotations

from app.i18n import N_

LIST_SEPARATOR = N_(", ")
CLAUSE_SEPARATOR = N_("; ")
MORE = N_("{list:text} and {n:count} more")
