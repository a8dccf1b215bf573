"""The sentiment helpers on the real server: the model's tokenizer, batching, identical answers."""
from __future__ import annotations

from app.lab.paths import MODEL_REPOSITORY
from app.live.sentiment import engine as sentiment
from tests.server_calls import ask


def test_tokenizer_is_the_models_own_file():
    module = sentiment.tokenizer()
    assert module.__file__ == str(MODEL_REPOSITORY / "sentiment" / "1" / "tokenizer.py")
    assert sentiment.encode(["great food"]).shape == (1, 16)


def test_concurrency_forms_batches_and_answers_do_not_change(lab_server):
    texts = sentiment.reviews(32, seed=4)
    singles = sentiment.send(lab_server, texts, concurrency=1)
    crowd = sentiment.send(lab_server, texts, concurrency=16, order=sentiment.shuffled(32, 1))
    whole = sentiment.as_one_batch(lab_server, texts)
    assert singles.server["batch_sizes"] == {1: 32}
    assert whole.server["batch_sizes"] == {32: 1}
    assert crowd.server["inference_count"] == 32
    assert sentiment.agreement([singles, crowd, whole]).identical
    positive = [t for t, label in zip(texts, singles.labels, strict=True) if label == 1]
    assert positive and all(any(w in t for w in ("good", "great", "excellent", "lovely", "fast", "friendly",
                                                   "perfect", "superb", "delightful")) for t in positive)


def test_the_same_model_with_batching_off_runs_every_request_alone(lab_server):
    model = sentiment.load_unbatched(lab_server)
    assert "dynamic_batching" not in ask(lab_server, "get_model_config", model)
    with lab_server.client() as client:
        batched_scores, batched_labels = sentiment.classify(client, sentiment.MODEL, ["great food", "rude staff"])
        scores, labels = sentiment.classify(client, model, ["great food", "rude staff"])
        assert list(labels) == list(batched_labels) == [1, 0]
        assert abs(scores - batched_scores).max() <= sentiment.SCORE_TOLERANCE
