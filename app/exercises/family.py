"""The recogniser's failure modes: the family's one list, in teaching order. app/registry/families.py lists it
beside the generator's; app/exercises/__init__.py says what a member's folder holds.

Each member is its package with its engine, words and figures imported here (statically, so every edge is one
import-linter sees); the Registry checks them when this module loads."""
from __future__ import annotations

import app.exercises.cancelled_request.engine
import app.exercises.cancelled_request.figures
import app.exercises.cancelled_request.words
import app.exercises.forgot_ready.engine
import app.exercises.forgot_ready.figures
import app.exercises.forgot_ready.words
import app.exercises.id_collision.engine
import app.exercises.id_collision.figures
import app.exercises.id_collision.words
import app.exercises.leaked_state.engine
import app.exercises.leaked_state.figures
import app.exercises.leaked_state.words
import app.exercises.never_ending.engine
import app.exercises.never_ending.figures
import app.exercises.never_ending.words
import app.exercises.overload.engine
import app.exercises.overload.figures
import app.exercises.overload.words
import app.exercises.pipelined_client.engine
import app.exercises.pipelined_client.figures
import app.exercises.pipelined_client.words
import app.exercises.slot_exhaustion.engine
import app.exercises.slot_exhaustion.figures
import app.exercises.slot_exhaustion.words
import app.exercises.sticky_routing.engine
import app.exercises.sticky_routing.figures
import app.exercises.sticky_routing.words
import app.exercises.verification.engine
import app.exercises.verification.figures
import app.exercises.verification.words
from app.exercise_kit import Registry

EXERCISES = Registry("recogniser", "app/exercises/__init__.py", "tests/exercises/test_{name}.py", (
    app.exercises.slot_exhaustion,
    app.exercises.never_ending,
    app.exercises.id_collision,
    app.exercises.sticky_routing,
    app.exercises.forgot_ready,
    app.exercises.verification,
    app.exercises.cancelled_request,
    app.exercises.pipelined_client,
    app.exercises.leaked_state,
    app.exercises.overload,
))
