# SPDX-License-Identifier: Apache-2.0
"""Paddle tensors to and from SafeTensors, as the reference's safetensors.paddle. paddle is
imported on first use; without it, ImportError names it."""

from . import _frameworks
from . import numpy as _numpy


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


def save(tensors, metadata=None):
    """The SafeTensors bytes of `tensors` (name -> paddle.Tensor)."""
    return _frameworks.save(_paddle2np, dict(tensors), metadata)


def save_file(tensors, filename, metadata=None):
    """Writes `tensors` (name -> paddle.Tensor) to `filename` atomically."""
    _frameworks.save_file(_paddle2np, dict(tensors), filename, metadata)


def load(data, device="cpu"):
    """name -> paddle.Tensor on `device` from a file's bytes."""
    _paddle()  # the framework first: its ImportError, not a parse error
    return _np2paddle(_numpy.load(data), device)


def load_file(filename, device="cpu"):
    """name -> paddle.Tensor on `device`, in file order."""
    _paddle()
    return _frameworks.load_file(lambda arrays: _np2paddle(arrays, device), filename)
