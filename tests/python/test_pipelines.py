# SPDX-License-Identifier: Apache-2.0
"""safetensors.cxx.convert: the library's conversion pipeline from Python, with the same
results as the CLI (a .pt made by Debian's torch, back through torch.load)."""

import os

import numpy as np
import pytest
import torch

from safetensors import SafetensorError
from safetensors.cxx import convert
from safetensors.numpy import load_file as load_numpy
from safetensors.torch import load_file


@pytest.fixture
def checkpoint(tmp_path):
    torch.manual_seed(0)
    state = {"embed.weight": torch.randn(64, 32), "head.bias": torch.arange(10, dtype=torch.int64),
             "norm.weight": torch.randn(32).to(torch.bfloat16)}
    path = tmp_path / "model.pt"
    torch.save(state, path)
    return path, state


def test_pytorch_to_safetensors_equals_torch_load(checkpoint, tmp_path):
    path, state = checkpoint
    out = tmp_path / "model.safetensors"
    summary = convert(path, out)
    assert summary["input_format"] == "PyTorch"
    assert summary["output_format"] == "SafeTensors"
    assert summary["tensors"] == 3
    assert summary["parameters"] == 64 * 32 + 10 + 32
    loaded = load_file(out)
    reference = torch.load(path)
    assert loaded.keys() == reference.keys()
    for name, tensor in reference.items():
        assert torch.equal(loaded[name], tensor), name


def test_cast_and_npz_output(checkpoint, tmp_path):
    path, state = checkpoint
    out = tmp_path / "model.npz"
    summary = convert(path, out, dtype="F16")
    convert(out, tmp_path / "back.safetensors")  # and back, through the .npz reader
    arrays = load_numpy(tmp_path / "back.safetensors")
    assert arrays["embed.weight"].dtype == np.float16
    assert arrays["head.bias"].dtype == np.int64  # integers are not cast
    np.testing.assert_array_equal(arrays["embed.weight"], state["embed.weight"].numpy().astype(np.float16))
    assert summary["output_format"] == "NumPy .npz"


def test_progress_is_called_and_an_exception_in_it_stops_with_no_output(checkpoint, tmp_path):
    path, _ = checkpoint
    calls = []
    convert(path, tmp_path / "a.safetensors", progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1][0] == calls[-1][1]

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        convert(path, tmp_path / "b.safetensors", progress=stop)
    assert not (tmp_path / "b.safetensors").exists()
    assert sorted(os.listdir(tmp_path)) == ["a.safetensors", "model.pt"]


def test_bad_requests_raise_safetensor_error_naming_the_problem(checkpoint, tmp_path):
    path, _ = checkpoint
    with pytest.raises(SafetensorError, match="applies to .npz output only"):
        convert(path, tmp_path / "x.safetensors", compress=True)
    with pytest.raises(SafetensorError, match="same file"):
        convert(path, path, to="safetensors")
    with pytest.raises(SafetensorError, match="unknown dtype"):
        convert(path, tmp_path / "y.safetensors", dtype="F17")
    assert not (tmp_path / "x.safetensors").exists()
