"""The checks of a streaming (decoupled) model: its response streams measured alone and staggered
(streams.py), the client faults played on them (faults.py, relay.py), judged (stream_judge.py,
stream_diagnosis.py, stream_golden.py) and laid out as the tables every report reads (stream_check.py).

Nothing is re-exported: the engine's run.py calls stream_check and streams by module, and callers
outside the engine use app.checker.engine's names.
"""
