"""Which model a stub serves, read from its command line as Triton 2.51 starts it."""
from __future__ import annotations

from app.lab.server import memory


def stub(model_file: str, instance: str) -> list[str]:
    """A stub's argv as seen on the embedded 2.51: the model's file first, the instance's name eighth."""
    return ["/x/backends/python/triton_python_backend_stub", model_file, "shm", "1048576", "1048576", "1", "/x/python",
            "9", instance, "DEFAULT"]


def test_a_stub_is_its_own_models_even_when_a_shorter_known_name_starts_its_instance():
    known = ["kv_engine", "sentiment"]
    # the shipped model, and a checker's copy of it unloaded but still ending: not kv_engine's
    assert memory.model_of_stub(stub("/r/kv_engine/1/model.py", "kv_engine_0_0"), known) == "kv_engine"
    assert memory.model_of_stub(stub("/tmp/a/1/model.py", "kv_engine__check1_ab12_0_0"), known) == "kv_engine__check1_ab12"
    # a known name holding "_" that is a prefix of another known name
    assert memory.model_of_stub(stub("/r/sentiment/1/model.py", "sentiment_unbatched_0_1"), known) == "sentiment_unbatched"
    # an instance group with a name of its own says nothing of the model: the file's folder does
    assert memory.model_of_stub(stub("/r/sentiment/1/model.py", "reviews_0"), known) == "sentiment"
    assert memory.model_of_stub(["/bin/python"], known) is None
