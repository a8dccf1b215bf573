"""The checks of a model without a decoupled transaction policy: the sequence batcher's rounds and the
stateless ones, measured on a live server into tables (measure.py, measurement.py and the rounds), then
judged (judge.py), the broken sessions diagnosed by replaying hypotheses (diagnosis.py, replay.py).

Nothing is re-exported: the engine's run.py calls measure, replay and judge by module, and callers
outside the engine use app.checker.engine's names.
"""
