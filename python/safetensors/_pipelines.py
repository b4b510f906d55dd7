# SPDX-License-Identifier: Apache-2.0
"""The library's pipelines from Python: convert between formats, and the rewrites that are
conversions with options (cast, extract, merge, shard), MLX quantization of whole
checkpoints, diff and checksum. Each runs in C++
without the GIL; `progress(done, total)` is called with byte counts as it goes, and an
exception from it, or Ctrl-C, stops the run with nothing left at the output."""

import os

from ._safetensors_cxx import checksum as _checksum
from ._safetensors_cxx import convert as _convert
from ._safetensors_cxx import dequantize_checkpoint as _dequantize_checkpoint
from ._safetensors_cxx import diff as _diff
from ._safetensors_cxx import pickle_verdict as _pickle_verdict
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


def _size(value):
    """A byte size for the C++ side: "" (the default) for None, else its text ("20GB" or bytes)."""
    return "" if value is None else str(value)


# Every writing function takes `max_output_size`: the most tensor bytes the output may hold
# (bytes, or "20GB", "16GiB"). A plan above it is refused before anything is written; by default
# 64 times the input's size, at least 1 GiB (docs/reliability.md, "Output budget").


# The rewrites read SafeTensors only: another format is named ("this is a GGUF file, not SafeTensors").
_SAFETENSORS_IN = {"from": "safetensors"}


def convert(input, output, *, to=None, dtype=None, key=None, shared="keep", strict=False, compress=False,
            hash_long_names=False, only=None, exclude=None, max_output_size=None, progress=None):
    """Converts a checkpoint between formats without running any code from it: SafeTensors (a
    file or a sharded directory/index), PyTorch .pt/.bin (zip or legacy; a sharded directory),
    NumPy .npy/.npz and GGUF in; SafeTensors (a file, or a sharded directory when `output`
    ends in '/'), .npz, .npy and GGUF out. The format comes from `output`'s name unless `to`
    ("safetensors", "sharded", "npz", "npy", "gguf") is given; `dtype` ("F32", "F16", "BF16",
    ...) casts floating tensors; `only`/`exclude` (glob patterns) choose the tensors written.
    Returns a dict: input_format, output_format, tensors, parameters, bytes, notes, warnings, files."""
    return _run(input, output, progress, to=to, dtype=dtype, key=key, shared=shared, strict=strict,
                compress=compress, hash_long_names=hash_long_names, only=_patterns(only),
                exclude=_patterns(exclude), max_output_size=max_output_size)


def pickle_verdict(path):
    """What a PyTorch checkpoint's pickles name outside the allowlist, read without running
    anything, also for a file `convert` refuses. A dict: `kind` ("allowlisted", "inert objects"
    or "runs code"), `globals` (each: name, runs_code, pickle, offset, opcode, times_named,
    calls, first_call, first_call_offset) and `refusal` (None, or the code, message and offset
    of the error `convert` gives: "CodeExecution" for a file that tries to run code)."""
    return _pickle_verdict(os.fsdecode(path))


def cast(input, output, dtype, *, only=None, exclude=None, saturate=False, max_output_size=None, progress=None):
    """Writes `input` (a SafeTensors file) to `output` with its floating tensors (those matching
    `only` and not `exclude`, all by default) cast to `dtype` (F64, F32, F16, BF16, F8_*, F6_*,
    F4; round to nearest even); other tensors are copied. `saturate`: F8 values out of range
    become the largest finite value instead of NaN/Inf. `output` may be `input`: it is replaced
    atomically once complete."""
    return _run(input, output, progress, to="safetensors", dtype=dtype, cast_only=_patterns(only),
                cast_exclude=_patterns(exclude), saturate=saturate, replace_input=True,
                max_output_size=max_output_size, **_SAFETENSORS_IN)


def extract(input, output, *, only=None, exclude=None, rename=None, set_metadata=None, remove_metadata=None,
            alignment=8, max_output_size=None, progress=None):
    """Writes the tensors of `input` matching `only` and not `exclude` to `output`, renamed by
    `rename` ({"old": "new"}, or {"model.*": "base.*"} for a prefix), with `__metadata__` keys
    set and removed. A pattern or rename that matches nothing is an error. `output` may be
    `input`: it is replaced atomically once complete."""
    return _run(input, output, progress, to="safetensors", only=_patterns(only), exclude=_patterns(exclude),
                rename=list((rename or {}).items()), set_metadata=set_metadata,
                remove_metadata=_patterns(remove_metadata), alignment=alignment, replace_input=True,
                max_output_size=max_output_size, **_SAFETENSORS_IN)


def merge(input, output, *, max_output_size=None, progress=None):
    """Joins a sharded checkpoint (its directory or index) into the one file `output`."""
    return _run(input, output, progress, to="safetensors", max_output_size=max_output_size, **_SAFETENSORS_IN)


def shard(inputs, output_dir, *, max_shard_size="5GB", prefix="model", max_output_size=None, progress=None):
    """Splits files or checkpoints (one path or a list) into `output_dir`: shards of at most
    `max_shard_size` (bytes, or "5GB", "500MB", "2GiB") named "<prefix>-00001-of-00003.safetensors",
    plus "<prefix>.safetensors.index.json" when there are several. `__metadata__` is what the
    inputs share. The dict returned lists the files written under "files"."""
    return _run(inputs, output_dir, progress, to="sharded", max_shard_size=str(max_shard_size), prefix=prefix,
                max_output_size=max_output_size, **_SAFETENSORS_IN)


def diff(a, b, *, rtol=0.0, atol=0.0, ignore_dtype=False, progress=None):
    """Compares two SafeTensors files: names, dtypes, shapes, `__metadata__` and values, which
    match when |a - b| <= atol + rtol * |b| (NaN equals NaN, as numpy.allclose(equal_nan=True)).
    Returns a dict: equal, only_in_a, only_in_b, metadata [{key, a, b}], tensors [{name, equal,
    dtype_a, dtype_b, shape_a, shape_b, compared, values, mismatched, max_abs, max_rel,
    first_mismatch: (index, a, b) or None}]."""
    return _diff(os.fsdecode(a), os.fsdecode(b), float(rtol), float(atol), ignore_dtype, progress)


def checksum(path, *, per_tensor=False, progress=None):
    """SHA-256 of a file as sha256sum computes it (any content; "-" is standard input), and with
    `per_tensor` of each tensor's data bytes, in one pass. Returns {"sha256": hex, "bytes": n,
    "tensors": {name: hex} in file order}."""
    return _checksum(os.fsdecode(path), per_tensor, progress)


def quantize_checkpoint(input, output, *, mode="affine", bits=None, group_size=None, only=None, exclude=None,
                        config_out=None, max_shard_size="5GB", max_output_size=None, progress=None):
    """Quantizes the float `*.weight` tensors (rank >= 2; those matching `only` and not `exclude`)
    of a file or sharded checkpoint into MLX's layout (P.weight as uint32 codes, P.scales,
    P.biases), bit-identical to MLX's CPU quantizer, streamed in row chunks. A sharded input
    gives a checkpoint directory. `config_out` writes an mlx-lm config fragment. Returns a dict:
    layers, tensors, sharded, warnings."""
    return _quantize_checkpoint(os.fsdecode(input), os.fsdecode(output), mode, bits or 0, group_size or 0,
                                _patterns(only) or [], _patterns(exclude) or [],
                                os.fsdecode(config_out) if config_out else "", str(max_shard_size),
                                _size(max_output_size), progress)


def dequantize_checkpoint(input, output, *, dtype=None, max_shard_size="5GB", max_output_size=None, progress=None):
    """Turns every quantized MLX layer of a file or sharded checkpoint into a plain P.weight of
    `dtype` ("F32", "F16", "BF16"; default MLX's choice) and copies the rest, streamed in row
    chunks (config.json beside the input is read). Returns a dict: layers, tensors, sharded, warnings."""
    return _dequantize_checkpoint(os.fsdecode(input), os.fsdecode(output), dtype, str(max_shard_size),
                                  _size(max_output_size), progress)
