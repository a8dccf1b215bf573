"""What a run sends: which sessions, what they say, and how they pace their chunks."""
from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from app.lab.problems import LabError
from app.lab.scenario.alphabet import AlphabetError, to_symbols
from app.lab.scenario.transport import Transport

MAX_SESSIONS = 256  # the engine's limit; the lab page keeps its own, lower one for readability
MAX_IN_FLIGHT = 16
MAX_SYMBOLS = 200


class ScenarioError(LabError):
    """A scenario that cannot run; code and values say why (words: app/text/problems.py)."""

# Short common words, so random utterances read like speech in the transcript board.
WORDS = [
    "the", "of", "and", "to", "in", "is", "you", "that", "it", "he", "was", "for", "on", "are", "as", "with", "his", "they", "at", "be", "this", "have",
    "from", "or", "one", "had", "by", "word", "but", "not", "what", "all", "were", "we", "when", "your", "can", "said", "there", "use", "an", "each",
    "which", "she", "do", "how", "their", "if", "will", "up", "other", "about", "out", "many", "then", "them", "these", "so", "some", "her", "would",
    "make", "like", "him", "into", "time", "has", "look", "two", "more", "write", "go", "see", "number", "no", "way", "could", "people", "my", "than",
    "first", "water", "been", "call", "who", "oil", "its", "now", "find", "long", "down", "day", "did", "get", "come", "made", "may", "part", "over",
    "new", "sound", "take", "only", "little", "work", "know", "place", "year", "live", "me", "back", "give", "most", "very", "after", "thing", "our",
    "just", "name", "good", "sentence", "man", "think", "say", "great", "where", "help", "through", "much", "before", "line", "right", "too", "mean",
    "old", "any", "same", "tell", "boy", "follow", "came", "want", "show", "also", "around", "form", "three", "small", "set", "put", "end", "does",
    "another", "well", "large", "must", "big"
]


def random_texts(count: int, chunks: int | Sequence[int], seed: int) -> list[str]:
    """`count` utterances made of words, reproducible from seed, one symbol per chunk. `chunks` is
    one count, or several that the sessions take in turn (mixed short and long sessions)."""
    counts = [chunks] if isinstance(chunks, int) else list(chunks)
    if not counts or min(counts) < 1:
        raise ScenarioError("utterance_too_short")
    rng = random.Random(seed)
    texts = []
    for i in range(count):
        wanted = counts[i % len(counts)]
        text = ""
        while len(text) < wanted:
            text += (" " if text else "") + rng.choice(WORDS)
        texts.append(text[:wanted].upper())
    return texts


@dataclass
class Scenario:
    model: str
    texts: list[str]
    think_ms: float = 20.0
    jitter_ms: float = 10.0
    concurrency: int = 0  # sessions in flight at once; 0 means all of them
    seed: int = 0
    noise: float = 0.05
    stagger_ms: float = 0.0  # gap between the starts of consecutive sessions
    think_ms_by_session: list[float] | None = None  # per-session think time (Traffic.spread_think)
    corrids: list[int | str] | None = None  # explicit correlation IDs (collision exercise); else unique ones
    abandon: dict[int, int] = field(default_factory=dict)  # session -> chunks sent before vanishing, no END
    pauses: dict[int, tuple[int, float]] = field(default_factory=dict)  # session -> (after chunk k, pause ms)
    urls: list[str] | None = None  # per-session server URL (e.g. through a proxy); default the lab server
    headers_by_session: bool = False  # send X-Session-ID (for sticky load balancing)
    sequence: bool | None = None  # send sequence flags; None asks the model's config
    transport: Transport = Transport.HTTP
    in_flight: int = 1  # chunks a session may have unanswered; above 1 it pipelines

    def validate(self) -> list[list[int]]:
        """Symbols per session; raises ValueError with a specific message on bad input."""
        if not self.texts:
            raise ScenarioError("no_sessions")
        if len(self.texts) > MAX_SESSIONS:
            raise ScenarioError("too_many_sessions", high=MAX_SESSIONS, value=len(self.texts))
        self.transport = Transport.parse(self.transport)
        if not 1 <= self.in_flight <= MAX_IN_FLIGHT:
            raise ScenarioError("in_flight_range", low=1, high=MAX_IN_FLIGHT, value=self.in_flight)
        if self.urls and self.transport.uses_grpc:
            raise ScenarioError("urls_http_only")
        symbols = []
        for index, text in enumerate(self.texts):
            try:
                symbols.append(to_symbols(text))
            except AlphabetError as err:
                raise ScenarioError(f"session_{err.code}", session=index, number=index + 1, **err.values) from None
        if any(len(s) > MAX_SYMBOLS for s in symbols):
            raise ScenarioError("utterance_too_long", high=MAX_SYMBOLS)
        if self.think_ms < 0 or self.jitter_ms < 0:
            raise ScenarioError("negative_think")
        if self.concurrency < 0:
            raise ScenarioError("negative_concurrency")
        if self.think_ms_by_session is not None and len(self.think_ms_by_session) != len(self.texts):
            raise ScenarioError("think_per_session")
        if self.corrids is not None and len(self.corrids) != len(self.texts):
            raise ScenarioError("corrids_per_session")
        return symbols
