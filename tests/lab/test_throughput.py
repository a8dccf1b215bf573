"""The sentiment helpers on the real server: the model's tokenizer, batching, identical answers."""
from __future__ import annotations

from app.lab import throughput
from app.lab.paths import MODEL_REPOSITORY


def test_tokenizer_is_the_models_own_file():
    module = throughput.tokenizer()
    assert module.__file__ == str(MODEL_REPOSITORY / "sentiment" / "1" / "tokenizer.py")
    assert throughput.encode(["great food"]).shape == (1, 16)


def test_concurrency_forms_batches_and_answers_do_not_change(lab_server):
    texts = throughput.reviews(32, seed=4)
    singles = throughput.send(lab_server, texts, concurrency=1)
    crowd = throughput.send(lab_server, texts, concurrency=16, order=throughput.shuffled(32, 1))
    whole = throughput.as_one_batch(lab_server, texts)
    assert singles.server["batch_sizes"] == {1: 32}
    assert whole.server["batch_sizes"] == {32: 1}
    assert crowd.server["inference_count"] == 32
    assert throughput.agreement([singles, crowd, whole]).identical
    positive = [t for t, label in zip(texts, singles.labels) if label == 1]
    assert positive and all(any(w in t for w in ("good", "great", "excellent", "lovely", "fast", "friendly",
                                                   "perfect", "superb", "delightful")) for t in positive)
