# SPDX-License-Identifier: Apache-2.0
"""numpy arrays to and from SafeTensors, as the reference's safetensors.numpy."""

import os
import sys

import numpy as np

from . import _dtypes
from ._open import safe_open
from ._safetensors_cxx import SafetensorError
from ._safetensors_cxx import serialize as _serialize
from ._safetensors_cxx import serialize_file as _serialize_file
from ._serialize import check_metadata, check_names, deserialize


def _entries(tensor_dict):
    if not isinstance(tensor_dict, dict):
        raise ValueError(f"Expected a dict of [str, np.ndarray] but received {type(tensor_dict)}")
    check_names(tensor_dict)
    entries = []
    for name, array in tensor_dict.items():
        if not isinstance(array, np.ndarray):
            raise ValueError(f"Key `{name}` is invalid, expected np.ndarray but received {type(array)}")
        code = _dtypes.to_code(array.dtype.name)
        if array.dtype.byteorder == ">" or (array.dtype.byteorder == "=" and sys.byteorder == "big"):
            array = array.astype(array.dtype.newbyteorder("<"))
        # C order, as numpy's tobytes(); a contiguous array is passed as is.
        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        entries.append((name, code, list(array.shape), data))
    return entries


def save(tensor_dict, metadata=None):
    """The SafeTensors bytes of `tensor_dict` (name -> np.ndarray)."""
    entries = _entries(tensor_dict)
    check_metadata(metadata)
    return _serialize(entries, metadata)


def save_file(tensor_dict, filename, metadata=None):
    """Writes `tensor_dict` to `filename` atomically."""
    entries = _entries(tensor_dict)
    check_metadata(metadata)
    _serialize_file(entries, os.fsdecode(filename), metadata)


def load(data):
    """name -> np.ndarray from a file's bytes."""
    out = {}
    for name, desc in deserialize(data):
        dtype = _dtypes.numpy_dtype(desc["dtype"])
        out[name] = np.frombuffer(desc["data"], dtype=dtype).reshape(desc["shape"])
    return out


def load_file(filename, backend="mmap", *, mmap=True, **remote):
    """name -> np.ndarray, in file order. `filename` may be a URL (`remote`: the token, ca_file,
    insecure and timeout options of safe_open)."""
    with safe_open(filename, framework="np", backend=backend, mmap=mmap, **remote) as f:
        return {name: f.get_tensor(name) for name in f.offset_keys()}


__all__ = ["save", "save_file", "load", "load_file", "SafetensorError"]
