# SPDX-License-Identifier: Apache-2.0
"""JAX/Flax arrays to and from SafeTensors, as the reference's safetensors.flax. jax is
imported on first use; without it, ImportError names it."""

import numpy as np

from . import _frameworks
from . import numpy as _numpy


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


def save(tensors, metadata=None):
    """The SafeTensors bytes of `tensors` (name -> jax Array)."""
    return _frameworks.save(_jnp2np, dict(tensors), metadata)


def save_file(tensors, filename, metadata=None):
    """Writes `tensors` (name -> jax Array) to `filename` atomically."""
    _frameworks.save_file(_jnp2np, dict(tensors), filename, metadata)


def load(data):
    """name -> jax Array from a file's bytes."""
    _jnp()  # the framework first: its ImportError, not a parse error
    return _np2jnp(_numpy.load(data))


def load_file(filename):
    """name -> jax Array, in file order."""
    _jnp()
    return _frameworks.load_file(_np2jnp, filename)
