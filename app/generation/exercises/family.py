"""The generator's exercises: the family's one list, in teaching order. app/registry/families.py lists it after
the recogniser's; app/generation/exercises/__init__.py says what a member's folder holds.

Each member is a Member of its engine, words and figures modules, imported here (statically, so every edge is one
import-linter sees, and mypy checks each module against app/exercise_kit/parts.py); the Registry checks them again
when this module loads."""
from __future__ import annotations

import app.generation.exercises.cancelled_generation.engine
import app.generation.exercises.cancelled_generation.figures
import app.generation.exercises.cancelled_generation.words
import app.generation.exercises.head_of_line.engine
import app.generation.exercises.head_of_line.figures
import app.generation.exercises.head_of_line.words
import app.generation.exercises.kv_cancelled_blocks.engine
import app.generation.exercises.kv_cancelled_blocks.figures
import app.generation.exercises.kv_cancelled_blocks.words
import app.generation.exercises.kv_chunked_prefill.engine
import app.generation.exercises.kv_chunked_prefill.figures
import app.generation.exercises.kv_chunked_prefill.words
import app.generation.exercises.kv_shared_prefix.engine
import app.generation.exercises.kv_shared_prefix.figures
import app.generation.exercises.kv_shared_prefix.words
import app.generation.exercises.kv_too_few_blocks.engine
import app.generation.exercises.kv_too_few_blocks.figures
import app.generation.exercises.kv_too_few_blocks.words
import app.generation.exercises.queue_delay_trade.engine
import app.generation.exercises.queue_delay_trade.figures
import app.generation.exercises.queue_delay_trade.words
import app.generation.exercises.state_by_row.engine
import app.generation.exercises.state_by_row.figures
import app.generation.exercises.state_by_row.words
from app.exercise_kit import Member, Registry

EXERCISES = Registry("generation", "app/generation/exercises/__init__.py", "tests/generation/exercises/test_{name}.py", (
    Member(app.generation.exercises.head_of_line.engine, app.generation.exercises.head_of_line.words, app.generation.exercises.head_of_line.figures),
    Member(app.generation.exercises.queue_delay_trade.engine, app.generation.exercises.queue_delay_trade.words,
           app.generation.exercises.queue_delay_trade.figures),
    Member(app.generation.exercises.state_by_row.engine, app.generation.exercises.state_by_row.words, app.generation.exercises.state_by_row.figures),
    Member(app.generation.exercises.cancelled_generation.engine, app.generation.exercises.cancelled_generation.words,
           app.generation.exercises.cancelled_generation.figures),
    # The paged engine's (kv_engine): memory decides the batch.
    Member(app.generation.exercises.kv_too_few_blocks.engine, app.generation.exercises.kv_too_few_blocks.words,
           app.generation.exercises.kv_too_few_blocks.figures),
    Member(app.generation.exercises.kv_shared_prefix.engine, app.generation.exercises.kv_shared_prefix.words,
           app.generation.exercises.kv_shared_prefix.figures),
    Member(app.generation.exercises.kv_chunked_prefill.engine, app.generation.exercises.kv_chunked_prefill.words,
           app.generation.exercises.kv_chunked_prefill.figures),
    Member(app.generation.exercises.kv_cancelled_blocks.engine, app.generation.exercises.kv_cancelled_blocks.words,
           app.generation.exercises.kv_cancelled_blocks.figures),
))
