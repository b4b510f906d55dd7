# SPDX-License-Identifier: Apache-2.0
"""safe_open: lazy access to one file's tensors as numpy arrays or torch tensors.

With the mmap backend a file is mapped once, privately (copy-on-write), and every tensor
or array handed out is a view of that mapping, kept alive by the tensors themselves: no
bytes are copied at load time and pages are read when first touched. Writes to a tensor
copy the page and never reach the file. Tensors whose offset is not a multiple of their
element size, and big-endian hosts, get a copy instead; so does the pread backend.
"""

import operator
import os
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple, TypeVar

from . import _dtypes
from ._safetensors_cxx import HeaderReader, Reader, SafetensorError, is_url
from ._typing import PathLike

_FRAMEWORKS = {
    "pt": "pt", "torch": "pt", "pytorch": "pt",
    "np": "np", "numpy": "np",
    "tf": "tf", "tensorflow": "tf",
    "jax": "flax", "flax": "flax",
    "mlx": "mlx",
    "paddle": "paddle",
}
# How the reference names a framework in its messages.
_FRAMEWORK_NAMES = {"pt": "pytorch", "np": "numpy", "tf": "tensorflow", "flax": "flax", "mlx": "mlx",
                    "paddle": "paddle"}
_DEVICE_KINDS = ("cpu", "cuda", "musa", "mps", "npu", "xpu", "xla", "mlu", "hpu", "meta")
_BIG_ENDIAN = sys.byteorder == "big"
_SUB_BYTE = ("F4", "F6_E2M3", "F6_E3M2")  # several values per byte: always copied


def _framework(name):
    found = _FRAMEWORKS.get(name) if isinstance(name, str) else None
    if found is None:
        raise SafetensorError(f"framework {name} is invalid")
    return found


def _device_name(device):
    """A device as the reference accepts it (a name, "kind:index", an index or a torch.device),
    as a string; anything else raises SafetensorError("device ... is invalid")."""
    if device is None:
        return "cpu"
    if isinstance(device, bool):
        raise SafetensorError(f"device {device!r} is invalid")
    if isinstance(device, int):
        if device < 0:
            raise SafetensorError(f"device {device!r} is invalid")
        return device
    if type(device).__name__ == "device" and type(device).__module__.startswith("torch"):
        return str(device)
    if not isinstance(device, str):
        raise SafetensorError(f"device {device!r} is invalid")
    kind, sep, index = device.partition(":")
    if kind not in _DEVICE_KINDS or (sep and not index.isdigit()):
        raise SafetensorError(f"device {device} is invalid")
    if kind == "mps" and sep and index != "0":
        raise SafetensorError(f"device {device} is invalid: only mps or mps:0 is supported")
    return device


def _device(framework, device):
    device = _device_name(device)
    if framework not in ("pt", "paddle") and device != "cpu":
        raise SafetensorError(f"Device {device} is not supported for framework {_FRAMEWORK_NAMES[framework]}")
    return device


def _backend(name, mmap=True):
    """The backend a caller asked for; `mmap=False` (the reference's opt-out) means "pread"."""
    if not mmap and name in ("auto", "mmap"):
        return "pread"
    if name == "auto":
        return "mmap"
    if name not in ("mmap", "pread"):
        shown = '"' + str(name).replace("\\", "\\\\").replace('"', '\\"') + '"'
        raise SafetensorError(f'backend {shown} is invalid (expected one of: "mmap", "pread")')
    return name


def _is_url(filename):
    """The library's rule (`scheme://...`), so Python and the CLI read a name alike."""
    return isinstance(filename, str) and is_url(filename)


def _remote_settings(token=None, ca_file=None, insecure=False, timeout=None, connections=None):
    """The remote options (the CLI's --token, --ca-file, --insecure, --timeout) as the extension
    takes them. One parser in the extension checks them for every entry point and, without a
    token, takes $SAFETENSORS_TOKEN then $HF_TOKEN, as the CLI does (python/src/remote_options.h);
    the library sends it to the URL's own host only and never puts it in a message."""
    if insecure:
        import warnings

        warnings.warn("insecure=True: TLS certificates and host names are not verified", stacklevel=3)
    settings = {"token": token, "ca_file": None if ca_file is None else os.fsdecode(ca_file), "insecure": insecure,
                "timeout": timeout}
    if connections is not None:
        settings["connections"] = connections
    return settings


def _check_name(name):
    if not isinstance(name, str):
        raise TypeError(f"argument 'name': '{type(name).__name__}' object cannot be converted to 'PyString'")
    return name


def _torch_shape(code, shape):
    if code == "F4" and shape:
        return list(shape[:-1]) + [shape[-1] // 2]  # torch stores two F4 values per element
    return shape


def _to_device(tensor, device):
    if device == "cpu":
        return tensor
    if isinstance(device, int):
        import torch

        device = torch.device("cuda", device) if torch.cuda.is_available() else device
    return tensor.to(device)


def _fill(read_into, code, shape, nbytes, framework, device):
    """A new array/tensor of `code` and `shape` whose bytes `read_into(buffer)` copies in."""
    if framework == "pt":
        import torch

        dtype = _dtypes.torch_dtype(code)
        shape = _torch_shape(code, shape)
        if nbytes == 0:
            out = torch.empty(shape, dtype=dtype)
        else:
            # numpy's allocator asks for huge pages on large buffers: far fewer page faults while
            # copying than torch.empty's. The tensor shares (and keeps alive) the array's memory.
            import numpy as np

            raw = np.empty(nbytes, dtype=np.uint8)
            read_into(raw)
            out = torch.from_numpy(raw).view(dtype).reshape(shape)
            if _BIG_ENDIAN:
                out = _byteswapped_torch(out)
        return _to_device(out, device)
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


def _render_key(items):
    """An index expression as the reference prints it in slicing errors: [2:, 20]."""
    parts = []
    for item in items:
        if item is Ellipsis:
            parts.append("...")
        elif isinstance(item, slice):
            text = ("" if item.start is None else str(item.start)) + ":" + ("" if item.stop is None else str(item.stop))
            if item.step is not None:
                text += f":{item.step}"
            parts.append(text)
        else:
            parts.append(str(item))
    return "[" + ", ".join(parts) + "]"


def _error(message, code=None, tensor=None, path=None):
    """A SafetensorError raised here, with the attributes the extension's errors carry."""
    e = SafetensorError(message)
    e.code, e.offset, e.tensor, e.path = code, None, tensor, path
    return e


def _slicing_error(items, shape, cause):
    return _error(f"Error during slicing {_render_key(items)} with shape {list(shape)}: {cause}", "InvalidSlice")


def _indexers(key, shape):
    """A numpy index expression as the extension's indexer tuples, with upstream main's checks
    and messages for integers and slice bounds past the end and for list indices."""
    if isinstance(key, list):
        if key:
            raise _error("Non empty lists are not implemented", "InvalidSlice")
        key = slice(0, 0)  # an empty list selects nothing along the first dimension
    items = key if isinstance(key, tuple) else (key,)
    out = []
    dim = 0
    for position, item in enumerate(items):
        if item is Ellipsis:
            out.append(("ellipsis",))
            dim = max(dim, len(shape) - (len(items) - 1 - position))  # the rest index the last dimensions
            continue
        if isinstance(item, slice):
            try:
                bounds = [None if b is None else operator.index(b) for b in (item.start, item.stop, item.step)]
            except TypeError:
                raise TypeError(f"slice indices must be integers or None, got {item!r}") from None
            start, stop, step = bounds
            if dim < len(shape) and (step is None or step > 0):
                # Upstream main refuses bounds past the end (numpy clamps them): a start at or
                # past the size, then a stop past it, reported as the last index asked for.
                size = shape[dim]
                asked = start if start is not None and start >= size else None
                if asked is None and stop is not None and stop > size:
                    asked = stop - 1
                if asked is not None:
                    raise _slicing_error(items, shape,
                                         f"index {asked} out of bounds for tensor dimension #{dim} of size {size}")
            out.append(("range", *bounds))
        elif isinstance(item, bool) or item is None:
            raise SafetensorError(f"unsupported index {item!r}: integers, slices and ... only")
        else:
            try:
                index = operator.index(item)
            except TypeError:
                raise SafetensorError(f"unsupported index {item!r}: integers, slices and ... only") from None
            if dim < len(shape):
                size = shape[dim]
                if index < 0 and index + size < 0:
                    raise _error(f"Invalid index {index} for dimension {dim} of size {size}", "InvalidSlice")
                if index >= size:
                    raise _slicing_error(items, shape,
                                         f"index {index} out of bounds for tensor dimension #{dim} of size {size}")
            out.append(("index", index))
        dim += 1
    return out, items


class PySafeSlice:
    """A tensor of an open file, read only in the part that is indexed."""

    def __init__(self, handle, name):
        self._handle = handle
        self._name = name
        self._code, self._shape, _ = handle._reader.info(name)

    def get_shape(self) -> List[int]:
        """The tensor's shape (of the whole tensor, not of a slice)."""
        return list(self._shape)

    def get_dtype(self) -> str:
        """The tensor's dtype as the file names it: "F32", "BF16", "I64", ..."""
        return self._code

    @property
    def shape(self) -> List[int]:
        return self.get_shape()

    @property
    def dtype(self) -> str:
        return self._code

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __getitem__(self, key: Any) -> Any:
        """Reads the part of the tensor that `key` selects: integers, slices (steps too) and
        `...`, as numpy indexes. Only the bytes selected are read; a contiguous selection of a
        mapped file is a view. An index or slice bound past the end raises SafetensorError."""
        h = self._handle
        reader = h._live()
        indexers, items = _indexers(key, self._shape)
        try:
            plan = reader.plan_slice(self._name, indexers)
        except SafetensorError as e:
            if getattr(e, "code", None) == "InvalidSlice":
                cause = str(e).split(": ", 1)[-1] if str(e).startswith("InvalidSlice") else str(e)
                wrapped = _slicing_error(items, self._shape, cause)
                for attr in ("code", "offset", "tensor", "path"):
                    setattr(wrapped, attr, getattr(e, attr, None))
                raise wrapped from None
            raise
        offset = plan.offset
        if offset is not None:
            view = h._view(plan.dtype, plan.shape, plan.nbytes, offset)
            if view is not None:
                return view
        return _fill(plan.read_into, plan.dtype, plan.shape, plan.nbytes, h._framework, h._device)


_Self = TypeVar("_Self", bound="_Handle")


class _Handle:
    """What safe_open and the checkpoint opener share: a Reader and the output framework."""

    def __init__(self, reader, framework, device):
        self._framework = _framework(framework)
        self._device = _device(self._framework, device)
        self._reader = reader
        # The private mapping tensors view (None: every tensor is copied), and the framework's
        # uint8 view of all of it, made on first use.
        self._mapping = None if _BIG_ENDIAN else reader.mapping()
        self._base = None

    def _live(self):
        if self._reader.closed:
            raise SafetensorError("the file is closed")
        return self._reader

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> bool:
        self._reader.close()
        self._mapping = self._base = None  # loaded tensors keep the mapping alive
        return False

    def _view(self, code, shape, nbytes, offset):
        """A tensor/array viewing the mapping at `offset`, or None when it must be copied (no
        mapping, an empty or sub-byte tensor, an offset not a multiple of the element size)."""
        if self._mapping is None or nbytes == 0 or code in _SUB_BYTE:
            return None
        if self._framework == "pt":
            import torch

            dtype = _dtypes.torch_dtype(code)
            if offset % _dtypes.torch_itemsize(dtype):
                return None
            if self._base is None:
                self._base = torch.frombuffer(self._mapping, dtype=torch.uint8)
            tensor = self._base[offset : offset + nbytes].view(dtype).view(shape)
            return _to_device(tensor, self._device)
        import numpy as np

        dtype = _dtypes.numpy_dtype(code)
        if offset % dtype.itemsize:
            return None
        if self._base is None:
            self._base = np.frombuffer(self._mapping, dtype=np.uint8)
        array = self._base[offset : offset + nbytes].view(dtype).reshape(shape)
        return _convert_numpy(array, self._framework)

    def keys(self) -> List[str]:
        """Tensor names, sorted."""
        return self._live().keys()

    def offset_keys(self) -> List[str]:
        """Tensor names in the order of their data in the file."""
        return self._live().offset_keys()

    def metadata(self) -> Optional[Dict[str, str]]:
        """The `__metadata__` dict, or None."""
        return self._live().metadata()

    def get_tensor(self, name: str) -> Any:
        """The whole tensor: a view of the file's private mapping (mmap backend), else a copy
        read with the GIL released."""
        reader = self._live()
        code, shape, nbytes, offset = reader.locate(_check_name(name))
        view = self._view(code, shape, nbytes, offset)
        if view is not None:
            return view
        return _fill(lambda out: reader.read_into(name, out), code, shape, nbytes, self._framework, self._device)

    def get_tensors(self) -> Dict[str, Any]:
        """Every tensor, in file order."""
        return {name: self.get_tensor(name) for name in self.offset_keys()}

    def get_slice(self, name: str) -> PySafeSlice:
        """A PySafeSlice: index it (`[0:8, ::2, ...]`) to read part of the tensor."""
        self._live().info(_check_name(name))  # unknown names fail here, as in the reference
        return PySafeSlice(self, name)

    def get_strided_slice(self, name: str, dim: int, intervals: Sequence[Tuple[int, int]]) -> Any:
        """The pieces `[a:b)` of tensor `name` along `dim`, one per interval in the order given,
        concatenated along `dim`: torch.cat of the get_slice pieces (overlaps repeat data).
        Intervals must be non-empty, increasing and within the dimension."""
        reader = self._live()
        _, shape, _ = reader.info(_check_name(name))
        if isinstance(dim, bool) or not isinstance(dim, int) or not -len(shape) <= dim < len(shape):
            raise SafetensorError(f"dim {dim!r} is invalid for tensor {name} of rank {len(shape)}")
        dim %= len(shape)
        intervals = [tuple(i) for i in intervals]
        if not intervals:
            raise SafetensorError("intervals is empty")
        for a, b in intervals:
            if not 0 <= a < b <= shape[dim]:
                raise SafetensorError(f"interval ({a}, {b}) is invalid for dimension {dim} of size {shape[dim]}")
        pieces = [self.get_slice(name)[(slice(None),) * dim + (slice(a, b),)] for a, b in intervals]
        if self._framework == "pt":
            import torch

            return torch.cat(pieces, dim=dim)
        import numpy as np

        return _convert_numpy(np.concatenate([np.asarray(p) for p in pieces], axis=dim), self._framework)


class safe_open(_Handle):
    """Opens a SafeTensors file and reads its tensors only when asked for.

    Args:
        filename (`str`, `bytes` or `os.PathLike`):
            The file, or an `http://`, `https://` or `file://` URL of one (read with HTTP Range
            requests: the header, then only the tensors asked for). A sharded index `.json`, a
            checkpoint directory, a base URL ending in `/` or a hub repository URL
            (`.../ORG/REPO/resolve/REV` or `.../tree/REV`) opens the whole checkpoint, as
            `safetensors.cxx.open_checkpoint` does.
        framework (`str`):
            What tensors come back as: `"pt"` (torch), `"np"` (numpy), or `"tf"`, `"flax"`,
            `"mlx"`, `"paddle"` (through numpy arrays).
        device (`str`, `int` or `torch.device`, *optional*, defaults to `"cpu"`):
            Where torch (and paddle) tensors go: `"cpu"`, `"cuda:0"`, `0`, `"mps"`, ...
        backend (`str`, *optional*, defaults to `"mmap"`):
            `"mmap"`: tensors view a private copy-on-write mapping of the file. `"pread"`: each
            tensor is a copy read with `pread(2)` (network filesystems, files that may change).
        mmap (`bool`, *optional*, defaults to `True`):
            `False` is the same as `backend="pread"`.
        token (`str`, *optional*):
            For a URL: the bearer token, sent to the URL's host only (default
            `$SAFETENSORS_TOKEN`, then `$HF_TOKEN`; `""` sends none).
        ca_file (`str` or `os.PathLike`, *optional*):
            For a URL: PEM certificates to trust.
        insecure (`bool`, *optional*, defaults to `False`):
            For a URL: no TLS verification (a warning says so).
        timeout (`float`, *optional*):
            For a URL: seconds to wait for the server.

    Returns:
        A context manager whose `keys()`, `offset_keys()`, `metadata()`, `get_tensor(name)`,
        `get_tensors()`, `get_slice(name)` and `get_strided_slice(name, dim, intervals)` read
        the file; leaving the `with` block closes it (tensors already read stay valid).

    Example:

    ```python
    from safetensors import safe_open

    with safe_open("model.safetensors", framework="pt", device="cpu") as f:
        fmt = (f.metadata() or {}).get("format")
        first_rows = f.get_slice("embedding")[:128]
        tensors = {name: f.get_tensor(name) for name in f.keys()}
    ```
    """

    def __init__(self, filename: PathLike, framework: str, device: Any = "cpu", *, backend: str = "mmap",
                 mmap: bool = True, token: Optional[str] = None, ca_file: Optional[PathLike] = None,
                 insecure: bool = False, timeout: Optional[float] = None) -> None:
        fw = _framework(framework)
        _device(fw, device)
        backend = _backend(backend, mmap)
        # The library decides what the name is (a path, a file:// or http(s):// URL): one door.
        settings = _remote_settings(token, ca_file, insecure, timeout) if _is_url(filename) else {}
        reader = Reader.open_location(os.fsdecode(filename), backend, "reference", settings)
        super().__init__(reader, fw, device)


class _StreamSlice:
    """A planned slice of a file object: the ranges to read into the output."""

    def __init__(self, stream, plan):
        self._stream = stream
        self.dtype, self.shape, self.nbytes, self._ranges = plan
        self.offset = None  # nothing to view: always read

    def read_into(self, out):
        view = memoryview(out).cast("B")
        done = 0
        for offset, length in self._ranges:
            self._stream.read_at(offset, view[done : done + length])
            done += length


class _StreamReader:
    """The Reader interface over a binary file object that has no usable descriptor (fsspec,
    BytesIO, ...): the header is read and validated once, then only the bytes of the tensors
    and slices asked for are read, with seek() and readinto()/read()."""

    def __init__(self, f):
        import threading

        self._f = f
        self._lock = threading.Lock()
        f.seek(0, os.SEEK_END)
        size = f.tell()
        # 512 bytes: the length, often the whole header, and what a file that is not
        # SafeTensors is ("this is a GGUF file, not SafeTensors"), as for paths and URLs.
        prefix = self._read(0, min(512, size))
        n = HeaderReader.header_length(prefix, size)
        json = prefix[8 : 8 + n]
        if len(json) < n:  # the rest of the header, past the prefix
            json += self._read(len(prefix), 8 + n - len(prefix))
        self._header = HeaderReader.parse(json, size)

    def _read(self, offset, n):
        out = bytearray(n)
        self.read_at(offset, memoryview(out))
        return bytes(out)

    def read_at(self, offset, view):
        with self._lock:
            self._f.seek(offset)
            done = 0
            readinto = getattr(self._f, "readinto", None)
            while done < len(view):
                if readinto is not None:
                    got = readinto(view[done:])
                else:
                    chunk = self._f.read(len(view) - done)
                    got = len(chunk)
                    view[done : done + got] = chunk
                if not got:
                    raise _error(f"unexpected end of file: {len(view) - done} bytes missing at byte {offset + done}",
                                 "IoError")
                done += got

    @property
    def closed(self):
        return self._header.closed

    def close(self):
        self._header.close()

    def mapping(self):
        return None

    def keys(self):
        return self._header.keys()

    def offset_keys(self) -> List[str]:
        return self._header.offset_keys()

    def metadata(self) -> Optional[Dict[str, str]]:
        return self._header.metadata()

    def info(self, name):
        return self._header.info(name)

    def locate(self, name):
        return self._header.locate(name)

    def read_into(self, name, out):
        _, _, nbytes, offset = self._header.locate(name)
        self.read_at(offset, memoryview(out).cast("B")[:nbytes])

    def plan_slice(self, name, indexers):
        return _StreamSlice(self, self._header.plan_slice(name, indexers))


def _descriptor_path(f):
    """/proc/self/fd/N for a file object over a regular file (Linux), else None."""
    fileno = getattr(f, "fileno", None)
    if fileno is None:
        return None
    try:
        path = f"/proc/self/fd/{fileno()}"
        return path if os.path.isfile(path) else None
    except (OSError, ValueError, AttributeError):
        return None


class _safe_open_handle(_Handle):
    """safe_open over an already open binary file object. A file object over a regular file
    (fsspec's local files too) is mapped through its descriptor like safe_open; any other
    (fsspec memory/HTTP files, BytesIO) has its header read once and then only the bytes of
    the tensors and slices asked for."""

    def __init__(self, f, framework, device="cpu", *, backend="mmap", mmap=True):
        fw = _framework(framework)
        _device(fw, device)
        path = _descriptor_path(f)
        reader = Reader.open(path, _backend(backend, mmap)) if path else _StreamReader(f)
        super().__init__(reader, fw, device)
