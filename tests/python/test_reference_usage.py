# SPDX-License-Identifier: Apache-2.0
"""Scripts written against the reference package's documented usage run unchanged."""

import pytest


def test_numpy_readme_usage(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    import numpy as np
    from safetensors.numpy import load_file, save_file

    tensors = {"a": np.zeros((2, 2)), "b": np.zeros((2, 3), dtype=np.uint8)}
    save_file(tensors, "./model.safetensors")
    loaded = load_file("./model.safetensors")
    assert loaded["a"].shape == (2, 2) and loaded["b"].dtype == np.uint8


def test_torch_quickstart_usage(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    from safetensors import safe_open
    from safetensors.torch import save_file

    tensors = {"embedding": torch.zeros((2, 2)), "attention": torch.zeros((2, 3))}
    save_file(tensors, "model.safetensors")

    loaded = {}
    with safe_open("model.safetensors", framework="pt", device="cpu") as f:
        for k in f.keys():
            loaded[k] = f.get_tensor(k)
    assert set(loaded) == {"embedding", "attention"}

    with safe_open("model.safetensors", framework="pt", device="cpu") as f:
        tensor_slice = f.get_slice("embedding")
        vocab_size, hidden_dim = tensor_slice.get_shape()
        tensor = tensor_slice[:, :hidden_dim]
    assert tensor.shape == (vocab_size, hidden_dim)

    from safetensors.torch import load, save

    byte_data = save(tensors)
    assert torch.equal(load(byte_data)["attention"], tensors["attention"])


def test_torch_model_usage(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_model, save_model

    model = torch.nn.Linear(4, 2)
    save_model(model, str(tmp_path / "model.safetensors"))
    other = torch.nn.Linear(4, 2)
    load_model(other, str(tmp_path / "model.safetensors"))
    assert torch.equal(other.weight, model.weight)
