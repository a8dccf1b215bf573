"""Word -> id hashing shared by the sentiment model and its clients (FNV-1a, 32 bit).

Pure Python with no imports, so the model (inside Triton) and the lab's client code load the
very same file.
"""

VOCAB = 4096
MAX_WORDS = 16


def word_id(word: str) -> int:
    h = 2166136261
    for byte in word.lower().encode():
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    return 1 + h % (VOCAB - 1)


def encode(text: str) -> list[int]:
    """Up to MAX_WORDS ids, 0-padded; punctuation is dropped."""
    words = "".join(c if c.isalnum() or c.isspace() else " " for c in text).split()[:MAX_WORDS]
    ids = [word_id(w) for w in words]
    return ids + [0] * (MAX_WORDS - len(ids))
