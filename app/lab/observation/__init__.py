"""Observation: what the server itself reports about a run (trace, statistics, log, metrics)."""
