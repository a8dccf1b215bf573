"""The recogniser's failure modes: the family's one list, in teaching order. app/registry/families.py lists it
beside the generator's; app/recogniser/exercises/__init__.py says what a member's folder holds.

Each member is a Member of its engine, words and figures modules, imported here (statically, so every edge is one
import-linter sees, and mypy checks each module against app/exercise_kit/parts.py); the Registry checks them again
when this module loads."""
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
from app.exercise_kit import Member, Registry

EXERCISES = Registry("recogniser", "app/recogniser/exercises/__init__.py", "tests/recogniser/exercises/test_{name}.py", (
    Member(app.recogniser.exercises.slot_exhaustion.engine, app.recogniser.exercises.slot_exhaustion.words, app.recogniser.exercises.slot_exhaustion.figures),
    Member(app.recogniser.exercises.never_ending.engine, app.recogniser.exercises.never_ending.words, app.recogniser.exercises.never_ending.figures),
    Member(app.recogniser.exercises.id_collision.engine, app.recogniser.exercises.id_collision.words, app.recogniser.exercises.id_collision.figures),
    Member(app.recogniser.exercises.sticky_routing.engine, app.recogniser.exercises.sticky_routing.words, app.recogniser.exercises.sticky_routing.figures),
    Member(app.recogniser.exercises.forgot_ready.engine, app.recogniser.exercises.forgot_ready.words, app.recogniser.exercises.forgot_ready.figures),
    Member(app.recogniser.exercises.verification.engine, app.recogniser.exercises.verification.words, app.recogniser.exercises.verification.figures),
    Member(app.recogniser.exercises.cancelled_request.engine, app.recogniser.exercises.cancelled_request.words,
           app.recogniser.exercises.cancelled_request.figures),
    Member(app.recogniser.exercises.pipelined_client.engine, app.recogniser.exercises.pipelined_client.words,
           app.recogniser.exercises.pipelined_client.figures),
    Member(app.recogniser.exercises.leaked_state.engine, app.recogniser.exercises.leaked_state.words, app.recogniser.exercises.leaked_state.figures),
    Member(app.recogniser.exercises.overload.engine, app.recogniser.exercises.overload.words, app.recogniser.exercises.overload.figures),
))
