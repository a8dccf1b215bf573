"""The scenario: what a run sends (utterances as symbols and audio, sessions, correlation IDs)."""
