# SPDX-License-Identifier: Apache-2.0
"""safetensors.flax, .tensorflow, .paddle and .mlx: importable without their framework,
ImportError naming it on use, and round trips through a small stand-in of each framework."""

import importlib
import sys
import types

import numpy as np
import pytest

ARRAYS = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1, 2], dtype=np.int64)}


class Boxed:
    """A framework tensor stand-in: wraps an array; np.asarray() and .numpy() unwrap it."""

    def __init__(self, array, where="cpu"):
        self.array, self.where = np.array(array), where

    def __array__(self, dtype=None):
        return self.array if dtype is None else self.array.astype(dtype)

    def numpy(self):
        return self.array

    def detach(self):
        return self

    def cpu(self):
        return self


def stand_ins():
    """Module name -> stand-in module providing what our framework modules call."""
    jax, jnp = types.ModuleType("jax"), types.ModuleType("jax.numpy")
    jnp.array = Boxed
    jax.numpy = jnp
    tf = types.ModuleType("tensorflow")
    tf.convert_to_tensor = Boxed
    mlx, mx = types.ModuleType("mlx"), types.ModuleType("mlx.core")
    mx.array = Boxed
    mlx.core = mx
    paddle = types.ModuleType("paddle")
    paddle.to_tensor = lambda array, place="cpu": Boxed(array, place)
    return {"jax": jax, "jax.numpy": jnp, "tensorflow": tf, "mlx": mlx, "mlx.core": mx, "paddle": paddle}


MODULES = {"flax": "jax", "tensorflow": "tensorflow", "mlx": "mlx", "paddle": "paddle"}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_missing_framework_is_an_import_error_naming_it(name, monkeypatch):
    for module in stand_ins():
        monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    module = importlib.import_module(f"safetensors.{name}")  # importing never needs the framework
    for call in (lambda: module.save({"a": np.zeros(1)}), lambda: module.load(b"")):
        with pytest.raises(ImportError, match=MODULES[name]):
            call()


@pytest.mark.parametrize("name", sorted(MODULES))
def test_round_trip_through_a_stand_in_framework(name, monkeypatch, tmp_path):
    for module_name, module in stand_ins().items():
        monkeypatch.setitem(sys.modules, module_name, module)
    module = importlib.import_module(f"safetensors.{name}")
    tensors = {k: Boxed(v) for k, v in ARRAYS.items()}
    data = module.save(tensors, metadata={"m": "1"})
    module.save_file(tensors, tmp_path / "f.safetensors")
    for loaded in (module.load(data), module.load_file(tmp_path / "f.safetensors")):
        assert list(loaded) == ["b", "w"] or set(loaded) == set(ARRAYS)
        for k, v in ARRAYS.items():
            assert isinstance(loaded[k], Boxed)
            np.testing.assert_array_equal(loaded[k].array, v)
    if name == "paddle":
        assert module.load_file(tmp_path / "f.safetensors", device="gpu:0")["w"].where == "gpu:0"
