"""A shared system prompt with prefix sharing off and on."""
