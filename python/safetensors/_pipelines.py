# SPDX-License-Identifier: Apache-2.0
"""The library's pipelines from Python: convert between formats, and the rewrites that are
conversions with options (cast, extract, merge, shard), MLX quantization of whole
checkpoints, diff and checksum. Each runs in C++
without the GIL; `progress(done, total)` is called with byte counts as it goes, and an
exception from it, or Ctrl-C, stops the run with nothing left at the output."""

import os
from typing import Any, Callable, Dict, Iterable, Optional, Union

from ._typing import PathLike

from ._safetensors_cxx import checksum as _checksum
from ._safetensors_cxx import convert as _convert
from ._safetensors_cxx import dequantize_checkpoint as _dequantize_checkpoint
from ._safetensors_cxx import diff as _diff
from ._safetensors_cxx import quantize_checkpoint as _quantize_checkpoint


def _paths(value):
    """One path or several, as strings."""
    if isinstance(value, (str, bytes, os.PathLike)):
        return [os.fsdecode(value)]
    return [os.fsdecode(v) for v in value]


def _patterns(value):
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


def _run(inputs, output, progress, **options):
    return _convert(_paths(inputs), os.fsdecode(output), options, progress)


# The rewrites read SafeTensors only: another format is named ("this is a GGUF file, not SafeTensors").
_SAFETENSORS_IN = {"from": "safetensors"}


Progress = Optional[Callable[[int, int], Any]]
Patterns = Union[None, str, Iterable[str]]


def convert(input: Union[PathLike, Iterable[PathLike]], output: PathLike, *, to: Optional[str] = None,
            dtype: Optional[str] = None, key: Optional[str] = None, shared: str = "keep", strict: bool = False,
            compress: bool = False, hash_long_names: bool = False, only: Patterns = None, exclude: Patterns = None,
            progress: Progress = None) -> Dict[str, Any]:
    """Converts a checkpoint between formats without running any code from it: SafeTensors (a
    file or a sharded directory/index), PyTorch .pt/.bin (zip or legacy; a sharded directory),
    NumPy .npy/.npz and GGUF in; SafeTensors (a file, or a sharded directory when `output`
    ends in '/'), .npz, .npy and GGUF out. The format comes from `output`'s name unless `to`
    ("safetensors", "sharded", "npz", "npy", "gguf") is given; `dtype` ("F32", "F16", "BF16",
    ...) casts floating tensors; `only`/`exclude` (glob patterns) choose the tensors written.
    Returns a dict: input_format, output_format, tensors, parameters, bytes, notes, warnings, files."""
    return _run(input, output, progress, to=to, dtype=dtype, key=key, shared=shared, strict=strict,
                compress=compress, hash_long_names=hash_long_names, only=_patterns(only),
                exclude=_patterns(exclude))


def cast(input: PathLike, output: PathLike, dtype: str, *, only: Patterns = None, exclude: Patterns = None,
         saturate: bool = False, progress: Progress = None) -> Dict[str, Any]:
    """Writes `input` (a SafeTensors file) to `output` with its floating tensors (those matching
    `only` and not `exclude`, all by default) cast to `dtype` (F64, F32, F16, BF16, F8_*, F6_*,
    F4; round to nearest even); other tensors are copied. `saturate`: F8 values out of range
    become the largest finite value instead of NaN/Inf. `output` may be `input`: it is replaced
    atomically once complete."""
    return _run(input, output, progress, to="safetensors", dtype=dtype, cast_only=_patterns(only),
                cast_exclude=_patterns(exclude), saturate=saturate, replace_input=True, **_SAFETENSORS_IN)


def extract(input: PathLike, output: PathLike, *, only: Patterns = None, exclude: Patterns = None,
            rename: Optional[Dict[str, str]] = None, set_metadata: Optional[Dict[str, str]] = None,
            remove_metadata: Patterns = None, alignment: int = 8, progress: Progress = None) -> Dict[str, Any]:
    """Writes the tensors of `input` matching `only` and not `exclude` to `output`, renamed by
    `rename` ({"old": "new"}, or {"model.*": "base.*"} for a prefix), with `__metadata__` keys
    set and removed. A pattern or rename that matches nothing is an error. `output` may be
    `input`: it is replaced atomically once complete."""
    return _run(input, output, progress, to="safetensors", only=_patterns(only), exclude=_patterns(exclude),
                rename=list((rename or {}).items()), set_metadata=set_metadata,
                remove_metadata=_patterns(remove_metadata), alignment=alignment, replace_input=True,
                **_SAFETENSORS_IN)


def merge(input: PathLike, output: PathLike, *, progress: Progress = None) -> Dict[str, Any]:
    """Joins a sharded checkpoint (its directory or index) into the one file `output`."""
    return _run(input, output, progress, to="safetensors", **_SAFETENSORS_IN)


def shard(inputs: Union[PathLike, Iterable[PathLike]], output_dir: PathLike, *, max_shard_size: Union[int, str] = "5GB",
          prefix: str = "model", progress: Progress = None) -> Dict[str, Any]:
    """Splits files or checkpoints (one path or a list) into `output_dir`: shards of at most
    `max_shard_size` (bytes, or "5GB", "500MB", "2GiB") named "<prefix>-00001-of-00003.safetensors",
    plus "<prefix>.safetensors.index.json" when there are several. `__metadata__` is what the
    inputs share. The dict returned lists the files written under "files"."""
    return _run(inputs, output_dir, progress, to="sharded", max_shard_size=str(max_shard_size), prefix=prefix,
                **_SAFETENSORS_IN)


def diff(a: PathLike, b: PathLike, *, rtol: float = 0.0, atol: float = 0.0, ignore_dtype: bool = False,
         progress: Progress = None) -> Dict[str, Any]:
    """Compares two SafeTensors files: names, dtypes, shapes, `__metadata__` and values, which
    match when |a - b| <= atol + rtol * |b| (NaN equals NaN, as numpy.allclose(equal_nan=True)).
    Returns a dict: equal, only_in_a, only_in_b, metadata [{key, a, b}], tensors [{name, equal,
    dtype_a, dtype_b, shape_a, shape_b, compared, values, mismatched, max_abs, max_rel,
    first_mismatch: (index, a, b) or None}]."""
    return _diff(os.fsdecode(a), os.fsdecode(b), float(rtol), float(atol), ignore_dtype, progress)


def checksum(path: PathLike, *, per_tensor: bool = False, progress: Progress = None) -> Dict[str, Any]:
    """SHA-256 of a file as sha256sum computes it (any content; "-" is standard input), and with
    `per_tensor` of each tensor's data bytes, in one pass. Returns {"sha256": hex, "bytes": n,
    "tensors": {name: hex} in file order}."""
    return _checksum(os.fsdecode(path), per_tensor, progress)


def quantize_checkpoint(input: PathLike, output: PathLike, *, mode: str = "affine", bits: Optional[int] = None,
                        group_size: Optional[int] = None, only: Patterns = None, exclude: Patterns = None,
                        config_out: Optional[PathLike] = None, max_shard_size: Union[int, str] = "5GB",
                        progress: Progress = None) -> Dict[str, Any]:
    """Quantizes the float `*.weight` tensors (rank >= 2; those matching `only` and not `exclude`)
    of a file or sharded checkpoint into MLX's layout (P.weight as uint32 codes, P.scales,
    P.biases), bit-identical to MLX's CPU quantizer, streamed in row chunks. A sharded input
    gives a checkpoint directory. `config_out` writes an mlx-lm config fragment. Returns a dict:
    layers, tensors, sharded, warnings."""
    return _quantize_checkpoint(os.fsdecode(input), os.fsdecode(output), mode, bits or 0, group_size or 0,
                                _patterns(only) or [], _patterns(exclude) or [],
                                os.fsdecode(config_out) if config_out else "", str(max_shard_size), progress)


def dequantize_checkpoint(input: PathLike, output: PathLike, *, dtype: Optional[str] = None,
                          max_shard_size: Union[int, str] = "5GB", progress: Progress = None) -> Dict[str, Any]:
    """Turns every quantized MLX layer of a file or sharded checkpoint into a plain P.weight of
    `dtype` ("F32", "F16", "BF16"; default MLX's choice) and copies the rest, streamed in row
    chunks (config.json beside the input is read). Returns a dict: layers, tensors, sharded, warnings."""
    return _dequantize_checkpoint(os.fsdecode(input), os.fsdecode(output), dtype, str(max_shard_size), progress)
