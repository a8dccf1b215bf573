"""Words for people, in English source form, marked for translation with N_().

The engine (app/lab) returns codes and numbers; the modules here map each code to the
template that says it, and pages and the CLI render those templates in the learner's
language (app/i18n). One module per kind of engine output; one per exercise under exercises/.
"""
from __future__ import annotations

# The {x:verdict} and {x:verdicts} kinds are verdict words, {x:sessions} and the other counted
# nouns are app/text/counts.py: importing any words module registers them.
from app.text import counts as _counts  # noqa: F401
from app.text import verdicts as _verdicts  # noqa: F401
