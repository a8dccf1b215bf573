"""The models' own code, outside the server: where an instance computes (the GPU path,
which CI has no GPU to exercise live), that the CPU's numpy arithmetic and the GPU's torch
arithmetic give the same answers, and how the recogniser names its instances."""
from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from app.lab.paths import MODEL_REPOSITORY
from app.lab.server import installation


@pytest.fixture(scope="module")
def torch():
    """torch, imported by the tests that use it. Imported at the module's top, it was imported by
    every test worker, since each collects every module: about 280 MB private apiece with README's
    CUDA build (benchmarks/suite_memory.py showed three workers of 550 to 635 MB)."""
    import torch as module

    return module


@pytest.fixture(scope="module")
def backend_utils_on_path():
    # The real triton_python_backend_utils.py that the embedded server's stub imports.
    folder = str(installation.locate().backend_dir / "python")
    sys.path.insert(0, folder)
    yield
    sys.path.remove(folder)


def load(model: str):
    folder = MODEL_REPOSITORY / model / "1"
    sys.path.insert(0, str(folder))  # the stub puts the model's folder on the path too (tokenizer.py)
    try:
        spec = importlib.util.spec_from_file_location(f"{model}_model", folder / "model.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(folder))


MODELS = ["asr_dynamic", "gen_inflight", "sentiment"]


@pytest.mark.parametrize("model", MODELS)
def test_a_gpu_instance_computes_on_its_own_gpu(backend_utils_on_path, monkeypatch, model, torch):
    module = load(model)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert torch.device(module.instance_device({"model_instance_kind": "GPU", "model_instance_device_id": "1"})) == torch.device("cuda:1")
    assert torch.device(module.instance_device({"model_instance_kind": "CPU", "model_instance_device_id": "0"})) == torch.device("cpu")


@pytest.mark.parametrize("model", MODELS)
def test_a_gpu_instance_without_cuda_falls_back_to_the_cpu(backend_utils_on_path, monkeypatch, model, torch):
    module = load(model)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert torch.device(module.instance_device({"model_instance_kind": "GPU", "model_instance_device_id": "0"})) == torch.device("cpu")


def test_the_recognisers_numpy_and_torch_arithmetic_decode_alike(backend_utils_on_path, torch):
    # A CPU instance decodes in numpy, a GPU one in torch (here on the CPU): same deltas.
    from app.recogniser.engine import audio

    module = load("asr_dynamic")
    rng = np.random.default_rng(7)
    chunks = [audio.chunk(delta, rng)[None, :] for delta in list(range(27)) * 4]
    numpy_deltas = module.NumpyMath().decode(chunks)
    torch_deltas = module.TorchMath("cpu").decode([torch.from_numpy(c) for c in chunks])
    assert numpy_deltas == torch_deltas == list(range(27)) * 4


def test_the_generators_numpy_and_torch_arithmetic_give_the_same_tokens(backend_utils_on_path, torch):
    from app.generation.engine import expected_tokens, prompt_hash

    module = load("gen_inflight")
    prompt = np.array([9, 40, 3, 61], dtype=np.int32)
    numpy_h = module.NumpyMath().prompt_hash(prompt)
    torch_h = module.TorchMath("cpu").prompt_hash(torch.from_numpy(prompt))
    assert numpy_h == torch_h == prompt_hash([9, 40, 3, 61])
    h, k, last = [numpy_h] * 3 + [5, 17], [0, 1, 2, 0, 3], [0, 33, 12, 0, 60]
    assert module.NumpyMath().tokens(h, k, last) == module.TorchMath("cpu").tokens(h, k, last)
    stream = expected_tokens([9, 40, 3, 61], 6)
    made, previous = [], 0
    for step in range(6):
        made += module.NumpyMath().tokens([numpy_h], [step], [previous])
        previous = made[-1]
    assert made == stream


def test_instance_index_comes_from_tritons_instance_name(backend_utils_on_path):
    module = load("asr_dynamic")
    assert module._instance_index("asr_sequence_direct_0_1") == 1
    assert module._instance_index("asr_lab_ada_0_3") == 3
    assert module._instance_index("") == 0
