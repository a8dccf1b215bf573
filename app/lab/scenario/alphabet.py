"""The recogniser's 27-symbol alphabet: index 0 is a space, 1 to 26 are A to Z."""
from __future__ import annotations

from app.lab.problems import LabError

ALPHABET = " ABCDEFGHIJKLMNOPQRSTUVWXYZ"
SIZE = len(ALPHABET)


class AlphabetError(LabError):
    """Text the recogniser cannot speak: code bad_character {char, position} or empty_text."""


def to_symbols(text: str) -> list[int]:
    upper = text.upper()
    for position, char in enumerate(upper):
        if char not in ALPHABET:
            raise AlphabetError("bad_character", char=text[position], position=position + 1)
    if not upper:
        raise AlphabetError("empty_text")
    return [ALPHABET.index(c) for c in upper]


def to_text(symbols: list[int]) -> str:
    """Symbols to text; anything outside the alphabet (a refused chunk) shows as '?'."""
    return "".join(ALPHABET[s] if 0 <= s < SIZE else "?" for s in symbols)


def deltas(symbols: list[int]) -> list[int]:
    """What each chunk encodes: the change from the previous symbol (the first from 0)."""
    previous, out = 0, []
    for symbol in symbols:
        out.append((symbol - previous) % SIZE)
        previous = symbol
    return out
