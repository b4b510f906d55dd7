# SPDX-License-Identifier: Apache-2.0
"""The library's pipelines from Python: convert between formats, and the rewrites that are
conversions with options (cast, extract, merge, shard), MLX quantization of whole
checkpoints, diff and checksum. Each runs in C++
without the GIL; `progress(done, total)` is called with byte counts as it goes, and an
exception from it, or Ctrl-C, stops the run with nothing left at the output."""

import os
import re
import textwrap
from typing import Any, Callable, Dict, Iterable, Optional, TypeVar, Union

from . import _safetensors_cxx
from ._safetensors_cxx import SafetensorError
from ._typing import PathLike


def _missing(name):
    def call(*args, **kwargs):
        raise SafetensorError(f"{name} needs the pipeline component, which this build of the module lacks "
                              "(SAFETENSORS_BUILD_PIPELINE=OFF, as `pip install .` builds it)")

    return call


# An extension built without the formats component (setup.py builds the core only) has none of
# these: the functions below then raise SafetensorError, and importing safetensors.cxx still works.
_checksum, _convert, _dequantize_checkpoint, _describe, _diff, _pickle_verdict, _quantize_checkpoint = (
    getattr(_safetensors_cxx, name, None) or _missing(name)
    for name in ("checksum", "convert", "dequantize_checkpoint", "describe", "diff", "pickle_verdict",
                 "quantize_checkpoint"))


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


# Argument and result descriptions every pipeline function shares, filled into each docstring
# where it says <progress>, <max_output_size> or <summary> (help() shows them in full).
_SHARED_DOCS = {
    "max_output_size": """max_output_size (`int` or `str`, *optional*):
    The output budget: a plan to write more tensor bytes is refused before anything is
    written (`LimitExceeded`). Defaults to 64 times the input's size, at least 1 GiB.""",
    "progress": """progress (`Callable[[int, int], Any]`, *optional*):
    Called with (bytes done, bytes in all) as the run goes; an exception raised in it,
    or Ctrl-C, stops the run and nothing is left at the output.""",
    "summary": """`Dict[str, Any]`: `input_format`, `output_format`, `tensors`, `parameters`, `bytes`,
`notes`, `warnings` and `files` (what was written).""",
}


F = TypeVar("F", bound=Callable[..., Any])


def _shared_docs(function: F) -> F:
    def fill(match: "re.Match[str]") -> str:
        return textwrap.indent(_SHARED_DOCS[match.group(2)], match.group(1))

    function.__doc__ = re.sub(r"^( *)<(\w+)>$", fill, function.__doc__ or "", flags=re.M)
    return function


# The rewrites read SafeTensors only: another format is named ("this is a GGUF file, not SafeTensors").
_SAFETENSORS_IN = {"from": "safetensors"}
# cast, extract and merge write one file: a directory there is refused, as the CLI refuses it.
_ONE_FILE_OUT = {"one_file_output": True}


Progress = Optional[Callable[[int, int], Any]]
Patterns = Union[None, str, Iterable[str]]
ByteSize = Union[None, int, str]  # bytes, or "20GB", "16GiB"


@_shared_docs
def convert(input: Union[PathLike, Iterable[PathLike]], output: PathLike, *, to: Optional[str] = None,
            dtype: Optional[str] = None, key: Optional[str] = None, shared: Optional[str] = None, strict: bool = False,
            compress: bool = False, hash_long_names: bool = False, only: Patterns = None, exclude: Patterns = None,
            max_output_size: ByteSize = None, progress: Progress = None) -> Dict[str, Any]:
    """Converts a checkpoint between formats without running any code from it.

    Args:
        input (`str` or `os.PathLike`, or several):
            SafeTensors (a file, or a sharded directory or index), PyTorch `.pt`/`.bin` (zip or
            legacy; a sharded directory), NumPy `.npy`/`.npz` or GGUF.
        output (`str` or `os.PathLike`):
            SafeTensors (a file, or a sharded directory when it ends in `/`), `.npz`, `.npy` or
            GGUF; the format comes from the name unless `to` says it.
        to (`str`, *optional*):
            `"safetensors"`, `"sharded"`, `"npz"`, `"npy"` or `"gguf"`.
        dtype (`str`, *optional*):
            Casts the floating tensors: `"F32"`, `"F16"`, `"BF16"`, ...
        key (`str`, *optional*):
            The state dict's key inside a PyTorch checkpoint that nests it.
        shared (`str`, *optional*):
            What to do with tensors sharing storage in a PyTorch input: `"keep"` (copy each,
            the default) or `"dedup"`. Like every option, refused for an input it does not
            apply to, also when given as the default.
        strict (`bool`, *optional*, defaults to `False`):
            Refuse what would otherwise be a warning.
        compress (`bool`, *optional*, defaults to `False`):
            Compress an `.npz` output.
        hash_long_names (`bool`, *optional*, defaults to `False`):
            Shorten names too long for the output format with a hash.
        only, exclude (`str` or a list of glob patterns, *optional*):
            The tensors written: those matching `only` and not `exclude`.
        <max_output_size>
        <progress>

    Returns:
        <summary>

    Example:

    ```python
    from safetensors.cxx import convert

    summary = convert("pytorch_model.bin", "model.safetensors", dtype="BF16")
    ```
    """
    return _run(input, output, progress, to=to, dtype=dtype, key=key, shared=shared, strict=strict,
                compress=compress, hash_long_names=hash_long_names, only=_patterns(only),
                exclude=_patterns(exclude), max_output_size=max_output_size)


def pickle_verdict(path: PathLike) -> Dict[str, Any]:
    """What a PyTorch checkpoint's pickles name outside the allowlist, read without running
    anything, also for a file `convert` refuses.

    Args:
        path (`str` or `os.PathLike`):
            A PyTorch `.pt`/`.bin` (zip or legacy) or a bare pickle.

    Returns:
        `Dict[str, Any]`: `kind` (`"allowlisted"`, `"inert objects"` or `"runs code"`), `globals`
        (each: `name`, `runs_code`, `pickle`, `offset`, `opcode`, `times_named`, `calls`,
        `first_call`, `first_call_offset`) and `refusal` (None, or the `code`, `message` and
        `offset` of the error `convert` gives: `"CodeExecution"` for a file that tries to run code).

    Example:

    ```python
    from safetensors.cxx import pickle_verdict

    if pickle_verdict("pytorch_model.bin")["kind"] == "runs code":
        raise SystemExit("refusing a checkpoint that tries to run code")
    ```
    """
    return _pickle_verdict(os.fsdecode(path))


@_shared_docs
def cast(input: PathLike, output: PathLike, dtype: str, *, only: Patterns = None, exclude: Patterns = None,
         saturate: bool = False, max_output_size: ByteSize = None, progress: Progress = None) -> Dict[str, Any]:
    """Writes a SafeTensors file with its floating tensors cast to another dtype (round to
    nearest even); the other tensors are copied.

    Args:
        input (`str` or `os.PathLike`):
            The file.
        output (`str` or `os.PathLike`):
            Where to write; may be `input` (replaced atomically once complete).
        dtype (`str`):
            `"F64"`, `"F32"`, `"F16"`, `"BF16"`, `"F8_*"`, `"F6_*"` or `"F4"`.
        only, exclude (`str` or a list of glob patterns, *optional*):
            The tensors cast: those matching `only` and not `exclude` (all floating ones by default).
        saturate (`bool`, *optional*, defaults to `False`):
            F8 values out of range become the largest finite value instead of NaN/Inf.
        <max_output_size>
        <progress>

    Returns:
        <summary>

    Example:

    ```python
    from safetensors.cxx import cast

    cast("model.safetensors", "model-bf16.safetensors", "BF16", exclude="*.norm.*")
    ```
    """
    return _run(input, output, progress, to="safetensors", dtype=dtype, cast_only=_patterns(only),
                cast_exclude=_patterns(exclude), saturate=saturate, replace_input=True,
                max_output_size=max_output_size, **_SAFETENSORS_IN, **_ONE_FILE_OUT)


@_shared_docs
def extract(input: PathLike, output: PathLike, *, only: Patterns = None, exclude: Patterns = None,
            rename: Optional[Dict[str, str]] = None, set_metadata: Optional[Dict[str, str]] = None,
            remove_metadata: Patterns = None, alignment: int = 8, max_output_size: ByteSize = None,
            progress: Progress = None) -> Dict[str, Any]:
    """Writes a subset of a SafeTensors file's tensors, renamed, with `__metadata__` edited. A
    pattern or rename that matches nothing is an error.

    Args:
        input (`str` or `os.PathLike`):
            The file.
        output (`str` or `os.PathLike`):
            Where to write; may be `input` (replaced atomically once complete).
        only, exclude (`str` or a list of glob patterns, *optional*):
            The tensors kept: those matching `only` and not `exclude`.
        rename (`Dict[str, str]`, *optional*):
            `{"old": "new"}`, or `{"model.*": "base.*"}` for a prefix.
        set_metadata (`Dict[str, str]`, *optional*):
            `__metadata__` keys to set.
        remove_metadata (`str` or a list of keys, *optional*):
            `__metadata__` keys to remove.
        alignment (`int`, *optional*, defaults to 8):
            Each tensor's data starts at a multiple of this many bytes.
        <max_output_size>
        <progress>

    Returns:
        <summary>

    Example:

    ```python
    from safetensors.cxx import extract

    extract("model.safetensors", "encoder.safetensors", only="encoder.*", rename={"encoder.*": "*"})
    ```
    """
    return _run(input, output, progress, to="safetensors", only=_patterns(only), exclude=_patterns(exclude),
                rename=list((rename or {}).items()), set_metadata=set_metadata,
                remove_metadata=_patterns(remove_metadata), alignment=alignment, replace_input=True,
                max_output_size=max_output_size, **_SAFETENSORS_IN, **_ONE_FILE_OUT)


@_shared_docs
def merge(input: PathLike, output: PathLike, *, max_output_size: ByteSize = None,
          progress: Progress = None) -> Dict[str, Any]:
    """Joins a sharded checkpoint into one file.

    Args:
        input (`str` or `os.PathLike`):
            The checkpoint's directory or index.
        output (`str` or `os.PathLike`):
            The file to write.
        <max_output_size>
        <progress>

    Returns:
        <summary>

    Example:

    ```python
    from safetensors.cxx import merge

    merge("checkpoint/model.safetensors.index.json", "model.safetensors")
    ```
    """
    return _run(input, output, progress, to="safetensors", max_output_size=max_output_size, **_SAFETENSORS_IN,
                **_ONE_FILE_OUT)


@_shared_docs
def shard(inputs: Union[PathLike, Iterable[PathLike]], output_dir: PathLike, *, max_shard_size: Union[int, str] = "5GB",
          prefix: str = "model", max_output_size: ByteSize = None, progress: Progress = None) -> Dict[str, Any]:
    """Splits files or checkpoints into shards plus an index. `__metadata__` is what the inputs
    share.

    Args:
        inputs (`str` or `os.PathLike`, or several):
            Files or checkpoints.
        output_dir (`str` or `os.PathLike`):
            Where the shards go: `<prefix>-00001-of-00003.safetensors`, ..., and
            `<prefix>.safetensors.index.json` when there are several.
        max_shard_size (`int` or `str`, *optional*, defaults to `"5GB"`):
            Bytes, or `"5GB"`, `"500MB"`, `"2GiB"`.
        prefix (`str`, *optional*, defaults to `"model"`):
            The shards' name.
        <max_output_size>
        <progress>

    Returns:
        <summary>

    Example:

    ```python
    from safetensors.cxx import shard

    written = shard("model.safetensors", "sharded/", max_shard_size="2GB")["files"]
    ```
    """
    return _run(inputs, output_dir, progress, to="sharded", max_shard_size=str(max_shard_size), prefix=prefix,
                max_output_size=max_output_size, **_SAFETENSORS_IN)


@_shared_docs
def diff(a: PathLike, b: PathLike, *, rtol: float = 0.0, atol: float = 0.0, ignore_dtype: bool = False,
         progress: Progress = None) -> Dict[str, Any]:
    """Compares two SafeTensors files: names, dtypes, shapes, `__metadata__` and values. Values
    match when `|a - b| <= atol + rtol * |b|`, NaN equal to NaN.

    Args:
        a, b (`str` or `os.PathLike`):
            The files.
        rtol (`float`, *optional*, defaults to 0):
            Relative tolerance.
        atol (`float`, *optional*, defaults to 0):
            Absolute tolerance.
        ignore_dtype (`bool`, *optional*, defaults to `False`):
            Compare values across dtypes.
        <progress>

    Returns:
        `Dict[str, Any]`: `equal`, `only_in_a`, `only_in_b`, `metadata` (`[{key, a, b}]`) and
        `tensors` (`[{name, equal, dtype_a, dtype_b, shape_a, shape_b, compared, values,
        mismatched, max_abs, max_rel, first_mismatch}]`, `first_mismatch` being `(index, a, b)`
        or None).

    Example:

    ```python
    from safetensors.cxx import diff

    assert diff("model.safetensors", "model-bf16.safetensors", rtol=1e-2, ignore_dtype=True)["equal"]
    ```
    """
    return _diff(os.fsdecode(a), os.fsdecode(b), float(rtol), float(atol), ignore_dtype, progress)


@_shared_docs
def checksum(path: PathLike, *, per_tensor: bool = False, progress: Progress = None) -> Dict[str, Any]:
    """SHA-256 of a file as `sha256sum` computes it, and of each tensor's data in the same pass.

    Args:
        path (`str` or `os.PathLike`):
            Any file; `"-"` is standard input.
        per_tensor (`bool`, *optional*, defaults to `False`):
            Also hash each tensor's data bytes.
        <progress>

    Returns:
        `Dict[str, Any]`: `{"sha256": hex, "bytes": n, "tensors": {name: hex}}`, tensors in file order.

    Example:

    ```python
    from safetensors.cxx import checksum

    print(checksum("model.safetensors", per_tensor=True)["sha256"])
    ```
    """
    return _checksum(os.fsdecode(path), per_tensor, progress)


@_shared_docs
def quantize_checkpoint(input: PathLike, output: PathLike, *, mode: str = "affine", bits: Optional[int] = None,
                        group_size: Optional[int] = None, only: Patterns = None, exclude: Patterns = None,
                        config_out: Optional[PathLike] = None, max_shard_size: Union[int, str] = "5GB",
                        max_output_size: ByteSize = None, progress: Progress = None) -> Dict[str, Any]:
    """Quantizes the float `*.weight` tensors (rank 2 or more) of a file or sharded checkpoint into
    MLX's layout (`P.weight` as uint32 codes, `P.scales`, `P.biases`), bit-identical to MLX's
    CPU quantizer, streamed in row chunks. A sharded input gives a checkpoint directory.

    Args:
        input (`str` or `os.PathLike`):
            A file or a sharded checkpoint.
        output (`str` or `os.PathLike`):
            Where to write.
        mode (`str`, *optional*, defaults to `"affine"`):
            `"affine"`, `"mxfp4"`, `"mxfp8"` or `"nvfp4"`.
        bits, group_size (`int`, *optional*):
            The mode's defaults without them.
        only, exclude (`str` or a list of glob patterns, *optional*):
            The weights quantized: those matching `only` and not `exclude`.
        config_out (`str` or `os.PathLike`, *optional*):
            Writes an mlx-lm config fragment there.
        max_shard_size (`int` or `str`, *optional*, defaults to `"5GB"`):
            For a sharded output.
        <max_output_size>
        <progress>

    Returns:
        `Dict[str, Any]`: `layers`, `tensors`, `sharded` and `warnings`.

    Example:

    ```python
    from safetensors.cxx import quantize_checkpoint

    quantize_checkpoint("model.safetensors", "model-4bit.safetensors", bits=4, group_size=64)
    ```
    """
    return _quantize_checkpoint(os.fsdecode(input), os.fsdecode(output), mode, bits or 0, group_size or 0,
                                _patterns(only) or [], _patterns(exclude) or [],
                                os.fsdecode(config_out) if config_out else "", str(max_shard_size),
                                _size(max_output_size), progress)


@_shared_docs
def dequantize_checkpoint(input: PathLike, output: PathLike, *, dtype: Optional[str] = None,
                          max_shard_size: Union[int, str] = "5GB", max_output_size: ByteSize = None,
                          progress: Progress = None) -> Dict[str, Any]:
    """Turns every quantized MLX layer of a file or sharded checkpoint into a plain `P.weight` and
    copies the rest, streamed in row chunks (`config.json` beside the input is read).

    Args:
        input (`str` or `os.PathLike`):
            A file or a sharded checkpoint.
        output (`str` or `os.PathLike`):
            Where to write.
        dtype (`str`, *optional*):
            `"F32"`, `"F16"` or `"BF16"`; MLX's choice without it.
        max_shard_size (`int` or `str`, *optional*, defaults to `"5GB"`):
            For a sharded output.
        <max_output_size>
        <progress>

    Returns:
        `Dict[str, Any]`: `layers`, `tensors`, `sharded` and `warnings`.

    Example:

    ```python
    from safetensors.cxx import dequantize_checkpoint

    dequantize_checkpoint("model-4bit.safetensors", "model.safetensors", dtype="BF16")
    ```
    """
    return _dequantize_checkpoint(os.fsdecode(input), os.fsdecode(output), dtype, str(max_shard_size),
                                  _size(max_output_size), progress)


def describe(path: PathLike) -> Dict[str, Any]:
    """A PyTorch, NumPy or GGUF file as `safetensors inspect` describes it: the same rows, from
    the library's format table. Nothing in a PyTorch file runs.

    Args:
        path (`str` or `os.PathLike`):
            A file of a format the library reads (SafeTensors files are read with `safe_open`).

    Returns:
        `Dict[str, Any]`: `format_id` (`"pytorch"`, `"npz"`, `"npy"`, `"gguf"`), `format` (inspect's
        `format:` line), `extra_title` (the name of the table's last column), `tensors` (each:
        `name`, `dtype`, `shape`, `bytes`, `elements`, `extra`), `metadata` (key to printable value),
        `notes` and `refusal` (None, or the `code`, `message` and `offset` of the error that keeps
        the file from opening: a pickle that tries to run code is described by its verdict's notes).

    Example:

    ```python
    from safetensors.cxx import describe

    for t in describe("model.gguf")["tensors"]:
        print(t["name"], t["dtype"], t["shape"])
    ```
    """
    return _describe(os.fsdecode(path))
