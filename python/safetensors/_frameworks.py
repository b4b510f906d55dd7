# SPDX-License-Identifier: Apache-2.0
"""What safetensors.flax, .tensorflow, .paddle and .mlx share: their framework is imported on
first use (so importing the module never fails), and a missing one is an ImportError that
names it. Tensors go through numpy arrays both ways."""

import importlib

from . import numpy as _numpy
from ._open import safe_open


def require(module, package):
    """Imports `module` of `package`, or raises ImportError naming the package."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"{package} is not installed: this function needs it ({e})") from e


def save(to_numpy, tensors, metadata=None):
    return _numpy.save(to_numpy(tensors), metadata=metadata)


def save_file(to_numpy, tensors, filename, metadata=None):
    _numpy.save_file(to_numpy(tensors), filename, metadata=metadata)


def load_file(from_numpy, filename):
    """name -> framework tensor, in file order."""
    with safe_open(filename, framework="np") as f:
        return from_numpy({name: f.get_tensor(name) for name in f.offset_keys()})
