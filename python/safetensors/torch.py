# SPDX-License-Identifier: Apache-2.0
"""torch tensors to and from SafeTensors, as the reference's safetensors.torch: shared
tensors are refused by save_file and deduplicated (and reported in the metadata) by save_model."""

import os
import sys
from collections import defaultdict

import torch

from . import _dtypes
from ._open import _byteswapped_torch, safe_open
from ._safetensors_cxx import SafetensorError
from ._safetensors_cxx import serialize as _serialize
from ._safetensors_cxx import serialize_file as _serialize_file
from ._serialize import deserialize

_SHARED_DOCS = "https://huggingface.co/docs/safetensors/torch_shared_tensors"


def storage_ptr(tensor):
    """Address of the tensor's storage (not of its first element); 0 when it has none."""
    try:
        return tensor.untyped_storage().data_ptr()
    except (AttributeError, NotImplementedError, RuntimeError):
        pass
    try:
        return tensor.storage().data_ptr()
    except NotImplementedError:
        return 0  # meta tensors and other storage-less tensors


def storage_size(tensor):
    """Bytes of the tensor's whole storage."""
    try:
        return tensor.untyped_storage().nbytes()
    except (AttributeError, NotImplementedError, RuntimeError):
        pass
    try:
        return tensor.storage().size() * tensor.element_size()
    except NotImplementedError:
        return tensor.nelement() * tensor.element_size()


def _byte_range(tensor):
    start = tensor.data_ptr()
    return start, start + tensor.nelement() * tensor.element_size()


def _split_overlapping(names, state_dict):
    """Splits names sharing a storage into groups whose byte ranges actually overlap."""
    ordered = sorted(names, key=lambda n: (_byte_range(state_dict[n]), n))
    groups = []
    current, current_stop = set(), None
    for name in ordered:
        start, stop = _byte_range(state_dict[name])
        if current and start >= current_stop:
            groups.append(current)
            current, current_stop = set(), None
        current.add(name)
        current_stop = stop if current_stop is None else max(current_stop, stop)
    if current:
        groups.append(current)
    return groups


def _find_shared_tensors(state_dict):
    """Sets of names whose tensors share memory (every other tensor in a set of its own).
    Storage-less tensors (meta, empty) are left out."""
    by_storage = defaultdict(set)
    for name, tensor in state_dict.items():
        if tensor.device.type == "meta":
            continue
        ptr, size = storage_ptr(tensor), storage_size(tensor)
        if ptr != 0 and size != 0:
            by_storage[(tensor.device, ptr, size)].add(name)
    groups = []
    for names in by_storage.values():
        groups.extend(_split_overlapping(names, state_dict))
    return sorted(groups, key=lambda g: sorted(g)[0])


def _covers_storage(tensor):
    return tensor.data_ptr() == storage_ptr(tensor) and tensor.nelement() * tensor.element_size() == storage_size(
        tensor
    )


def _remove_duplicate_names(state_dict, *, preferred_names=None, discard_names=None):
    """For every set of shared tensors: the name to keep -> the names to drop. The kept name
    covers the whole storage; among those, a preferred name wins, then one not to discard,
    then the first in sorted order."""
    preferred_names = set(preferred_names or ())
    discard_names = set(discard_names or ())
    removals = defaultdict(list)
    for shared in _find_shared_tensors(state_dict):
        if len(shared) == 1:
            continue
        complete = {n for n in shared if _covers_storage(state_dict[n])}
        if not complete:
            raise RuntimeError(
                f"Error while trying to find names to remove to save state dict, but found no suitable name to "
                f"keep for saving amongst: {shared}. None is covering the entire storage. Refusing to save/load "
                f"the model since you could be storing much more memory than needed. Please refer to "
                f"{_SHARED_DOCS} for more information. Or open an issue."
            )
        keep = min(complete)
        if complete - discard_names:
            keep = min(complete - discard_names)
        if complete & preferred_names:
            keep = min(complete & preferred_names)
        removals[keep].extend(sorted(n for n in shared if n != keep))
    return dict(removals)


def _entries(tensors):
    """The extension's entries for a state dict, and the tensors that must stay alive."""
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
            f"You are trying to save a sparse tensors: `{sparse}` which this library does not support. You can "
            f"make it a dense tensor before saving with `.to_dense()` but be aware this might make a much larger "
            f"file than needed."
        )
    shared = [names for names in _find_shared_tensors(tensors) if len(names) > 1]
    if shared:
        raise RuntimeError(
            f"Some tensors share memory, this will lead to duplicate memory on disk and potential differences "
            f"when loading them again: {shared}. A potential way to correctly save your model is to use "
            f"`save_model`. More information at {_SHARED_DOCS}"
        )
    entries, alive = [], []
    for name, tensor in tensors.items():
        if not tensor.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{name}` which is not allowed. It either means "
                f"you are trying to save tensors which are reference of each other in which case it's recommended "
                f"to save only the full tensors, and reslice at load time, or simply call `.contiguous()` on your "
                f"tensor to pack it before saving."
            )
        if tensor.device.type != "cpu":
            tensor = tensor.to("cpu")
        if sys.byteorder == "big":
            tensor = _little_endian(tensor)
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
    out = _serialize(entries, metadata)
    del alive
    return out


def save_file(tensors, filename, metadata=None):
    """Writes `tensors` to `filename` atomically. Tensors sharing memory are refused (use save_model)."""
    entries, alive = _entries(tensors)
    _serialize_file(entries, os.fspath(filename), metadata)
    del alive


def load(data):
    """name -> torch.Tensor (on the CPU) from a file's bytes."""
    out = {}
    for name, desc in deserialize(data):
        dtype = _dtypes.torch_dtype(desc["dtype"])
        shape = desc["shape"]
        if desc["dtype"] == "F4" and shape:
            shape = shape[:-1] + [shape[-1] // 2]
        if not desc["data"]:
            out[name] = torch.empty(shape, dtype=dtype)
        else:
            out[name] = torch.frombuffer(desc["data"], dtype=torch.uint8).view(dtype).reshape(shape)
    return out


def load_file(filename, device="cpu", backend="mmap"):
    """name -> torch.Tensor on `device`, in file order."""
    with safe_open(filename, framework="pt", device=device, backend=backend) as f:
        return {name: f.get_tensor(name) for name in f.offset_keys()}


def save_model(model, filename, metadata=None, force_contiguous=False):
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


def load_model(model, filename, strict=True, device="cpu"):
    """Loads a file written by save_model into `model`. Returns (missing, unexpected) names; with
    `strict`, any of either raises RuntimeError. Names dropped as tied are not missing."""
    state_dict = load_file(filename, device=device)
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
