"""The marker for translatable strings, in a module of its own: formats.py marks its units with it
and app/i18n/__init__.py uses formats, so N_ cannot live in either without a cycle."""
from __future__ import annotations


def N_(message: str) -> str:
    """Marks a string for extraction where it is defined; it is translated where it is shown."""
    return message
