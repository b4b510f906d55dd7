# SPDX-License-Identifier: Apache-2.0
"""What safetensors-cxx adds to the reference API: validation policies, a streaming writer,
MLX (de)quantization to numpy arrays, and sharded checkpoints opened as one namespace."""

import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Literal, Optional, Sequence, Tuple, Type, Union

from . import _dtypes
from ._typing import Metadata, PathLike
from ._open import _Handle, _backend, _is_url, _remote_settings
from ._safetensors_cxx import Reader, SafetensorError, StreamWriter
from ._safetensors_cxx import mlx_dequantize_into as _mlx_dequantize_into
from ._safetensors_cxx import mlx_layers as _mlx_layers
from ._safetensors_cxx import mlx_params as _mlx_params
from ._safetensors_cxx import mlx_quantize_into as _mlx_quantize_into
from ._safetensors_cxx import mlx_scale_dtype as _mlx_scale_dtype
from ._safetensors_cxx import validate as _validate
from ._pipelines import (cast, checksum, convert, dequantize_checkpoint, describe, diff, extract,  # noqa: F401
                         merge, pickle_verdict, quantize_checkpoint, shard)
from ._tp_load import load_sharded  # noqa: F401
from ._version import cxx_version, reference_version

__version__: str = cxx_version  # the C++ library's version, not the distribution's (safetensors.__version__)

__all__ = ["ValidationResult", "validate", "writer", "open_checkpoint", "mlx_layers", "dequantize", "quantize",
           "convert", "cast", "extract", "merge", "shard", "diff", "checksum", "quantize_checkpoint", "dequantize_checkpoint", "load_sharded", "pickle_verdict",
           "SafetensorError", "batch", "reference_version"]


@dataclass(frozen=True)
class ValidationResult:
    """The verdict on a file: `code` is the error's name (e.g. "InvalidOffset"), None when valid."""

    ok: bool
    code: Optional[str] = None
    message: Optional[str] = None
    offset: Optional[int] = None
    tensor: Optional[str] = None
    warnings: List[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return self.ok


def validate(path: PathLike, policy: str = "reference") -> ValidationResult:
    """Checks a file's header against the file, without reading the tensors' data.

    Args:
        path (`str`, `bytes` or `os.PathLike`):
            The file to check.
        policy (`str`, *optional*, defaults to `"reference"`):
            `"reference"` (what the reference accepts), `"strict"` (upload limits, unknown
            fields refused) or `"lenient"` (trailing bytes are a warning, not an error).

    Returns:
        `ValidationResult`: `ok`, and for an invalid file the error's `code`, `message`,
        `offset` and `tensor`; `warnings` in any case. An invalid file never raises.

    Example:

    ```python
    from safetensors.cxx import validate

    result = validate("model.safetensors", policy="strict")
    if not result:
        print(result.code, result.message)
    ```
    """
    return ValidationResult(**_validate(os.fsdecode(path), policy))


def _plan_entries(plan):
    items = plan.items() if isinstance(plan, dict) else ((p[0], p[1:]) for p in plan)
    return [(name, _dtypes.to_code(dtype), [int(d) for d in shape]) for name, (dtype, shape) in items]


def _chunk_bytes(chunk):
    """A bytes-like view of a chunk: bytes, numpy array or CPU torch tensor, as C-ordered bytes."""
    if hasattr(chunk, "__array_interface__") or isinstance(chunk, (bytes, bytearray, memoryview)):
        return chunk
    if type(chunk).__module__.startswith("torch"):
        tensor = chunk.detach().to("cpu").contiguous()
        import torch

        return tensor.reshape(-1).view(torch.uint8).numpy()
    raise TypeError(f"cannot write a chunk of type {type(chunk).__name__}")


class writer:
    """Writes a file whose tensors arrive in chunks, so it may be larger than memory. The header
    is fixed up front from `plan`; each tensor's chunks come in order and tensors may
    interleave. The file appears (fsync, rename) only when the `with` block ends without an
    exception and every tensor is complete; otherwise the target is left untouched.

    Args:
        path (`str`, `bytes` or `os.PathLike`):
            Where to write. An existing file is replaced only on success.
        plan (`Dict[str, Tuple[dtype, Sequence[int]]]` or a list of `(name, dtype, shape)`):
            Every tensor's dtype (`"float32"`, `"F32"`, `torch.bfloat16`, ...) and shape.
        metadata (`Dict[str, str]`, *optional*):
            Text stored as the header's `__metadata__`.
        alignment (`int`, *optional*, defaults to 8):
            Each tensor's data starts at a multiple of this many bytes.

    Returns:
        A context manager with `append(name, chunk)` (bytes, a numpy array or a torch tensor),
        `commit()`, `abort()` and `tensors()`.

    Example:

    ```python
    import numpy as np
    from safetensors.cxx import writer

    with writer("big.safetensors", {"w": ("float32", [1000, 64])}) as w:
        for start in range(0, 1000, 100):
            w.append("w", np.full((100, 64), start, dtype=np.float32))
    ```
    """

    def __init__(self, path: PathLike, plan: Union[Dict[str, Tuple[Any, Sequence[int]]], Iterable[Sequence[Any]]],
                 metadata: Metadata = None, alignment: int = 8) -> None:
        self._writer = StreamWriter(os.fsdecode(path), _plan_entries(plan), metadata, alignment)
        self._open = True

    def append(self, name: str, chunk: Any) -> None:
        """Appends the next bytes of tensor `name` (bytes, numpy array or torch tensor)."""
        self._writer.append(name, _chunk_bytes(chunk))

    def commit(self) -> None:
        """Checks that every tensor is complete, then makes the file appear (fsync + rename)."""
        self._open = False
        self._writer.commit()

    def abort(self) -> None:
        """Drops the temporary file; the target is untouched."""
        self._open = False
        self._writer.abort()

    def tensors(self) -> List[Tuple[str, str, List[int], int]]:
        """(name, dtype, shape, byte size) in file order."""
        return self._writer.tensors()

    def __enter__(self) -> "writer":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc_value: Optional[BaseException],
                 traceback: Any) -> Literal[False]:
        if not self._open:
            return False
        if exc_type is None:
            self.commit()
        else:
            self.abort()
        return False


class open_checkpoint(_Handle):
    """Opens a checkpoint, one file, a sharded index `.json` or a directory, as one namespace
    with `safe_open`'s methods (`keys`, `offset_keys`, `metadata`, `get_tensor`, `get_slice`).
    Shard names must stay inside the index's directory, and the index is checked against the
    shards. `metadata()` is the index's `"metadata"` object for a sharded checkpoint.

    Args:
        path (`str`, `bytes` or `os.PathLike`):
            The file, index or directory, or an `http://`, `https://` or `file://` URL of one (a
            base URL ends in `/`); a URL's shard headers are fetched in parallel.
        framework (`str`, *optional*, defaults to `"np"`):
            `"np"`, `"pt"`, ... as in `safe_open`.
        device (`str`, *optional*, defaults to `"cpu"`):
            Where torch tensors go.
        backend (`str`, *optional*, defaults to `"mmap"`):
            `"mmap"` or `"pread"`, as in `safe_open`.
        policy (`str`, *optional*, defaults to `"reference"`):
            `"reference"`, `"strict"` or `"lenient"`, as in `validate`.
        token, ca_file, insecure, timeout:
            For a URL, as in `safe_open`.

    Returns:
        A context manager over the whole checkpoint.

    Example:

    ```python
    from safetensors.cxx import open_checkpoint

    with open_checkpoint("model.safetensors.index.json", framework="pt") as ck:
        embedding = ck.get_tensor("model.embed_tokens.weight")
    ```
    """

    def __init__(self, path: PathLike, framework: str = "np", device: Any = "cpu", *, backend: str = "mmap",
                 policy: str = "reference", token: Optional[str] = None, ca_file: Optional[PathLike] = None,
                 insecure: bool = False, timeout: Optional[float] = None) -> None:
        settings = _remote_settings(token, ca_file, insecure, timeout) if _is_url(path) else {}
        reader = Reader.open_checkpoint_location(os.fsdecode(path), _backend(backend), policy, settings)
        super().__init__(reader, framework, device)


def mlx_layers(path: PathLike) -> List[Dict[str, Any]]:
    """Lists the quantized MLX layers of a file (`config.json` beside it is read).

    Args:
        path (`str`, `bytes` or `os.PathLike`):
            The file.

    Returns:
        `List[Dict[str, Any]]`: per layer, `path`, `weight`, `scales`, `biases`, `mode`, `bits`,
        `group_size`, `scale_dtype`, `shape` (logical), `source` and `ambiguous`.

    Example:

    ```python
    from safetensors.cxx import mlx_layers

    for layer in mlx_layers("model.safetensors"):
        print(layer["weight"], layer["mode"], layer["bits"])
    ```
    """
    return _mlx_layers(os.fsdecode(path))["layers"]


def dequantize(path: PathLike, weight: Optional[str] = None, dtype: str = "float32") -> Any:
    """Dequantizes MLX layers of a file into numpy arrays, bit-identical to MLX's CPU backend.

    Args:
        path (`str`, `bytes` or `os.PathLike`):
            The file.
        weight (`str`, *optional*):
            One layer's packed weight (`"model.q.weight"`); all quantized layers without it.
        dtype (`str`, *optional*, defaults to `"float32"`):
            `"float32"` or `"float16"`.

    Returns:
        `np.ndarray` for one `weight`, else `Dict[str, np.ndarray]` by weight name.

    Example:

    ```python
    from safetensors.cxx import dequantize

    q = dequantize("model.safetensors", "model.layers.0.q_proj.weight")
    ```
    """
    import numpy as np

    code = _dtypes.to_code(dtype)
    out_dtype = _dtypes.numpy_dtype(code)
    path = os.fsdecode(path)
    layers = {layer["weight"]: layer for layer in mlx_layers(path)}

    def one(name):
        layer = layers.get(name)
        if layer is None:
            raise SafetensorError(f"'{name}' is not the weight of a quantized layer")
        out = np.empty(layer["shape"], dtype=out_dtype)
        _mlx_dequantize_into(path, name, code, out)
        return out

    if weight is not None:
        return one(weight)
    return {name: one(name) for name in layers}


def quantize(array: Any, mode: str = "affine", bits: Optional[int] = None,
             group_size: Optional[int] = None) -> Dict[str, Any]:
    """Quantizes a float32/float16 numpy array along its last axis as MLX's `mx.quantize` does
    on the CPU.

    Args:
        array (`np.ndarray`):
            At least one axis; the last is a multiple of the group size.
        mode (`str`, *optional*, defaults to `"affine"`):
            `"affine"`, `"mxfp4"`, `"mxfp8"` or `"nvfp4"`.
        bits (`int`, *optional*):
            Bits per value (the mode's default without it).
        group_size (`int`, *optional*):
            Values per scale (the mode's default without it).

    Returns:
        `Dict[str, Any]`: `"weight"` (uint32 codes, `[..., K * bits / 32]`), `"scales"`
        (`[..., K / group_size]`: the input dtype for affine, uint8 codes otherwise) and
        `"biases"` (like `scales`, or None for the fp modes).

    Example:

    ```python
    import numpy as np
    from safetensors.cxx import quantize

    packed = quantize(np.random.rand(64, 128).astype(np.float32), bits=4, group_size=64)
    ```
    """
    import numpy as np

    array = np.ascontiguousarray(array)
    if array.ndim < 1:
        raise SafetensorError("quantize needs at least one axis")
    code = _dtypes.to_code(array.dtype.name)
    bits, group_size = _mlx_params(mode, bits or 0, group_size or 0)
    cols = array.shape[-1]
    lead = array.shape[:-1]
    if cols % group_size:
        raise SafetensorError(f"the last axis ({cols}) is not a multiple of the group size {group_size}")
    rows = int(np.prod(lead)) if lead else 1
    scale_dtype = _dtypes.numpy_dtype(_mlx_scale_dtype(mode, code))
    weight = np.empty(lead + (cols * bits // 32,), dtype=np.uint32)
    scales = np.empty(lead + (cols // group_size,), dtype=scale_dtype)
    biases = np.empty_like(scales) if mode == "affine" else None
    _mlx_quantize_into(code, array, rows, cols, mode, bits, group_size, weight, scales, biases)
    return {"weight": weight, "scales": scales, "biases": biases}


def batch(command: str, inputs: Union[PathLike, Iterable[PathLike]], **options: Any) -> Any:
    """Runs one command on many checkpoints as Dask tasks, one task per file (per shard of a
    sharded checkpoint), each in C++ without the GIL (docs/batch.md). Needs dask.distributed.

    Args:
        command (`str`):
            `"validate"`, `"convert"`, `"checksum"` or `"inspect"`.
        inputs (`str` or `os.PathLike`, or several):
            Files, directories (walked), globs, URLs and `"@manifest.txt"` lists.
        **options:
            Those of `safetensors.batch.batch`: `scheduler` (`"tcp://host:8786"`; a LocalCluster
            without it), `out` and `to` for `convert`, `report` (a JSON-lines file), `policy`,
            the conversion options, `force`, `retries`, ...

    Returns:
        `safetensors.batch.BatchResult`: one row per input (`input`, `status`, `code`,
        `message`, `seconds`, `bytes`, `tensors`, `parameters`, `output`), the counts and
        `exit_code` (0 all ok, 1 some invalid).

    Example:

    ```python
    from safetensors.cxx import batch

    result = batch("validate", ["models/"], report="verdicts.jsonl")
    ```
    """
    from .batch import batch as _batch

    return _batch(command, inputs, **options)
