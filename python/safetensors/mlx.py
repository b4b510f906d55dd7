# SPDX-License-Identifier: Apache-2.0
"""MLX arrays to and from SafeTensors, as the reference's safetensors.mlx. mlx is imported on
first use; without it, ImportError names it. (MLX quantization helpers: safetensors.cxx.)"""

import numpy as np

from . import _frameworks
from . import numpy as _numpy


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


def save(tensors, metadata=None):
    """The SafeTensors bytes of `tensors` (name -> mx.array)."""
    return _frameworks.save(_mlx2np, dict(tensors), metadata)


def save_file(tensors, filename, metadata=None):
    """Writes `tensors` (name -> mx.array) to `filename` atomically."""
    _frameworks.save_file(_mlx2np, dict(tensors), filename, metadata)


def load(data):
    """name -> mx.array from a file's bytes."""
    _mx()  # the framework first: its ImportError, not a parse error
    return _np2mlx(_numpy.load(data))


def load_file(filename):
    """name -> mx.array, in file order."""
    _mx()
    return _frameworks.load_file(_np2mlx, filename)
