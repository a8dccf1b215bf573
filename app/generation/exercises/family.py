"""The generator's exercises: the family's one list, in teaching order. app/registry/families.py lists it after
the recogniser's; app/generation/exercises/__init__.py says what a member's folder holds.

Each member is its package with its engine, words and figures imported here (statically, so every edge is one
import-linter sees); the Registry checks them when this module loads."""
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
from app.exercise_kit import Registry

EXERCISES = Registry("generation", "app/generation/exercises/__init__.py", "tests/generation/exercises/test_{name}.py", (
    app.generation.exercises.head_of_line,
    app.generation.exercises.queue_delay_trade,
    app.generation.exercises.state_by_row,
    app.generation.exercises.cancelled_generation,
    # The paged engine's (kv_engine): memory decides the batch.
    app.generation.exercises.kv_too_few_blocks,
    app.generation.exercises.kv_shared_prefix,
    app.generation.exercises.kv_chunked_prefill,
    app.generation.exercises.kv_cancelled_blocks,
))
