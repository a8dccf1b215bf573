"""Traffic: sending a scenario's sessions to Triton and collecting one row per request."""
