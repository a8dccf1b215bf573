"""Client side of the stateless sentiment model: tokenise with the model's own tokenizer file,
classify, and deploy the same model with batching switched off for comparison."""
from __future__ import annotations

import importlib.util
from functools import lru_cache

import numpy as np
import tritonclient.http as http

from app.lab import deployments
from app.lab.paths import MODEL_REPOSITORY

MODEL_DIR = MODEL_REPOSITORY / "sentiment"
UNBATCHED = "sentiment_unbatched"


@lru_cache(maxsize=1)
def tokenizer():
    """The tokenizer.py that ships beside the model, loaded from there (one implementation)."""
    spec = importlib.util.spec_from_file_location("sentiment_tokenizer", MODEL_DIR / "1" / "tokenizer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tokens(texts: list[str]) -> np.ndarray:
    return np.array([tokenizer().encode(t) for t in texts], dtype=np.int64)


def classify(client, model: str, text: str | list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(scores, labels) for one review or a batch of reviews sent as one request."""
    batch = tokens([text] if isinstance(text, str) else list(text))
    tensor = http.InferInput("TOKENS", list(batch.shape), "INT64")
    tensor.set_data_from_numpy(batch)
    result = client.infer(model, [tensor])
    return result.as_numpy("SCORE").reshape(-1), result.as_numpy("LABEL").reshape(-1)


def load_unbatched(server) -> str:
    """The sentiment model under Triton's default scheduler: every request runs on its own."""
    config = deployments.place_instances(deployments.read_config("sentiment", server.model_repository))
    config.name = UNBATCHED
    config.ClearField("dynamic_batching")
    files = {f"file:1/{p.name}": p.read_bytes() for p in (MODEL_DIR / "1").glob("*.py")}
    server.client(timeout_s=300).load_model(UNBATCHED, config=deployments.to_json(config), files=files)
    return UNBATCHED
