"""Judgement: pure verdicts and analysis over a run's tables."""
