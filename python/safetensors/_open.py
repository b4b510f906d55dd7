# SPDX-License-Identifier: Apache-2.0
"""safe_open: lazy access to one file's tensors as numpy arrays or torch tensors."""

import operator
import os
import sys

from . import _dtypes
from ._safetensors_cxx import Reader, SafetensorError

_FRAMEWORKS = {
    "pt": "pt", "torch": "pt", "pytorch": "pt",
    "np": "np", "numpy": "np",
    "tf": "tf", "tensorflow": "tf",
    "jax": "flax", "flax": "flax",
    "mlx": "mlx",
    "paddle": "paddle",
}


def _framework(name):
    found = _FRAMEWORKS.get(name) if isinstance(name, str) else None
    if found is None:
        raise SafetensorError(f"framework {name} is invalid")
    return found


def _device(framework, device):
    if device is None:
        device = "cpu"
    if framework != "pt" and device != "cpu":
        raise SafetensorError(f"Device {device} is not supported for framework {framework}")
    return device


def _fill(read_into, code, shape, nbytes, framework, device):
    """A new array/tensor of `code` and `shape` whose bytes `read_into(buffer)` copies in."""
    if framework == "pt":
        import torch

        dtype = _dtypes.torch_dtype(code)
        if code == "F4" and shape:
            shape = list(shape[:-1]) + [shape[-1] // 2]  # torch stores two F4 values per element
        if nbytes == 0:
            out = torch.empty(shape, dtype=dtype)
        else:
            # numpy's allocator asks for huge pages on large buffers: far fewer page faults while
            # copying than torch.empty's. The tensor shares (and keeps alive) the array's memory.
            import numpy as np

            raw = np.empty(nbytes, dtype=np.uint8)
            read_into(raw)
            out = torch.from_numpy(raw).view(dtype).reshape(shape)
            if sys.byteorder == "big":
                out = _byteswapped_torch(out)
        if device != "cpu":
            out = out.to(device)
        return out
    import numpy as np

    if nbytes == 0:
        out = np.empty(shape, dtype=_dtypes.numpy_dtype(code))
    else:
        raw = np.empty(nbytes, dtype=np.uint8)
        read_into(raw)
        out = raw.view(_dtypes.numpy_dtype(code)).reshape(shape)
    return _convert_numpy(out, framework)


def _byteswapped_torch(tensor):
    import numpy as np
    import torch

    as_bytes = tensor.reshape(-1).view(torch.uint8).numpy().reshape(-1, tensor.element_size())
    return torch.from_numpy(np.ascontiguousarray(as_bytes[:, ::-1])).view(tensor.dtype).reshape(tensor.shape)


def _convert_numpy(array, framework):
    """numpy -> the frameworks we serve through numpy."""
    if framework == "np":
        return array
    if framework == "tf":
        import tensorflow as tf

        return tf.convert_to_tensor(array)
    if framework == "flax":
        import jax.numpy as jnp

        return jnp.array(array)
    if framework == "mlx":
        import mlx.core as mx

        return mx.array(array)
    import paddle

    return paddle.to_tensor(array)


def _indexers(key):
    """A numpy index expression as the extension's indexer tuples."""
    items = key if isinstance(key, tuple) else (key,)
    out = []
    for item in items:
        if item is Ellipsis:
            out.append(("ellipsis",))
        elif isinstance(item, slice):
            bounds = [None if b is None else operator.index(b) for b in (item.start, item.stop, item.step)]
            out.append(("range", *bounds))
        elif isinstance(item, bool) or item is None:
            raise SafetensorError(f"unsupported index {item!r}: integers, slices and ... only")
        else:
            try:
                out.append(("index", operator.index(item)))
            except TypeError:
                raise SafetensorError(f"unsupported index {item!r}: integers, slices and ... only") from None
    return out


class PySafeSlice:
    """A tensor of an open file, read only in the part that is indexed."""

    def __init__(self, handle, name):
        self._handle = handle
        self._name = name
        self._code, self._shape, _ = handle._reader.info(name)

    def get_shape(self):
        return list(self._shape)

    def get_dtype(self):
        return self._code

    @property
    def shape(self):
        return self.get_shape()

    @property
    def dtype(self):
        return self._code

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __getitem__(self, key):
        h = self._handle
        plan = h._live().plan_slice(self._name, _indexers(key))
        return _fill(plan.read_into, plan.dtype, plan.shape, plan.nbytes, h._framework, h._device)


class _Handle:
    """What safe_open and the checkpoint opener share: a Reader and the output framework."""

    def __init__(self, reader, framework, device):
        self._framework = _framework(framework)
        self._device = _device(self._framework, device)
        self._reader = reader

    def _live(self):
        if self._reader.closed:
            raise SafetensorError("the file is closed")
        return self._reader

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self._reader.close()
        return False

    def keys(self):
        """Tensor names, sorted."""
        return self._live().keys()

    def offset_keys(self):
        """Tensor names in the order of their data in the file."""
        return self._live().offset_keys()

    def metadata(self):
        """The `__metadata__` dict, or None."""
        return self._live().metadata()

    def get_tensor(self, name):
        """The whole tensor, copied out of the file (the GIL is released while copying)."""
        reader = self._live()
        code, shape, nbytes = reader.info(name)
        return _fill(lambda out: reader.read_into(name, out), code, shape, nbytes, self._framework, self._device)

    def get_tensors(self):
        """Every tensor, in file order."""
        return {name: self.get_tensor(name) for name in self.offset_keys()}

    def get_slice(self, name):
        """A PySafeSlice: index it (`[0:8, ::2, ...]`) to read part of the tensor."""
        self._live().info(name)  # unknown names fail here, as in the reference
        return PySafeSlice(self, name)


class safe_open(_Handle):
    """Opens a SafeTensors file; tensors are read when asked for.

    Args:
        filename (str or os.PathLike): the file.
        framework (str): "pt"/"torch" or "np"/"numpy" ("tf", "flax", "mlx", "paddle" go through numpy).
        device (str, default "cpu"): torch device for the tensors.
        backend (str, default "mmap"): "mmap", or "pread" to read with pread(2) (network filesystems,
            files that may change).
    """

    def __init__(self, filename, framework, device="cpu", *, backend="mmap"):
        fw = _framework(framework)
        _device(fw, device)
        super().__init__(Reader.open(os.fspath(filename), _backend(backend)), fw, device)


def _backend(name):
    return "mmap" if name == "auto" else name


class _safe_open_handle(_Handle):
    """safe_open over an already open binary file object (anything with fileno() on Linux, else
    anything with read())."""

    def __init__(self, f, framework, device="cpu", *, backend="mmap"):
        fw = _framework(framework)
        _device(fw, device)
        reader = None
        fileno = getattr(f, "fileno", None)
        if fileno is not None:
            try:
                proc_path = f"/proc/self/fd/{fileno()}"
            except (OSError, ValueError):
                proc_path = None
            if proc_path and os.path.exists(proc_path):
                reader = Reader.open(proc_path, _backend(backend))
        if reader is None:
            f.seek(0)
            reader = Reader.from_bytes(f.read())
        super().__init__(reader, fw, device)
