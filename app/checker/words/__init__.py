"""Words of the deployment checker (app/checker/engine), one module per concern: the codes' labels
(labels.py), what stops a check (problems.py), a verdict as a sentence (verdicts.py) and the CLI's
account of a check (summary.py); the config review's are in review.py, the decoupled path's in
streams.py, the check page's own in page.py.

Callers read the checker's words from here (`from app.checker import words as check_words`), so
the names below keep one address whichever module declares them.
"""
from __future__ import annotations

from app.checker.words import streams
from app.checker.words.labels import (
    CHECKS,
    DIAGNOSED,
    DIAGNOSES,
    NOT_EXERCISED,
    NOTE_GOLDEN_WRAP,
    NOTES,
    PHASES,
    REFUSAL_CAUSES,
    ROLES,
    SKIP_REASONS,
    VARIANTS,
    VERDICTS,
    WITNESS_ADVICE,
)
from app.checker.words.problems import PROBLEMS, error
from app.checker.words.streams import number
from app.checker.words.summary import (
    EXPORT_NOTHING,
    EXPORT_WROTE,
    OUTCOME,
    OUTCOME_NOT_EXERCISED,
    REVIEW_ALLOWED,
    REVIEW_FAILED,
    ROUTING,
    ROUTING_NOT_EXERCISED,
    SIZED_BY,
    SOURCES,
    TOLERANCE_SOURCES,
    WHERE,
    junit_message,
    outcome_lines,
    review_lines,
    review_version_line,
    routing_lines,
    shape_lines,
    summary_lines,
    witness_line,
)
from app.checker.words.verdicts import (
    check_name,
    diagnosed_session,
    diagnosis_lines,
    elements,
    not_exercised_sentence,
    note_lines,
    refusal_sentence,
    slow_client_clause,
    streams_text,
    verdict_sentence,
    witness_clause,
)

__all__ = [
    "streams",
    # labels.py
    "CHECKS",
    "DIAGNOSED",
    "DIAGNOSES",
    "NOT_EXERCISED",
    "NOTE_GOLDEN_WRAP",
    "NOTES",
    "PHASES",
    "REFUSAL_CAUSES",
    "ROLES",
    "SKIP_REASONS",
    "VARIANTS",
    "VERDICTS",
    "WITNESS_ADVICE",
    # problems.py
    "PROBLEMS",
    "error",
    # verdicts.py
    "check_name",
    "diagnosed_session",
    "diagnosis_lines",
    "elements",
    "not_exercised_sentence",
    "note_lines",
    "number",
    "refusal_sentence",
    "slow_client_clause",
    "streams_text",
    "verdict_sentence",
    "witness_clause",
    # summary.py
    "EXPORT_NOTHING",
    "EXPORT_WROTE",
    "OUTCOME",
    "OUTCOME_NOT_EXERCISED",
    "REVIEW_ALLOWED",
    "REVIEW_FAILED",
    "ROUTING",
    "ROUTING_NOT_EXERCISED",
    "SIZED_BY",
    "SOURCES",
    "TOLERANCE_SOURCES",
    "WHERE",
    "junit_message",
    "outcome_lines",
    "review_lines",
    "review_version_line",
    "routing_lines",
    "shape_lines",
    "summary_lines",
    "witness_line",
]
