# SPDX-License-Identifier: Apache-2.0
"""A consumer of the package's types, checked by `mypy --strict` (ctest python_mypy, mypy.ini);
never run. Every call the ecosystem makes is here with the types it expects back: a function
without annotations is an error under --strict (no-untyped-call), a wrong type a mismatch."""

import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

import numpy as np
import torch
from numpy.typing import NDArray
from typing_extensions import assert_type

import safetensors
import safetensors.cxx
import safetensors.flax
import safetensors.mlx
import safetensors.numpy
import safetensors.paddle
import safetensors.tensorflow
import safetensors.torch
from safetensors import SafetensorError, TensorSpec, deserialize, safe_open, serialize, serialize_file


def reference_api(path: str, where: Path) -> None:
    version: str = safetensors.__version__
    assert_type(version, str)
    with safe_open(path, framework="pt", device="cpu") as f:
        assert_type(f.keys(), List[str])
        assert_type(f.offset_keys(), List[str])
        metadata = f.metadata()
        assert_type(metadata, Optional[Dict[str, str]])
        if metadata is not None and metadata.get("format") != "pt":
            raise ValueError("not a torch checkpoint")
        piece = f.get_slice("w")
        assert_type(piece.get_shape(), List[int])
        assert_type(piece.get_dtype(), str)
        rows: Any = piece[0:2, ...]
        whole: Any = f.get_tensor("w")
        del rows, whole
    with safe_open(where / "a.safetensors", "np", backend="pread", mmap=False) as g:
        assert_type(g.get_tensors(), Dict[str, Any])
    array = np.zeros(3, dtype=np.float32)
    spec = TensorSpec(dtype="float32", shape=[3], data_ptr=array.ctypes.data, data_len=array.nbytes)
    assert_type(spec.shape, List[int])
    data = serialize({"a": spec}, metadata={"format": "np"})
    assert_type(data, bytes)
    assert_type(serialize_file({"a": spec}, where / "b.safetensors"), None)
    assert_type(deserialize(data), List[Tuple[str, Dict[str, Any]]])
    try:
        safetensors.numpy.load(b"")
    except SafetensorError as e:
        code: Optional[str] = e.code
        del code


def frameworks(where: Path, model: torch.nn.Module) -> None:
    arrays = {"a": np.arange(4)}
    safetensors.numpy.save_file(arrays, where / "n.safetensors", metadata={"k": "v"})
    assert_type(safetensors.numpy.save(arrays), bytes)
    assert_type(safetensors.numpy.load_file(os.fspath(where / "n.safetensors")), Dict[str, NDArray[Any]])
    assert_type(safetensors.numpy.load(b""), Dict[str, NDArray[Any]])

    tensors = {"w": torch.zeros(2, 2)}
    safetensors.torch.save_file(tensors, where / "t.safetensors", metadata={"format": "pt"})
    assert_type(safetensors.torch.save(tensors), bytes)
    assert_type(safetensors.torch.load_file(where / "t.safetensors", device="cpu"), Dict[str, torch.Tensor])
    assert_type(safetensors.torch.load_file(where / "t.safetensors", device=0), Dict[str, torch.Tensor])
    assert_type(safetensors.torch.load(b""), Dict[str, torch.Tensor])
    assert_type(safetensors.torch.storage_ptr(tensors["w"]), int)
    assert_type(safetensors.torch.storage_size(tensors["w"]), int)
    assert_type(safetensors.torch._find_shared_tensors(tensors), List[Set[str]])
    assert_type(safetensors.torch._remove_duplicate_names(tensors, discard_names=["w"]), Dict[str, List[str]])
    safetensors.torch.save_model(model, where / "m.safetensors", force_contiguous=True)
    missing, unexpected = safetensors.torch.load_model(model, where / "m.safetensors", strict=False)
    assert_type(missing, Set[str])
    assert_type(unexpected, List[str])

    assert_type(safetensors.flax.save({}), bytes)
    safetensors.flax.save_file({}, where / "f.safetensors", metadata=None)
    assert_type(safetensors.flax.load(b""), Dict[str, Any])
    assert_type(safetensors.flax.load_file(where / "f.safetensors"), Dict[str, Any])
    assert_type(safetensors.tensorflow.save({}), bytes)
    safetensors.tensorflow.save_file({}, where / "f.safetensors", metadata=None)
    assert_type(safetensors.tensorflow.load(b""), Dict[str, Any])
    assert_type(safetensors.tensorflow.load_file(where / "f.safetensors"), Dict[str, Any])
    assert_type(safetensors.mlx.save({}), bytes)
    safetensors.mlx.save_file({}, where / "f.safetensors", metadata=None)
    assert_type(safetensors.mlx.load(b""), Dict[str, Any])
    assert_type(safetensors.mlx.load_file(where / "f.safetensors"), Dict[str, Any])
    assert_type(safetensors.paddle.save({}), bytes)
    safetensors.paddle.save_file({}, where / "f.safetensors")
    assert_type(safetensors.paddle.load_file(where / "f.safetensors", device="cpu"), Dict[str, Any])
    assert_type(safetensors.paddle.load(b"", device="cpu"), Dict[str, Any])


def ours(where: Path) -> None:
    assert_type(safetensors.cxx.__version__, str)
    result = safetensors.cxx.validate(where / "a.safetensors", policy="strict")
    assert_type(result.ok, bool)
    assert_type(result.code, Optional[str])
    with safetensors.cxx.writer(where / "w.safetensors", {"w": ("float32", [2])}) as w:
        w.append("w", np.zeros(2, dtype=np.float32))
    with safetensors.cxx.open_checkpoint(where, framework="np") as ck:
        assert_type(ck.keys(), List[str])
    summary = safetensors.cxx.convert("model.bin", where / "model.safetensors", dtype="BF16",
                                      progress=lambda done, total: None)
    assert_type(summary, Dict[str, Any])
    assert_type(safetensors.cxx.checksum(where / "a.safetensors", per_tensor=True), Dict[str, Any])
    assert_type(safetensors.cxx.diff("a", "b", rtol=1e-3)["equal"], Any)
    assert_type(safetensors.cxx.mlx_layers("q.safetensors"), List[Dict[str, Any]])
