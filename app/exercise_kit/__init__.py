"""The exercise machinery every family is built from, below the features that hold the families: what an
exercise is and returns (base), readings over run tables, fixed-name models, what a member's modules define
(parts) and the one registry class (registry.Registry) each family lists its members with.

Both families' engines, words, figures and lists (app/recogniser/exercises, app/generation/exercises) import these names
from here, not from the modules behind them; this package imports no feature that lists exercises, is
Streamlit-free and word-free (import-linter contracts hold it).
"""
from app.exercise_kit import models, readings
from app.exercise_kit.base import DONE, Exercise, ExerciseJudgement, ExerciseResult, Finding, Measured, Number, Steps, Tables
from app.exercise_kit.parts import EngineModule, FiguresModule, Member, WordsModule
from app.exercise_kit.registry import Registry

# The names code outside this package imports (readings and models as namespaces: `readings.holding(run)`).
__all__ = ["DONE", "Exercise", "ExerciseJudgement", "ExerciseResult", "Finding", "Measured", "Number", "Steps", "Tables",
           "EngineModule", "FiguresModule", "Member", "WordsModule", "Registry", "models", "readings"]
