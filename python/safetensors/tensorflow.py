# SPDX-License-Identifier: Apache-2.0
"""TensorFlow tensors to and from SafeTensors, as the reference's safetensors.tensorflow.
tensorflow is imported on first use; without it, ImportError names it."""

from typing import Any, Dict

from . import _frameworks
from . import numpy as _numpy
from ._typing import Metadata, PathLike


def _tf():
    return _frameworks.require("tensorflow", "tensorflow")


def _np2tf(numpy_dict):
    tf = _tf()
    for k, v in numpy_dict.items():
        numpy_dict[k] = tf.convert_to_tensor(v)
    return numpy_dict


def _tf2np(tf_dict):
    _tf()
    for k, v in tf_dict.items():
        tf_dict[k] = v.numpy()
    return tf_dict


def save(tensors: Dict[str, Any], metadata: Metadata = None) -> bytes:
    """Serializes tf.Tensors into the bytes of a SafeTensors file (through numpy arrays).

    Args:
        tensors (`Dict[str, tf.Tensor]`):
            The tensors by name.
        metadata (`Dict[str, str]`, *optional*):
            Text stored as the header's `__metadata__`.

    Returns:
        `bytes`: the whole file, header and data.

    Example:

    ```python
    import tensorflow as tf
    from safetensors.tensorflow import save

    data = save({"embedding": tf.zeros((512, 1024))})
    ```
    """
    return _frameworks.save(_tf2np, dict(tensors), metadata)


def save_file(tensors: Dict[str, Any], filename: PathLike, metadata: Metadata = None) -> None:
    """Writes tf.Tensors to a SafeTensors file: beside its final name, flushed to disk (fsync),
    then renamed into place.

    Args:
        tensors (`Dict[str, tf.Tensor]`):
            The tensors by name.
        filename (`str`, `bytes` or `os.PathLike`):
            Where to write. An existing file is replaced.
        metadata (`Dict[str, str]`, *optional*):
            Text stored as the header's `__metadata__`.

    Returns:
        `None`

    Example:

    ```python
    import tensorflow as tf
    from safetensors.tensorflow import save_file

    save_file({"embedding": tf.zeros((512, 1024))}, "model.safetensors")
    ```
    """
    _frameworks.save_file(_tf2np, dict(tensors), filename, metadata)


def load(data: bytes) -> Dict[str, Any]:
    """Reads tf.Tensors from the bytes of a SafeTensors file.

    Args:
        data (`bytes`):
            A whole file's content.

    Returns:
        `Dict[str, tf.Tensor]`: the tensors by name.

    Example:

    ```python
    from safetensors.tensorflow import load

    tensors = load(open("model.safetensors", "rb").read())
    ```
    """
    _tf()  # the framework first: its ImportError, not a parse error
    return _np2tf(_numpy.load(data))


def load_file(filename: PathLike) -> Dict[str, Any]:
    """Reads every tensor of a SafeTensors file.

    Args:
        filename (`str`, `bytes` or `os.PathLike`):
            The file to read.

    Returns:
        `Dict[str, tf.Tensor]`: the tensors by name, in the order of their data in the file.

    Example:

    ```python
    from safetensors.tensorflow import load_file

    tensors = load_file("model.safetensors")
    ```
    """
    _tf()
    return _frameworks.load_file(_np2tf, filename)
