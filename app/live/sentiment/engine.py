"""Client side of the stateless sentiment model: tokenise, classify, send the same reviews in
different orders, concurrency and batch splits, compare the answers, and deploy the same model
with batching switched off.

The client tokenises with the model's own tokenizer.py (loaded from the model repository,
never copied), so what the lab sends is exactly what the model expects.
"""
from __future__ import annotations

import functools
import importlib.util
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import tritonclient.http as http

from app.lab.deployment import deployments
from app.lab.observation import server_stats
from app.lab.paths import MODEL_REPOSITORY
from app.lab.progress import REQUESTS, Progress
from app.lab.traffic import run_queue

if TYPE_CHECKING:
    from tritonclient.grpc import model_config_pb2 as mc

    from app.lab.server import LabServer

MODEL = "sentiment"
UNBATCHED = "sentiment_unbatched"
MODEL_DIR = MODEL_REPOSITORY / MODEL
TOKENIZER = MODEL_DIR / "1" / "tokenizer.py"
# How a SentimentRun sent its reviews (words: words.py).
ONE_AT_A_TIME, AT_ONCE, ONE_REQUEST = "one_at_a_time", "at_once", "one_request"
IN_ORDER, SHUFFLED = "in_order", "shuffled"
MODES = (ONE_AT_A_TIME, AT_ONCE, ONE_REQUEST, IN_ORDER, SHUFFLED)

_OPENERS = ("the room was", "our waiter was", "delivery was", "the app is", "this phone is", "the film was", "support was")
_POSITIVE = ("good", "great", "excellent", "lovely", "fast", "friendly", "perfect", "superb", "delightful")
_NEGATIVE = ("bad", "terrible", "awful", "slow", "rude", "broken", "poor", "disappointing", "noisy")
_CLOSERS = ("as expected", "see you soon", "thanks", "all told", "in short", "overall")


@functools.lru_cache(maxsize=1)
def tokenizer() -> ModuleType:
    """The model's tokenizer module, imported from its file in the model repository."""
    spec = importlib.util.spec_from_file_location("sentiment_tokenizer", TOKENIZER)
    assert spec is not None and spec.loader is not None  # a .py path always has a source loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reviews(count: int, seed: int = 0) -> list[str]:
    """`count` short, reproducible reviews, about half of them positive."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        words = _POSITIVE if rng.random() < 0.5 else _NEGATIVE
        out.append(f"{rng.choice(_OPENERS)} {rng.choice(words)} and {rng.choice(words)}, {rng.choice(_CLOSERS)}")
    return out


def encode(texts: list[str]) -> npt.NDArray[np.int64]:
    return np.array([tokenizer().encode(t) for t in texts], dtype=np.int64)


Scored = tuple[npt.NDArray[np.float32], npt.NDArray[np.int32]]  # (scores, labels), one each per review


@dataclass
class SentimentRun:
    """One way of sending the same reviews; scores and labels are in review order.

    `mode` is a code (MODES); its words, with `concurrency`, are in words.py."""

    mode: str
    wall_s: float
    scores: npt.NDArray[np.float32]
    labels: npt.NDArray[np.int32]  # 1 positive, 0 negative (the model's TYPE_INT32 LABEL)
    latency_ms: npt.NDArray[np.float64]
    server: dict[str, Any] = field(default_factory=dict)  # server_stats.delta (why untyped: there)
    concurrency: int = 1

    @property
    def throughput(self) -> float:
        return len(self.scores) / self.wall_s if self.wall_s else 0.0


def _infer(client: http.InferenceServerClient, tokens: npt.NDArray[np.int64], model: str = MODEL) -> Scored:
    tensor = http.InferInput("TOKENS", list(tokens.shape), "INT64")
    tensor.set_data_from_numpy(tokens)
    result = client.infer(model, [tensor])
    return result.as_numpy("SCORE").reshape(-1), result.as_numpy("LABEL").reshape(-1)


def classify(client: http.InferenceServerClient, model: str, text: str | list[str]) -> Scored:
    """(scores, labels) for one review, or several sent as one request."""
    return _infer(client, encode([text] if isinstance(text, str) else list(text)), model)


def load_variant(server: LabServer, name: str, change: Callable[[mc.ModelConfig], object]) -> str:
    """The sentiment model's code under `name`, with its shipped config altered by `change`
    (a function that edits the ModelConfig in place)."""
    config = deployments.place_instances(deployments.read_config(MODEL, server.model_repository))
    config.name = name
    change(config)
    files = {f"file:1/{p.name}": p.read_bytes() for p in (MODEL_DIR / "1").glob("*.py")}
    with server.client(timeout_s=300) as client:
        client.load_model(name, config=deployments.to_json(config), files=files)
    return name


def load_unbatched(server: LabServer) -> str:
    """The sentiment model under Triton's default scheduler: every request runs on its own."""
    return load_variant(server, UNBATCHED, lambda config: config.ClearField("dynamic_batching"))


def send(server: LabServer, texts: list[str], concurrency: int = 1, order: list[int] | None = None,
         mode: str | None = None, progress: Progress | None = None) -> SentimentRun:
    """One request per review; `concurrency` callers in flight at once, in `order`.
    `mode` is a MODES code; by default one_at_a_time or at_once."""
    tokens = encode(texts)
    order = list(range(len(texts))) if order is None else order
    scores = np.zeros(len(texts), dtype=np.float32)
    labels = np.zeros(len(texts), dtype=np.int32)
    latency = np.zeros(len(texts))
    local = threading.local()  # one client per thread: tritonclient's HTTP client is not thread-safe
    lock, done = threading.Lock(), [0]

    def one(index: int) -> None:
        if not hasattr(local, "client"):
            local.client = server.client()
        start = time.perf_counter()
        score, label = _infer(local.client, tokens[index : index + 1])
        latency[index] = (time.perf_counter() - start) * 1000
        scores[index], labels[index] = score[0], label[0]
        with lock:
            done[0] += 1
            if progress:
                progress(done[0], len(texts), REQUESTS)

    control = server.client()
    with run_queue.hold(server, MODEL):  # the statistics below then count this measurement's requests only
        before = server_stats.snapshot(control, server.metrics_url, MODEL)
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="review") as pool:
            list(pool.map(one, order))
        wall = time.perf_counter() - start
        after = server_stats.snapshot_after(control, server.metrics_url, MODEL, before, len(texts))
    name = mode or (ONE_AT_A_TIME if concurrency == 1 else AT_ONCE)
    return SentimentRun(name, wall, scores, labels, latency, server_stats.delta(before, after), max(1, concurrency))


def as_one_batch(server: LabServer, texts: list[str], order: list[int] | None = None) -> SentimentRun:
    """Every review in a single request of shape [N, 16], rows in `order`: the client batches.
    Scores and labels come back in review order."""
    order = list(range(len(texts))) if order is None else order
    control = server.client()
    with run_queue.hold(server, MODEL):
        before = server_stats.snapshot(control, server.metrics_url, MODEL)
        start = time.perf_counter()
        sent_scores, sent_labels = _infer(control, encode(texts)[order])
        wall = time.perf_counter() - start
        after = server_stats.snapshot_after(control, server.metrics_url, MODEL, before, len(texts))
    scores, labels = np.empty_like(sent_scores), np.empty_like(sent_labels)
    scores[order], labels[order] = sent_scores, sent_labels
    return SentimentRun(ONE_REQUEST, wall, scores, labels, np.full(len(texts), wall * 1000), server_stats.delta(before, after))


def shuffled(count: int, seed: int) -> list[int]:
    order = list(range(count))
    random.Random(seed).shuffle(order)
    return order


@dataclass
class Agreement:
    labels_identical: bool
    max_score_diff: float

    @property
    def identical(self) -> bool:
        # Float sums over different batch shapes may differ in the last bits; a label never may.
        return self.labels_identical and self.max_score_diff <= SCORE_TOLERANCE


SCORE_TOLERANCE = 1e-5


def agreement(runs: list[SentimentRun]) -> Agreement:
    first = runs[0]
    labels = all(np.array_equal(first.labels, r.labels) for r in runs[1:])
    diff = max((float(np.max(np.abs(first.scores - r.scores))) for r in runs[1:]), default=0.0)
    return Agreement(labels, diff)
