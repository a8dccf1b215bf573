"""Send the same reviews to the stateless sentiment model in several orders and batch splits.

Tokens come from the model's own tokenizer.py, imported from the model repository by path
(never copied), so the client sends exactly what the model expects.
"""
from __future__ import annotations

import functools
import importlib.util
import random
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import tritonclient.http as http

from app.lab import server_stats
from app.lab.paths import MODEL_REPOSITORY

MODEL = "sentiment"
TOKENIZER = MODEL_REPOSITORY / MODEL / "1" / "tokenizer.py"
SCORE_TOLERANCE = 1e-5  # float sums over different batch shapes may differ in the last bits

REVIEWS = (
    "the room was great and the staff friendly",
    "delivery was slow and the box broken",
    "support was excellent, thanks",
    "this phone is awful and noisy",
    "the film was lovely, see you soon",
    "our waiter was rude and the soup poor",
    "the app is fast and perfect",
    "terrible service, I want a refund",
    "superb food, delightful evening",
    "disappointing stay, worst bed ever",
    "good value, would recommend",
    "bad wifi and a noisy street",
)


@functools.lru_cache(maxsize=1)
def tokenizer():
    spec = importlib.util.spec_from_file_location("sentiment_tokenizer", TOKENIZER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def encode(texts) -> np.ndarray:
    return np.array([tokenizer().encode(t) for t in texts], dtype=np.int64)


def _infer(client, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    tensor = http.InferInput("TOKENS", list(tokens.shape), "INT64")
    tensor.set_data_from_numpy(tokens)
    result = client.infer(MODEL, [tensor])
    return result.as_numpy("SCORE").reshape(-1), result.as_numpy("LABEL").reshape(-1)


def send(server, order: list[int], concurrency: int, together: bool = False) -> dict:
    """Scores and labels in review order, plus the batch sizes the server formed."""
    tokens = encode(REVIEWS)
    scores = np.zeros(len(REVIEWS), dtype=np.float32)
    labels = np.zeros(len(REVIEWS), dtype=np.int32)
    control = server.client()
    before = server_stats.snapshot(control, server.metrics_url, MODEL)
    if together:
        s, l = _infer(control, tokens[order])
        scores[order], labels[order] = s, l
    else:
        local = threading.local()  # one client per thread: tritonclient's HTTP client is not thread-safe

        def one(index: int) -> None:
            if not hasattr(local, "client"):
                local.client = server.client()
            s, l = _infer(local.client, tokens[index : index + 1])
            scores[index], labels[index] = s[0], l[0]

        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            list(pool.map(one, order))
    after = server_stats.snapshot(control, server.metrics_url, MODEL)
    return {"scores": scores, "labels": labels, "batch_sizes": server_stats.delta(before, after)["batch_sizes"]}


def compare(server) -> pd.DataFrame:
    """One row per way of sending, compared with the first (in order, one at a time)."""
    n = len(REVIEWS)
    shuffled = list(range(n))
    random.Random(3).shuffle(shuffled)
    modes = {
        "in order, one at a time": dict(order=list(range(n)), concurrency=1),
        "reversed, 6 at once": dict(order=list(reversed(range(n))), concurrency=6),
        "shuffled, all at once": dict(order=shuffled, concurrency=n),
        "shuffled, one request of 12": dict(order=shuffled, concurrency=1, together=True),
    }
    results = {mode: send(server, **kwargs) for mode, kwargs in modes.items()}
    base = results["in order, one at a time"]
    rows = []
    for mode, r in results.items():
        rows.append(
            {
                "mode": mode,
                "batch_sizes": ", ".join(f"{v} of {k}" for k, v in r["batch_sizes"].items()) or "(not reported)",
                "labels_identical": bool(np.array_equal(base["labels"], r["labels"])),
                "max_score_diff": float(np.max(np.abs(base["scores"] - r["scores"]))),
                "positive": int(r["labels"].sum()),
            }
        )
    frame = pd.DataFrame(rows)
    frame["identical"] = frame["labels_identical"] & (frame["max_score_diff"] <= SCORE_TOLERANCE)
    return frame
