"""The models' own code, outside the server: where an instance computes (the GPU path,
which CI has no GPU to exercise live) and how the recogniser names its instances."""
from __future__ import annotations

import importlib.util
import sys

import pytest
import torch

from app.lab.paths import MODEL_REPOSITORY
from app.lab.server import installation


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


@pytest.mark.parametrize("model", ["asr_dynamic", "sentiment"])
def test_a_gpu_instance_computes_on_its_own_gpu(backend_utils_on_path, monkeypatch, model):
    module = load(model)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert module.instance_device({"model_instance_kind": "GPU", "model_instance_device_id": "1"}) == torch.device("cuda:1")
    assert module.instance_device({"model_instance_kind": "CPU", "model_instance_device_id": "0"}) == torch.device("cpu")


@pytest.mark.parametrize("model", ["asr_dynamic", "sentiment"])
def test_a_gpu_instance_without_cuda_falls_back_to_the_cpu(backend_utils_on_path, monkeypatch, model):
    module = load(model)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert module.instance_device({"model_instance_kind": "GPU", "model_instance_device_id": "0"}) == torch.device("cpu")


def test_instance_index_comes_from_tritons_instance_name(backend_utils_on_path):
    module = load("asr_dynamic")
    assert module._instance_index("asr_sequence_direct_0_1") == 1
    assert module._instance_index("asr_lab_ada_0_3") == 3
    assert module._instance_index("") == 0
