# SPDX-License-Identifier: Apache-2.0
"""Paddle tensors to and from SafeTensors, as the reference's safetensors.paddle. paddle is
imported on first use; without it, ImportError names it."""

from typing import Any, Dict

from . import _frameworks
from . import numpy as _numpy
from ._typing import Metadata, PathLike


def _paddle():
    return _frameworks.require("paddle", "paddle")


def _np2paddle(numpy_dict, device="cpu"):
    paddle = _paddle()
    for k, v in numpy_dict.items():
        numpy_dict[k] = paddle.to_tensor(v, place=device)
    return numpy_dict


def _paddle2np(paddle_dict):
    _paddle()
    for k, v in paddle_dict.items():
        paddle_dict[k] = v.detach().cpu().numpy()
    return paddle_dict


def save(tensors: Dict[str, Any], metadata: Metadata = None) -> bytes:
    """Serializes paddle.Tensors into the bytes of a SafeTensors file (through numpy arrays).

    Args:
        tensors (`Dict[str, paddle.Tensor]`):
            The tensors by name.
        metadata (`Dict[str, str]`, *optional*):
            Text stored as the header's `__metadata__`.

    Returns:
        `bytes`: the whole file, header and data.

    Example:

    ```python
    import paddle
    from safetensors.paddle import save

    data = save({"embedding": paddle.zeros((512, 1024))})
    ```
    """
    return _frameworks.save(_paddle2np, dict(tensors), metadata)


def save_file(tensors: Dict[str, Any], filename: PathLike, metadata: Metadata = None) -> None:
    """Writes paddle.Tensors to a SafeTensors file: beside its final name, flushed to disk (fsync),
    then renamed into place.

    Args:
        tensors (`Dict[str, paddle.Tensor]`):
            The tensors by name.
        filename (`str`, `bytes` or `os.PathLike`):
            Where to write. An existing file is replaced.
        metadata (`Dict[str, str]`, *optional*):
            Text stored as the header's `__metadata__`.

    Returns:
        `None`

    Example:

    ```python
    import paddle
    from safetensors.paddle import save_file

    save_file({"embedding": paddle.zeros((512, 1024))}, "model.safetensors")
    ```
    """
    _frameworks.save_file(_paddle2np, dict(tensors), filename, metadata)


def load(data: bytes, device: str = "cpu") -> Dict[str, Any]:
    """Reads paddle.Tensors from the bytes of a SafeTensors file.

    Args:
        data (`bytes`):
            A whole file's content.
        device (`str`, *optional*, defaults to `"cpu"`):
            The paddle place the tensors are created on.

    Returns:
        `Dict[str, paddle.Tensor]`: the tensors by name.

    Example:

    ```python
    from safetensors.paddle import load

    tensors = load(open("model.safetensors", "rb").read())
    ```
    """
    _paddle()  # the framework first: its ImportError, not a parse error
    return _np2paddle(_numpy.load(data), device)


def load_file(filename: PathLike, device: str = "cpu") -> Dict[str, Any]:
    """Reads every tensor of a SafeTensors file.

    Args:
        filename (`str`, `bytes` or `os.PathLike`):
            The file to read.
        device (`str`, *optional*, defaults to `"cpu"`):
            The paddle place the tensors are created on.

    Returns:
        `Dict[str, paddle.Tensor]`: the tensors by name, in the order of their data in the file.

    Example:

    ```python
    from safetensors.paddle import load_file

    tensors = load_file("model.safetensors")
    ```
    """
    _paddle()
    return _frameworks.load_file(lambda arrays: _np2paddle(arrays, device), filename)
