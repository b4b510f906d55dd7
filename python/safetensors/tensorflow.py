# SPDX-License-Identifier: Apache-2.0
"""TensorFlow tensors to and from SafeTensors, as the reference's safetensors.tensorflow.
tensorflow is imported on first use; without it, ImportError names it."""

from . import _frameworks
from . import numpy as _numpy


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


def save(tensors, metadata=None):
    """The SafeTensors bytes of `tensors` (name -> tf.Tensor)."""
    return _frameworks.save(_tf2np, dict(tensors), metadata)


def save_file(tensors, filename, metadata=None):
    """Writes `tensors` (name -> tf.Tensor) to `filename` atomically."""
    _frameworks.save_file(_tf2np, dict(tensors), filename, metadata)


def load(data):
    """name -> tf.Tensor from a file's bytes."""
    _tf()  # the framework first: its ImportError, not a parse error
    return _np2tf(_numpy.load(data))


def load_file(filename):
    """name -> tf.Tensor, in file order."""
    _tf()
    return _frameworks.load_file(_np2tf, filename)
