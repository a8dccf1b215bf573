"""The generator's exercises: predict, run on the real server, see why. The same shape as app/recogniser/exercises, listed
with the same registry class (app/exercise_kit/registry.py), so the Failure modes page, the CLI and the tests list
both families (app/registry/families.py).

One folder per exercise, app/generation/exercises/<name>/:
  engine.py   EXERCISE, measure(server, deployer, progress) -> Measured, pure judge(tables) -> ExerciseJudgement
              (Streamlit-free and word-free: an import-linter contract holds it); Measured.models names the
              models it deployed, so the server log lines about them are the result's
  words.py    TITLE, SCENARIO, QUESTION, OPTIONS, NUMBERS, FINDINGS, STEPS (English templates marked with N_)
              and CHART_SUMMARIES
  figures.py  figures(result, _) -> list[(caption, plotly Figure, summary)]
plus its lines in app/generation/exercises/family.py (the imports of its three modules and their Member in the
list; mypy checks the three against app/exercise_kit/parts.py) and its test, tests/generation/exercises/test_<name>.py
(every outcome judged on hand-made tables, one real run in a `result` fixture whose docstring says why what it pins
is certain).
"""
