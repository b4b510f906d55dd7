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


def storage_ptr(tensor):
    """Address of the tensor's storage (not of its first element); 0 when it has none."""
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


def storage_size(tensor):
    """Bytes of the tensor's whole storage."""
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


def _find_shared_tensors(state_dict):
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


def _is_complete(tensor):
    """Whether the tensor starts at its storage's start and covers all of it."""
    return tensor.data_ptr() == storage_ptr(tensor) and tensor.nelement() * _SIZE[tensor.dtype] == storage_size(
        tensor
    )


def _remove_duplicate_names(state_dict, *, preferred_names=None, discard_names=None):
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


def save(tensors, metadata=None):
    """The SafeTensors bytes of `tensors` (name -> torch.Tensor)."""
    entries, alive = _entries(tensors)
    check_metadata(metadata)
    out = _serialize(entries, metadata)
    del alive
    return out


def save_file(tensors, filename, metadata=None):
    """Writes `tensors` to `filename` atomically. Tensors sharing memory are refused (use save_model)."""
    entries, alive = _entries(tensors)
    check_metadata(metadata)
    _serialize_file(entries, os.fsdecode(filename), metadata)
    del alive


def load(data):
    """name -> torch.Tensor (on the CPU) from a file's bytes."""
    return _view2torch(deserialize(data))


def load_file(filename, device="cpu", backend="mmap", *, mmap=True, **remote):
    """name -> torch.Tensor on `device`, in file order. `filename` may be a URL (`remote`: the
    token, ca_file, insecure and timeout options of safe_open)."""
    with safe_open(filename, framework="pt", device=device, backend=backend, mmap=mmap, **remote) as f:
        return {name: f.get_tensor(name) for name in f.offset_keys()}


def save_model(model, filename, metadata=None, force_contiguous=True):
    """Saves `model.state_dict()`, keeping one name per set of tied tensors; every dropped name is
    recorded in the metadata as `dropped -> kept` so load_model can restore it."""
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


def load_model(model, filename, strict=True, device="cpu", backend="mmap", *, mmap=True):
    """Loads a file written by save_model into `model`. Returns (missing, unexpected) names; with
    `strict`, any of either raises RuntimeError. Names dropped as tied are not missing."""
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
