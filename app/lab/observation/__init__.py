"""Observation: what the server itself reports about a run (trace, statistics, log, metrics).

Callers outside this package import from here. The types and codes by name; the modules whose
functions are verbs that read only with their module's name, as namespaces:
`server_log.raised_verbosity(server)`, `server_stats.snapshot(...)`, `server_trace.enable(...)`,
`run_log.capture(window, ...)`, `state_cells.totals(frame)`.
"""
from app.lab.observation import run_log, server_log, server_stats, server_trace, state_cells
from app.lab.observation.run_log import RunLog
from app.lab.observation.server_log import START_REFUSAL, Level, LogCode, LogEntry, LogWindow, Unavailable

__all__ = [
    "START_REFUSAL",
    "Level",
    "LogCode",
    "LogEntry",
    "LogWindow",
    "RunLog",
    "Unavailable",
    "run_log",
    "server_log",
    "server_stats",
    "server_trace",
    "state_cells",
]
