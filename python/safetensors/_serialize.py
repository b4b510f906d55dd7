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

    __slots__ = ("_dtype", "_shape", "_data_ptr", "_data_len", "_keep")

    def __init__(self, *, dtype, shape, data_ptr, data_len):
        self._dtype = _dtypes.to_code(dtype)
        self._shape = [int(d) for d in shape]
        if str(dtype).rsplit(".", 1)[-1] == "float4_e2m1fn_x2" and self._shape:
            self._shape[-1] *= 2
        self._data_ptr = int(data_ptr)
        self._data_len = int(data_len)
        self._keep = None  # what owns the bytes, when the spec was made from a tensor

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


def _cannot_convert(argument, value, target):
    return TypeError(f"argument '{argument}': '{type(value).__name__}' object cannot be converted to '{target}'")


class _NotATensorSpec(SafetensorError, TypeError):
    """A tensor_dict value that is not a TensorSpec: a TypeError, as the current reference
    raises, and a SafetensorError, as its older releases (and their tests) expect."""


def check_names(tensor_dict):
    """Tensor names must be str: TypeError in the reference's words otherwise."""
    for name in tensor_dict:
        if not isinstance(name, str):
            raise _cannot_convert("tensor_dict", name, "PyString")


def check_metadata(metadata):
    """None or a dict of str -> str: TypeError in the reference's words otherwise."""
    if metadata is None:
        return
    if not isinstance(metadata, dict):
        raise _cannot_convert("metadata", metadata, "PyDict")
    for key, value in metadata.items():
        for item in (key, value):
            if not isinstance(item, str):
                raise _cannot_convert("metadata", item, "PyString")


def _entries(tensor_dict):
    if not isinstance(tensor_dict, dict):
        raise _cannot_convert("tensor_dict", tensor_dict, "PyDict")
    check_names(tensor_dict)
    entries = []
    for name, spec in tensor_dict.items():
        if not isinstance(spec, TensorSpec):
            raise _NotATensorSpec(str(_cannot_convert("tensor_dict", spec, "TensorSpec")))
        entries.append((name, spec.dtype, spec.shape, (spec.data_ptr, spec.data_len)))
    return entries


def serialize(tensor_dict, metadata=None):
    """The file's bytes. `tensor_dict`: name -> TensorSpec (plain dicts raise TypeError, as in
    the reference's current API)."""
    entries = _entries(tensor_dict)
    check_metadata(metadata)
    return _serialize(entries, metadata)


def serialize_file(tensor_dict, filename, metadata=None):
    """Writes the file atomically: a temporary beside it, fsynced, then renamed over it."""
    entries = _entries(tensor_dict)
    check_metadata(metadata)
    _serialize_file(entries, os.fsdecode(filename), metadata)


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
