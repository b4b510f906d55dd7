# SPDX-License-Identifier: Apache-2.0
"""serialize / serialize_file / deserialize on raw tensor descriptions, as the reference's
functions of the same names."""

import os
from typing import Any, Dict, List, Sequence, Tuple

from . import _dtypes
from ._safetensors_cxx import Reader, SafetensorError
from ._safetensors_cxx import serialize as _serialize
from ._safetensors_cxx import serialize_file as _serialize_file
from ._typing import Metadata, PathLike


class TensorSpec:
    """One tensor for serialize/serialize_file: dtype, shape and where its bytes are.

    `data_ptr` is a raw address that must stay valid while the spec is serialized. For
    "float4_e2m1fn_x2" (two F4 values per byte) the storage shape is accepted and its last
    dimension doubled, so `shape` is always the element count per axis.
    """

    __slots__ = ("_dtype", "_shape", "_data_ptr", "_data_len", "_keep")

    def __init__(self, *, dtype: Any, shape: Sequence[int], data_ptr: int, data_len: int) -> None:
        self._dtype = _dtypes.to_code(dtype)
        self._shape = [int(d) for d in shape]
        if str(dtype).rsplit(".", 1)[-1] == "float4_e2m1fn_x2" and self._shape:
            self._shape[-1] *= 2
        self._data_ptr = int(data_ptr)
        self._data_len = int(data_len)
        self._keep = None  # what owns the bytes, when the spec was made from a tensor

    @property
    def dtype(self) -> str:
        return self._dtype

    @property
    def shape(self) -> List[int]:
        return list(self._shape)

    @property
    def data_ptr(self) -> int:
        return self._data_ptr

    @property
    def data_len(self) -> int:
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


def serialize(tensor_dict: Dict[str, TensorSpec], metadata: Metadata = None) -> bytes:
    """Serializes raw tensors, described by `TensorSpec`s, into the bytes of a SafeTensors file.

    The memory each spec points to must stay alive and unchanged until the call returns.

    Args:
        tensor_dict (`Dict[str, TensorSpec]`):
            The tensors by name, e.g. `{"w": TensorSpec(dtype="float32", shape=[2, 3],
            data_ptr=array.ctypes.data, data_len=24)}`. A value that is not a `TensorSpec`
            raises `TypeError`.
        metadata (`Dict[str, str]`, *optional*):
            Text stored as the header's `__metadata__`.

    Returns:
        `bytes`: the whole file, header and data.

    Example:

    ```python
    import numpy as np
    from safetensors import TensorSpec, serialize

    array = np.zeros((2, 3), dtype=np.float32)
    spec = TensorSpec(dtype="float32", shape=[2, 3], data_ptr=array.ctypes.data, data_len=array.nbytes)
    data = serialize({"w": spec})
    ```
    """
    entries = _entries(tensor_dict)
    check_metadata(metadata)
    return _serialize(entries, metadata)


def serialize_file(tensor_dict: Dict[str, TensorSpec], filename: PathLike, metadata: Metadata = None) -> None:
    """Writes raw tensors, described by `TensorSpec`s, to a SafeTensors file: beside its final
    name, flushed to disk (fsync), then renamed into place, so the file appears complete or not
    at all.

    Args:
        tensor_dict (`Dict[str, TensorSpec]`):
            The tensors by name, as `serialize` takes them.
        filename (`str`, `bytes` or `os.PathLike`):
            Where to write. An existing file is replaced.
        metadata (`Dict[str, str]`, *optional*):
            Text stored as the header's `__metadata__`.

    Returns:
        `None`

    Example:

    ```python
    import numpy as np
    from safetensors import TensorSpec, serialize_file

    array = np.zeros(4, dtype=np.int64)
    spec = TensorSpec(dtype="int64", shape=[4], data_ptr=array.ctypes.data, data_len=array.nbytes)
    serialize_file({"ids": spec}, "ids.safetensors")
    ```
    """
    entries = _entries(tensor_dict)
    check_metadata(metadata)
    _serialize_file(entries, os.fsdecode(filename), metadata)


def deserialize(bytes: bytes) -> List[Tuple[str, Dict[str, Any]]]:  # noqa: A002 - the reference's name
    """Reads every tensor of a SafeTensors file's bytes as raw data.

    Args:
        bytes (`bytes`):
            A whole file's content.

    Returns:
        `List[Tuple[str, Dict[str, Any]]]`: `(name, {"shape": [2, 3], "dtype": "F32", "data":
        bytearray})` per tensor, in the order of their data in the file.

    Example:

    ```python
    from safetensors import deserialize

    for name, tensor in deserialize(open("model.safetensors", "rb").read()):
        print(name, tensor["dtype"], tensor["shape"], len(tensor["data"]))
    ```
    """
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
