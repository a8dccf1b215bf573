"""Failure-mode exercises: predict what the server will do, run it on the real server, see why.

One folder per exercise, app/recogniser/exercises/<name>/:
  engine.py   EXERCISE = Exercise(name="<the folder's name>", options=(keys...), correct=key)
              measure(server, deployer, progress=None) -> Measured   # talks to the server, returns its tables
              judge(tables) -> ExerciseJudgement                     # pure: outcome, numbers, findings, explanation
              (Streamlit-free and word-free: an import-linter contract holds it)
  words.py    title, scenario, question, options, findings, steps: English templates marked for translation
              (what app/registry/exercise_words.py reads)
  figures.py  figures(result, _) -> list[(caption, plotly Figure, summary)], drawn only from result.tables
              and numbers (what app/registry/exercise_figures.py reads)
plus its lines in app/recogniser/exercises/family.py (the imports of its three modules and their Member in the list,
in teaching order; mypy checks the three against app/exercise_kit/parts.py) and its test, tests/recogniser/exercises/test_<name>.py (every outcome judged on
hand-made tables, and one real run per test session, the module's `result` fixture). What several
exercises share (the result types, readings over run tables, fixed-name models, the registry class) is in
app/exercise_kit. A learner runs an exercise once, so the tests
pin what one run shows: the `result` fixture's docstring says why each outcome and number its tests
pin is certain (the mechanism, and what in measure() makes it so: a barrier, lock-step sending, a
counted capacity, a gate), or, where uncontrolled timing decides, that those tests assert only
what holds either way; it contains the word "certain", and tests/exercises/test_registry.py
fails for a module whose fixture does not. Nothing else lists exercises: the CLI, the page and
tests/exercises/test_registry.py read app/registry/families.py, and importing the family fails,
naming the module and what it lacks, if an exercise's engine, words or figures is incomplete.

API used by the CLI and the exercises page (through app/registry/families.py, which lists both families):
  names()              every exercise, in teaching order
  get(name)            the Exercise, or ValueError listing the names
  run(name, server, deployer, progress=None) -> ExerciseResult, with the server log of its runs
  judge(name, measured) -> ExerciseResult
progress (app/lab/progress.Progress), if given, is called as progress(steps done, steps, Stage) from
the calling thread; the Stage is a STEPS code of the exercise's words, with its values.

Each exercise's constants are its engine's (its figures and words read them: `leaked_state.engine.EVICT_S`).
"""
