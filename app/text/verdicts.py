"""Verdict words (app/lab/verdicts.py codes) as people read them."""
from __future__ import annotations

from app.i18n import N_

VERDICT_WORDS = {
    "intact": N_("intact"),
    "lost": N_("lost"),
    "foreign": N_("foreign"),
    "garbage": N_("garbage"),
    "error": N_("error"),
}
