# SPDX-License-Identifier: Apache-2.0
"""torch tensors to and from SafeTensors, as the reference's safetensors.torch: shared
tensors are refused by save_file and deduplicated (and reported in the metadata) by save_model."""

import os
import sys
from collections import defaultdict
from typing import Any, Dict, List, Optional, Set, Tuple, Union  # noqa: F401 - the reference's names

import torch

from . import _dtypes
from ._open import _byteswapped_torch, safe_open
from ._safetensors_cxx import SafetensorError
from ._safetensors_cxx import serialize as _serialize
from ._safetensors_cxx import serialize_file as _serialize_file
from ._serialize import TensorSpec, check_metadata, check_names, deserialize, serialize, serialize_file  # noqa: F401
from ._typing import Metadata, PathLike

_SHARED_DOCS = "https://huggingface.co/docs/safetensors/torch_shared_tensors"


_float8_e4m3fn = getattr(torch, "float8_e4m3fn", None)
_float8_e5m2 = getattr(torch, "float8_e5m2", None)
_float8_e8m0 = getattr(torch, "float8_e8m0fnu", None)
_float4_e2m1_x2 = getattr(torch, "float4_e2m1fn_x2", None)

# Bytes per element of every dtype the installed torch has, as the reference's table.
_SIZE = {
    dtype: size
    for name, size in (
        ("int64", 8), ("float32", 4), ("int32", 4), ("bfloat16", 2), ("float16", 2), ("int16", 2), ("uint8", 1),
        ("int8", 1), ("bool", 1), ("float64", 8), ("complex64", 8), ("uint16", 2), ("uint32", 4), ("uint64", 8),
        ("float8_e4m3fn", 1), ("float8_e5m2", 1), ("float8_e8m0fnu", 1), ("float8_e4m3fnuz", 1),
        ("float8_e5m2fnuz", 1), ("float4_e2m1fn_x2", 1),
    )
    for dtype in [getattr(torch, name, None)]
    if isinstance(dtype, torch.dtype)
}

# Format code -> torch dtype, for the codes the installed torch has.
_TYPES = {
    code: getattr(torch, name)
    for code, name in _dtypes.CODE_TO_NAME.items()
    if isinstance(getattr(torch, name, None), torch.dtype)
}


def _getdtype(dtype_str):
    return _TYPES[dtype_str]


def _view2torch(safeview):
    """deserialize()'s [(name, {"dtype", "shape", "data"})] as name -> torch.Tensor."""
    result = {}
    for name, desc in safeview:
        dtype = _dtypes.torch_dtype(desc["dtype"])  # SafetensorError naming a dtype torch lacks
        shape = desc["shape"]
        if desc["dtype"] == "F4" and shape:
            shape = list(shape[:-1]) + [shape[-1] // 2]
        if len(desc["data"]) == 0:
            tensor = torch.empty(shape, dtype=dtype)
        else:
            tensor = torch.frombuffer(desc["data"], dtype=torch.uint8).view(dtype).reshape(shape)
            if sys.byteorder == "big":
                tensor = _byteswapped_torch(tensor)
        result[name] = tensor
    return result


def storage_ptr(tensor: torch.Tensor) -> int:
    """The address of a tensor's storage, which views of one storage share.

    Args:
        tensor (`torch.Tensor`):
            Any tensor.

    Returns:
        `int`: the address of the storage's first byte (not of the tensor's first element), or 0
        for a tensor without storage (meta tensors).

    Example:

    ```python
    import torch
    from safetensors.torch import storage_ptr

    weight = torch.zeros(4, 4)
    assert storage_ptr(weight[1:]) == storage_ptr(weight)
    ```
    """
    try:
        return tensor.untyped_storage().data_ptr()
    except Exception:
        try:
            return tensor.storage().data_ptr()
        except NotImplementedError:
            return 0  # meta tensors and other storage-less tensors


def _end_ptr(tensor):
    """One past the address of the tensor's last element (its data_ptr when empty)."""
    if tensor.nelement():
        return tensor.view(-1)[-1].data_ptr() + tensor.element_size()
    return tensor.data_ptr()


def storage_size(tensor: torch.Tensor) -> int:
    """The size of a tensor's whole storage, which may be more than the tensor covers.

    Args:
        tensor (`torch.Tensor`):
            Any tensor.

    Returns:
        `int`: the storage's size in bytes.

    Example:

    ```python
    import torch
    from safetensors.torch import storage_size

    assert storage_size(torch.zeros(4, 4)[0]) == 64
    ```
    """
    try:
        return tensor.untyped_storage().nbytes()
    except AttributeError:
        try:
            return tensor.storage().size() * tensor.element_size()
        except NotImplementedError:
            return tensor.nelement() * tensor.element_size()


def _filter_shared_not_shared(tensors, state_dict):
    """Splits each group of names sharing a storage into runs whose byte ranges overlap:
    sorted by (start, end, name), a name starts a new group when it starts at or after the
    end of the name before it."""
    filtered = []
    for shared in tensors:
        if len(shared) < 2:
            filtered.append(shared)
            continue
        areas = sorted((state_dict[name].data_ptr(), _end_ptr(state_dict[name]), name) for name in shared)
        _, last_stop, first = areas[0]
        filtered.append({first})
        for start, stop, name in areas[1:]:
            if start >= last_stop:
                filtered.append({name})
            else:
                filtered[-1].add(name)
            last_stop = stop
    return filtered


def _find_shared_tensors(state_dict: Dict[str, torch.Tensor]) -> List[Set[str]]:
    """Sets of names whose tensors overlap in memory, every other tensor in a set of its own,
    in the reference's order. Meta and storage-less tensors are left out."""
    by_storage = defaultdict(set)
    for name, tensor in state_dict.items():
        if tensor.device == torch.device("meta"):
            continue
        ptr, size = storage_ptr(tensor), storage_size(tensor)
        if ptr != 0 and size != 0:
            by_storage[(tensor.device, ptr, size)].add(name)
    # sorted() on sets compares by inclusion, as the reference does: the order it gives is the order.
    return _filter_shared_not_shared(list(sorted(by_storage.values())), state_dict)


def _is_complete(tensor: torch.Tensor) -> bool:
    """Whether the tensor starts at its storage's start and covers all of it."""
    return tensor.data_ptr() == storage_ptr(tensor) and tensor.nelement() * _SIZE[tensor.dtype] == storage_size(
        tensor
    )


def _remove_duplicate_names(
    state_dict: Dict[str, torch.Tensor],
    *,
    preferred_names: Optional[List[str]] = None,
    discard_names: Optional[List[str]] = None,
) -> Dict[str, List[str]]:
    """For every set of shared tensors: the name to keep -> the names to drop (sorted). The kept
    name covers the whole storage: the first in sorted order, else the first not in
    `discard_names`, else the first in `preferred_names`. A set where no name covers the whole
    storage raises RuntimeError."""
    preferred_names = set(preferred_names or [])
    discard_names = set(discard_names or [])
    to_remove = defaultdict(list)
    for shared in _find_shared_tensors(state_dict):
        complete = {name for name in shared if _is_complete(state_dict[name])}
        if not complete:
            raise RuntimeError(
                "Error while trying to find names to remove to save state dict, but found no suitable name to keep"
                f" for saving amongst: {shared}. None is covering the entire storage.Refusing to save/load the model"
                " since you could be storing much more memory than needed. Please refer to"
                f" {_SHARED_DOCS} for more information. Or open an"
                " issue."
            )
        keep = sorted(complete)[0]
        if complete - discard_names:
            keep = sorted(complete - discard_names)[0]
        if preferred_names and complete & preferred_names:
            keep = sorted(complete & preferred_names)[0]
        for name in sorted(shared):
            if name != keep:
                to_remove[keep].append(name)
    return to_remove


def _check_saveable(tensors):
    """The reference's checks, in its order and words: a dict of dense tensors, none sharing memory."""
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    sparse = []
    for name, tensor in tensors.items():
        if not isinstance(tensor, torch.Tensor):
            raise ValueError(f"Key `{name}` is invalid, expected torch.Tensor but received {type(tensor)}")
        if tensor.layout != torch.strided:
            sparse.append(name)
    if sparse:
        raise ValueError(
            f"You are trying to save a sparse tensors: `{sparse}` which this library does not support."
            " You can make it a dense tensor before saving with `.to_dense()` but be aware this might"
            " make a much larger file than needed."
        )
    failing = [names for names in _find_shared_tensors(tensors) if len(names) > 1]
    if failing:
        raise RuntimeError(
            f"""
            Some tensors share memory, this will lead to duplicate memory on disk and potential differences when loading them again: {failing}.
            A potential way to correctly save your model is to use `save_model`.
            More information at {_SHARED_DOCS}
            """
        )


def _savable_tensor(tensor, name):
    """A dense, contiguous CPU tensor in little-endian byte order, or the reference's errors."""
    if tensor.layout != torch.strided:
        raise ValueError(
            f"You are trying to save a sparse tensor: `{name}` which this library does not support."
            " You can make it a dense tensor before saving with `.to_dense()` but be aware this might"
            " make a much larger file than needed."
        )
    if not tensor.is_contiguous():
        raise ValueError(
            f"You are trying to save a non contiguous tensor: `{name}` which is not allowed. It either means you"
            " are trying to save tensors which are reference of each other in which case it's recommended to save"
            " only the full tensors, and reslice at load time, or simply call `.contiguous()` on your tensor to"
            " pack it before saving."
        )
    if tensor.device.type != "cpu":
        tensor = tensor.to("cpu")
    if sys.byteorder == "big":
        tensor = _little_endian(tensor)
    return tensor


def _tobytes(tensor, name):
    """The tensor's bytes, little-endian, in C order (a copy)."""
    tensor = _savable_tensor(tensor, name)
    if tensor.nelement() == 0 or tensor.data_ptr() == 0:
        return b""
    return tensor.reshape(-1).view(torch.uint8).numpy().tobytes()


def _flatten(tensors):
    """The reference's checks, then name -> TensorSpec over each tensor's memory (the spec
    keeps the tensor alive), ready for serialize()/serialize_file()."""
    _check_saveable(tensors)
    out = {}
    for name, tensor in tensors.items():
        tensor = _savable_tensor(tensor, name)
        nbytes = tensor.nelement() * tensor.element_size()
        spec = TensorSpec(dtype=str(tensor.dtype).split(".")[-1], shape=list(tensor.shape),
                          data_ptr=tensor.data_ptr() if nbytes else 0, data_len=nbytes)
        spec._keep = tensor
        out[name] = spec
    return out


def _entries(tensors):
    """The extension's entries for a state dict, and the tensors that must stay alive."""
    _check_saveable(tensors)
    check_names(tensors)
    entries, alive = [], []
    for name, tensor in tensors.items():
        tensor = _savable_tensor(tensor, name)
        code = _dtypes.to_code(tensor.dtype)
        nbytes = tensor.nelement() * tensor.element_size()
        alive.append(tensor)
        entries.append((name, code, _header_shape(tensor, code), (tensor.data_ptr() if nbytes else 0, nbytes)))
    return entries, alive


def _header_shape(tensor, code):
    shape = list(tensor.shape)
    if code == "F4" and shape:
        shape[-1] *= 2  # torch's float4_e2m1fn_x2 packs two values per element
    return shape


def _little_endian(tensor):
    return tensor if tensor.element_size() == 1 else _byteswapped_torch(tensor)


def save(tensors: Dict[str, torch.Tensor], metadata: Metadata = None) -> bytes:
    """Serializes torch tensors into the bytes of a SafeTensors file.

    Args:
        tensors (`Dict[str, torch.Tensor]`):
            The tensors by name: dense and contiguous, on any device (they are copied to the CPU
            when not there). Tensors sharing memory are refused: use `save_model`.
        metadata (`Dict[str, str]`, *optional*):
            Text stored as the header's `__metadata__`.

    Returns:
        `bytes`: the whole file, header and data.

    Example:

    ```python
    import torch
    from safetensors.torch import save

    data = save({"embedding": torch.zeros((512, 1024))})
    ```
    """
    entries, alive = _entries(tensors)
    check_metadata(metadata)
    out: bytes = _serialize(entries, metadata)
    del alive
    return out


def save_file(tensors: Dict[str, torch.Tensor], filename: PathLike, metadata: Metadata = None) -> None:
    """Writes torch tensors to a SafeTensors file. The file is written beside its final name,
    flushed to disk (fsync) and renamed into place, so readers never see it half-written and an
    interrupted save leaves the previous file as it was.

    Args:
        tensors (`Dict[str, torch.Tensor]`):
            The tensors by name: dense and contiguous. Tensors sharing memory (tied weights)
            raise `RuntimeError`: use `save_model`, which keeps one name per storage.
        filename (`str`, `bytes` or `os.PathLike`):
            Where to write. An existing file is replaced.
        metadata (`Dict[str, str]`, *optional*):
            Text stored as the header's `__metadata__`, e.g. `{"format": "pt"}`.

    Returns:
        `None`

    Example:

    ```python
    import torch
    from safetensors.torch import save_file

    save_file({"embedding": torch.zeros((512, 1024))}, "model.safetensors", metadata={"format": "pt"})
    ```
    """
    entries, alive = _entries(tensors)
    check_metadata(metadata)
    _serialize_file(entries, os.fsdecode(filename), metadata)
    del alive


def load(data: bytes) -> Dict[str, torch.Tensor]:
    """Reads torch tensors from the bytes of a SafeTensors file.

    Args:
        data (`bytes`):
            A whole file's content.

    Returns:
        `Dict[str, torch.Tensor]`: the tensors by name, on the CPU, in the order of their data.

    Example:

    ```python
    import torch
    from safetensors.torch import load, save

    tensors = load(save({"a": torch.arange(4)}))
    ```
    """
    return _view2torch(deserialize(data))


def load_file(filename: PathLike, device: Union[str, int, torch.device] = "cpu", backend: str = "mmap", *,
              mmap: bool = True, **remote: Any) -> Dict[str, torch.Tensor]:
    """Reads every tensor of a SafeTensors file. With the default backend, CPU tensors are views
    of a private mapping of the file: nothing is copied until a page is touched, and writing to
    a tensor never reaches the file.

    Args:
        filename (`str`, `bytes` or `os.PathLike`):
            The file, or an `http://`, `https://` or `file://` URL of one.
        device (`str`, `int` or `torch.device`, *optional*, defaults to `"cpu"`):
            Where the tensors go: `"cpu"`, `"cuda:1"`, `1` (a CUDA index), `"mps"`, ...
        backend (`str`, *optional*, defaults to `"mmap"`):
            `"mmap"` (views of a mapping) or `"pread"` (copies read with `pread(2)`).
        mmap (`bool`, *optional*, defaults to `True`):
            `False` is the same as `backend="pread"`.
        **remote:
            For a URL: `token`, `ca_file`, `insecure` and `timeout`, as `safe_open` takes them.

    Returns:
        `Dict[str, torch.Tensor]`: the tensors by name, in the order of their data in the file.

    Example:

    ```python
    from safetensors.torch import load_file

    state_dict = load_file("model.safetensors", device="cpu")
    ```
    """
    with safe_open(filename, framework="pt", device=device, backend=backend, mmap=mmap, **remote) as f:
        return {name: f.get_tensor(name) for name in f.offset_keys()}


def save_model(model: torch.nn.Module, filename: PathLike, metadata: Metadata = None,
               force_contiguous: bool = True) -> None:
    """Saves a model's `state_dict()`, which `save_file` may refuse when weights are tied: one
    name is kept per shared storage, and each name left out is recorded in the metadata as
    `left out -> kept` (never replacing a key the caller gave), so `load_model` restores it.

    Args:
        model (`torch.nn.Module`):
            The model to save.
        filename (`str`, `bytes` or `os.PathLike`):
            Where to write.
        metadata (`Dict[str, str]`, *optional*):
            Text stored as the header's `__metadata__`, besides the names left out.
        force_contiguous (`bool`, *optional*, defaults to `True`):
            Makes non-contiguous tensors (transposed or channels-last parameters) contiguous
            copies instead of refusing them.

    Returns:
        `None`

    Example:

    ```python
    import torch
    from safetensors.torch import save_model

    model = torch.nn.Linear(4, 4)
    save_model(model, "model.safetensors")
    ```
    """
    state_dict = model.state_dict()
    for kept, dropped in _remove_duplicate_names(state_dict).items():
        for name in dropped:
            if metadata is None:
                metadata = {}
            metadata.setdefault(name, kept)
            del state_dict[name]
    if force_contiguous:
        state_dict = {k: v.contiguous() for k, v in state_dict.items()}
    try:
        save_file(state_dict, filename, metadata=metadata)
    except ValueError as e:
        raise ValueError(f"{e} Or use save_model(..., force_contiguous=True), read the docs for potential caveats.")


def load_model(model: torch.nn.Module, filename: PathLike, strict: bool = True,
               device: Union[str, int, torch.device] = "cpu", backend: str = "mmap", *,
               mmap: bool = True) -> Tuple[Set[str], List[str]]:
    """Loads a file into a model, as `model.load_state_dict` would, knowing that `save_model`
    keeps one name per tied storage: a tied name the file lacks is not missing.

    Args:
        model (`torch.nn.Module`):
            The model to load into.
        filename (`str`, `bytes` or `os.PathLike`):
            The file to read.
        strict (`bool`, *optional*, defaults to `True`):
            Raise `RuntimeError` when names are missing or unexpected; otherwise only report them.
        device (`str`, `int` or `torch.device`, *optional*, defaults to `"cpu"`):
            Where the file's tensors are loaded before they are copied into the model.
        backend (`str`, *optional*, defaults to `"mmap"`):
            `"mmap"` or `"pread"`, as in `load_file`.
        mmap (`bool`, *optional*, defaults to `True`):
            `False` is the same as `backend="pread"`.

    Returns:
        `(Set[str], List[str])`: the model's names the file lacks, and the file's names the
        model lacks.

    Example:

    ```python
    import torch
    from safetensors.torch import load_model, save_model

    model = torch.nn.Linear(4, 4)
    save_model(model, "model.safetensors")
    missing, unexpected = load_model(model, "model.safetensors")
    ```
    """
    state_dict = load_file(filename, device=device, backend=backend, mmap=mmap)
    model_state_dict = model.state_dict()
    removals = _remove_duplicate_names(model_state_dict, preferred_names=state_dict.keys())
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    missing = set(missing)
    for dropped in removals.values():
        for name in dropped:
            if name in missing:
                missing.remove(name)
            else:
                unexpected.append(name)
    if strict and (missing or unexpected):
        error = f"Error(s) in loading state_dict for {model.__class__.__name__}:"
        if missing:
            error += "\n    Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(missing))
        if unexpected:
            error += "\n    Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(unexpected))
        raise RuntimeError(error)
    return missing, unexpected


__all__ = ["save", "save_file", "load", "load_file", "save_model", "load_model", "storage_ptr", "storage_size",
           "SafetensorError"]
