# SPDX-License-Identifier: Apache-2.0
"""numpy arrays to and from SafeTensors, as the reference's safetensors.numpy."""

import os
import sys
from typing import Any, Dict

import numpy as np
from numpy.typing import NDArray

from . import _dtypes
from ._open import safe_open
from ._safetensors_cxx import SafetensorError
from ._safetensors_cxx import serialize as _serialize
from ._safetensors_cxx import serialize_file as _serialize_file
from ._serialize import check_metadata, check_names, deserialize
from ._typing import Metadata, PathLike


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


def save(tensor_dict: Dict[str, NDArray[Any]], metadata: Metadata = None) -> bytes:
    """Serializes numpy arrays into the bytes of a SafeTensors file.

    Args:
        tensor_dict (`Dict[str, np.ndarray]`):
            The arrays by name. Any memory layout and byte order is accepted: the file
            holds each array in C order, little-endian.
        metadata (`Dict[str, str]`, *optional*):
            Text stored as the header's `__metadata__`.

    Returns:
        `bytes`: the whole file, header and data.

    Example:

    ```python
    from safetensors.numpy import save
    import numpy as np

    data = save({"embedding": np.zeros((512, 1024), dtype=np.float32)})
    ```
    """
    entries = _entries(tensor_dict)
    check_metadata(metadata)
    return _serialize(entries, metadata)


def save_file(tensor_dict: Dict[str, NDArray[Any]], filename: PathLike, metadata: Metadata = None) -> None:
    """Writes numpy arrays to a SafeTensors file. The file is written beside its final name,
    flushed to disk (fsync) and renamed into place, so readers never see it half-written.

    Args:
        tensor_dict (`Dict[str, np.ndarray]`):
            The arrays by name.
        filename (`str`, `bytes` or `os.PathLike`):
            Where to write. An existing file is replaced.
        metadata (`Dict[str, str]`, *optional*):
            Text stored as the header's `__metadata__`.

    Returns:
        `None`

    Example:

    ```python
    from safetensors.numpy import save_file
    import numpy as np

    save_file({"embedding": np.zeros((512, 1024), dtype=np.float32)}, "model.safetensors")
    ```
    """
    entries = _entries(tensor_dict)
    check_metadata(metadata)
    _serialize_file(entries, os.fsdecode(filename), metadata)


def load(data: bytes) -> Dict[str, NDArray[Any]]:
    """Reads numpy arrays from the bytes of a SafeTensors file.

    Args:
        data (`bytes`):
            A whole file's content.

    Returns:
        `Dict[str, np.ndarray]`: the arrays by name, in the order of their data in the file.

    Example:

    ```python
    from safetensors.numpy import load, save
    import numpy as np

    arrays = load(save({"a": np.arange(4)}))
    ```
    """
    out = {}
    for name, desc in deserialize(data):
        dtype = _dtypes.numpy_dtype(desc["dtype"])
        out[name] = np.frombuffer(desc["data"], dtype=dtype).reshape(desc["shape"])
    return out


def load_file(filename: PathLike, backend: str = "mmap", *, mmap: bool = True,
              **remote: Any) -> Dict[str, NDArray[Any]]:
    """Reads every array of a SafeTensors file. With the default backend the arrays are views of
    a private mapping of the file: nothing is copied until a page is touched, and writing to an
    array never reaches the file.

    Args:
        filename (`str`, `bytes` or `os.PathLike`):
            The file, or an `http://`, `https://` or `file://` URL of one.
        backend (`str`, *optional*, defaults to `"mmap"`):
            `"mmap"` (views of a mapping) or `"pread"` (copies read with `pread(2)`).
        mmap (`bool`, *optional*, defaults to `True`):
            `False` is the same as `backend="pread"`.
        **remote:
            For a URL: `token`, `ca_file`, `insecure` and `timeout`, as `safe_open` takes them.

    Returns:
        `Dict[str, np.ndarray]`: the arrays by name, in the order of their data in the file.

    Example:

    ```python
    from safetensors.numpy import load_file

    arrays = load_file("model.safetensors")
    ```
    """
    with safe_open(filename, framework="np", backend=backend, mmap=mmap, **remote) as f:
        return {name: f.get_tensor(name) for name in f.offset_keys()}


__all__ = ["save", "save_file", "load", "load_file", "SafetensorError"]
