# SPDX-License-Identifier: Apache-2.0
"""serialize / serialize_file / deserialize on raw tensor descriptions, as the reference's
functions of the same names."""

import os

from . import _dtypes
from ._safetensors_cxx import Reader, SafetensorError
from ._safetensors_cxx import serialize as _serialize
from ._safetensors_cxx import serialize_file as _serialize_file


class TensorSpec:
    """One tensor for serialize/serialize_file: dtype, shape and where its bytes are.

    `data_ptr` is a raw address that must stay valid while the spec is serialized. For
    "float4_e2m1fn_x2" (two F4 values per byte) the storage shape is accepted and its last
    dimension doubled, so `shape` is always the element count per axis.
    """

    __slots__ = ("_dtype", "_shape", "_data_ptr", "_data_len")

    def __init__(self, *, dtype, shape, data_ptr, data_len):
        self._dtype = _dtypes.to_code(dtype)
        self._shape = [int(d) for d in shape]
        if str(dtype).rsplit(".", 1)[-1] == "float4_e2m1fn_x2" and self._shape:
            self._shape[-1] *= 2
        self._data_ptr = int(data_ptr)
        self._data_len = int(data_len)

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return list(self._shape)

    @property
    def data_ptr(self):
        return self._data_ptr

    @property
    def data_len(self):
        return self._data_len

    def __repr__(self):
        return f"TensorSpec(dtype={self._dtype!r}, shape={self._shape}, data_len={self._data_len})"


def _entry(name, desc):
    if isinstance(desc, TensorSpec):
        return (name, desc.dtype, desc.shape, (desc.data_ptr, desc.data_len))
    if not isinstance(desc, dict):
        raise SafetensorError(f"tensor {name}: expected a TensorSpec or a dict, got {type(desc).__name__}")
    for key in ("dtype", "shape"):
        if key not in desc:
            raise SafetensorError(f"Missing `{key}` in {desc}")
    dtype = desc["dtype"]
    shape = list(desc["shape"])
    if str(dtype).rsplit(".", 1)[-1] == "float4_e2m1fn_x2" and shape:
        shape[-1] *= 2
    if "data" in desc:
        data = desc["data"]
    elif "data_ptr" in desc and "data_len" in desc:
        data = (int(desc["data_ptr"]), int(desc["data_len"]))
    else:
        raise SafetensorError(f"Missing `data` (or `data_ptr` and `data_len`) in {desc}")
    return (name, _dtypes.to_code(dtype), shape, data)


def _entries(tensor_dict):
    if not isinstance(tensor_dict, dict):
        raise SafetensorError(f"expected a dict of tensors, got {type(tensor_dict).__name__}")
    return [_entry(name, desc) for name, desc in tensor_dict.items()]


def serialize(tensor_dict, metadata=None):
    """The file's bytes. `tensor_dict`: name -> TensorSpec, or a dict with "dtype", "shape" and
    "data" (a bytes-like object) or "data_ptr" and "data_len"."""
    return _serialize(_entries(tensor_dict), metadata)


def serialize_file(tensor_dict, filename, metadata=None):
    """Writes the file atomically: a temporary beside it, fsynced, then renamed over it."""
    _serialize_file(_entries(tensor_dict), os.fspath(filename), metadata)


def deserialize(bytes):  # noqa: A002 - the reference's parameter name
    """[(name, {"shape": [...], "dtype": "F32", "data": bytearray}), ...] in file order."""
    reader = Reader.from_bytes(bytes)
    out = []
    for name in reader.offset_keys():
        code, shape, nbytes = reader.info(name)
        data = bytearray(nbytes)
        if nbytes:
            reader.read_into(name, data)
        out.append((name, {"shape": shape, "dtype": code, "data": data}))
    reader.close()
    return out
