"""The recogniser's failure modes: the family's one list, in teaching order. app/registry/families.py lists it
beside the generator's; app/recogniser/exercises/__init__.py says what a member's folder holds.

Each member is its package with its engine, words and figures imported here (statically, so every edge is one
import-linter sees); the Registry checks them when this module loads."""
from __future__ import annotations

import app.recogniser.exercises.cancelled_request.engine
import app.recogniser.exercises.cancelled_request.figures
import app.recogniser.exercises.cancelled_request.words
import app.recogniser.exercises.forgot_ready.engine
import app.recogniser.exercises.forgot_ready.figures
import app.recogniser.exercises.forgot_ready.words
import app.recogniser.exercises.id_collision.engine
import app.recogniser.exercises.id_collision.figures
import app.recogniser.exercises.id_collision.words
import app.recogniser.exercises.leaked_state.engine
import app.recogniser.exercises.leaked_state.figures
import app.recogniser.exercises.leaked_state.words
import app.recogniser.exercises.never_ending.engine
import app.recogniser.exercises.never_ending.figures
import app.recogniser.exercises.never_ending.words
import app.recogniser.exercises.overload.engine
import app.recogniser.exercises.overload.figures
import app.recogniser.exercises.overload.words
import app.recogniser.exercises.pipelined_client.engine
import app.recogniser.exercises.pipelined_client.figures
import app.recogniser.exercises.pipelined_client.words
import app.recogniser.exercises.slot_exhaustion.engine
import app.recogniser.exercises.slot_exhaustion.figures
import app.recogniser.exercises.slot_exhaustion.words
import app.recogniser.exercises.sticky_routing.engine
import app.recogniser.exercises.sticky_routing.figures
import app.recogniser.exercises.sticky_routing.words
import app.recogniser.exercises.verification.engine
import app.recogniser.exercises.verification.figures
import app.recogniser.exercises.verification.words
from app.exercise_kit import Registry

EXERCISES = Registry("recogniser", "app/recogniser/exercises/__init__.py", "tests/recogniser/exercises/test_{name}.py", (
    app.recogniser.exercises.slot_exhaustion,
    app.recogniser.exercises.never_ending,
    app.recogniser.exercises.id_collision,
    app.recogniser.exercises.sticky_routing,
    app.recogniser.exercises.forgot_ready,
    app.recogniser.exercises.verification,
    app.recogniser.exercises.cancelled_request,
    app.recogniser.exercises.pipelined_client,
    app.recogniser.exercises.leaked_state,
    app.recogniser.exercises.overload,
))
