"""What several exercises share: the result types, readings over run tables, fixed-name models, and the
loader every family's registry checks its engines with.

Both families' engines, figures and registries (app/exercises, app/generation/exercises) import these names
from here, not from the modules behind them; this package is Streamlit-free and word-free (an import-linter contract holds it).
"""
from app.exercises.common import models, readings
from app.exercises.common.base import DONE, Exercise, ExerciseJudgement, ExerciseResult, Finding, Measured, Steps, Tables
from app.exercises.common.loader import load_exercise

# The names code outside this package imports (readings and models as namespaces: `readings.holding(run)`).
__all__ = ["DONE", "Exercise", "ExerciseJudgement", "ExerciseResult", "Finding", "Measured", "Steps", "Tables", "load_exercise",
           "models", "readings"]
