# SPDX-License-Identifier: Apache-2.0
"""JAX/Flax arrays to and from SafeTensors, as the reference's safetensors.flax. jax is
imported on first use; without it, ImportError names it."""

from typing import Any, Dict

import numpy as np

from . import _frameworks
from . import numpy as _numpy
from ._typing import Metadata, PathLike


def _jnp():
    return _frameworks.require("jax.numpy", "jax")


def _np2jnp(numpy_dict):
    jnp = _jnp()
    for k, v in numpy_dict.items():
        numpy_dict[k] = jnp.array(v)
    return numpy_dict


def _jnp2np(jnp_dict):
    _jnp()
    for k, v in jnp_dict.items():
        jnp_dict[k] = np.asarray(v)
    return jnp_dict


def save(tensors: Dict[str, Any], metadata: Metadata = None) -> bytes:
    """Serializes jax Arrays into the bytes of a SafeTensors file (through numpy arrays).

    Args:
        tensors (`Dict[str, Array]`):
            The tensors by name.
        metadata (`Dict[str, str]`, *optional*):
            Text stored as the header's `__metadata__`.

    Returns:
        `bytes`: the whole file, header and data.

    Example:

    ```python
    import jax.numpy as jnp
    from safetensors.flax import save

    data = save({"embedding": jnp.zeros((512, 1024))})
    ```
    """
    return _frameworks.save(_jnp2np, dict(tensors), metadata)


def save_file(tensors: Dict[str, Any], filename: PathLike, metadata: Metadata = None) -> None:
    """Writes jax Arrays to a SafeTensors file: beside its final name, flushed to disk (fsync),
    then renamed into place.

    Args:
        tensors (`Dict[str, Array]`):
            The tensors by name.
        filename (`str`, `bytes` or `os.PathLike`):
            Where to write. An existing file is replaced.
        metadata (`Dict[str, str]`, *optional*):
            Text stored as the header's `__metadata__`.

    Returns:
        `None`

    Example:

    ```python
    import jax.numpy as jnp
    from safetensors.flax import save_file

    save_file({"embedding": jnp.zeros((512, 1024))}, "model.safetensors")
    ```
    """
    _frameworks.save_file(_jnp2np, dict(tensors), filename, metadata)


def load(data: bytes) -> Dict[str, Any]:
    """Reads jax Arrays from the bytes of a SafeTensors file.

    Args:
        data (`bytes`):
            A whole file's content.

    Returns:
        `Dict[str, Array]`: the tensors by name.

    Example:

    ```python
    from safetensors.flax import load

    tensors = load(open("model.safetensors", "rb").read())
    ```
    """
    _jnp()  # the framework first: its ImportError, not a parse error
    return _np2jnp(_numpy.load(data))


def load_file(filename: PathLike) -> Dict[str, Any]:
    """Reads every tensor of a SafeTensors file.

    Args:
        filename (`str`, `bytes` or `os.PathLike`):
            The file to read.

    Returns:
        `Dict[str, Array]`: the tensors by name, in the order of their data in the file.

    Example:

    ```python
    from safetensors.flax import load_file

    tensors = load_file("model.safetensors")
    ```
    """
    _jnp()
    return _frameworks.load_file(_np2jnp, filename)
