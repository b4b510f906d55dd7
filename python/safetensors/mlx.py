# SPDX-License-Identifier: Apache-2.0
"""MLX arrays to and from SafeTensors, as the reference's safetensors.mlx. mlx is imported on
first use; without it, ImportError names it. (MLX quantization helpers: safetensors.cxx.)"""

from typing import Any, Dict

import numpy as np

from . import _frameworks
from . import numpy as _numpy
from ._typing import Metadata, PathLike


def _mx():
    return _frameworks.require("mlx.core", "mlx")


def _np2mlx(numpy_dict):
    mx = _mx()
    for k, v in numpy_dict.items():
        numpy_dict[k] = mx.array(v)
    return numpy_dict


def _mlx2np(mlx_dict):
    _mx()
    for k, v in mlx_dict.items():
        mlx_dict[k] = np.asarray(v)
    return mlx_dict


def save(tensors: Dict[str, Any], metadata: Metadata = None) -> bytes:
    """Serializes mx.arrays into the bytes of a SafeTensors file (through numpy arrays).

    Args:
        tensors (`Dict[str, mx.array]`):
            The tensors by name.
        metadata (`Dict[str, str]`, *optional*):
            Text stored as the header's `__metadata__`.

    Returns:
        `bytes`: the whole file, header and data.

    Example:

    ```python
    import mlx.core as mx
    from safetensors.mlx import save

    data = save({"embedding": mx.zeros((512, 1024))})
    ```
    """
    return _frameworks.save(_mlx2np, dict(tensors), metadata)


def save_file(tensors: Dict[str, Any], filename: PathLike, metadata: Metadata = None) -> None:
    """Writes mx.arrays to a SafeTensors file: beside its final name, flushed to disk (fsync),
    then renamed into place.

    Args:
        tensors (`Dict[str, mx.array]`):
            The tensors by name.
        filename (`str`, `bytes` or `os.PathLike`):
            Where to write. An existing file is replaced.
        metadata (`Dict[str, str]`, *optional*):
            Text stored as the header's `__metadata__`.

    Returns:
        `None`

    Example:

    ```python
    import mlx.core as mx
    from safetensors.mlx import save_file

    save_file({"embedding": mx.zeros((512, 1024))}, "model.safetensors")
    ```
    """
    _frameworks.save_file(_mlx2np, dict(tensors), filename, metadata)


def load(data: bytes) -> Dict[str, Any]:
    """Reads mx.arrays from the bytes of a SafeTensors file.

    Args:
        data (`bytes`):
            A whole file's content.

    Returns:
        `Dict[str, mx.array]`: the tensors by name.

    Example:

    ```python
    from safetensors.mlx import load

    tensors = load(open("model.safetensors", "rb").read())
    ```
    """
    _mx()  # the framework first: its ImportError, not a parse error
    return _np2mlx(_numpy.load(data))


def load_file(filename: PathLike) -> Dict[str, Any]:
    """Reads every tensor of a SafeTensors file.

    Args:
        filename (`str`, `bytes` or `os.PathLike`):
            The file to read.

    Returns:
        `Dict[str, mx.array]`: the tensors by name, in the order of their data in the file.

    Example:

    ```python
    from safetensors.mlx import load_file

    tensors = load_file("model.safetensors")
    ```
    """
    _mx()
    return _frameworks.load_file(_np2mlx, filename)
