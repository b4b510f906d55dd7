# SPDX-License-Identifier: Apache-2.0
"""Tensor-parallel loading: each rank of a job reads only its part of every split tensor
(safetensors.cxx.load_sharded; the plan format is in docs/remote.md)."""

import json
import os
from typing import Any, Dict, Union

from . import _dtypes
from ._open import (_BIG_ENDIAN, _byteswapped_torch, _device_name, _is_url, _remote_settings, _to_device,
                    _torch_shape)
from ._safetensors_cxx import SafetensorError, TensorParallelLoad

_REMOTE_OPTIONS = ("token", "ca_file", "insecure", "timeout", "connections")


def _plan_text(plan):
    if isinstance(plan, str):
        return plan
    if isinstance(plan, dict):
        return json.dumps(plan)  # keeps the rules' order: the first match wins
    raise SafetensorError(f"plan must be a dict or JSON text, not {type(plan).__name__}")


def load_sharded(path_or_url: Union[str, bytes, "os.PathLike[str]"], rank: int, world_size: int,
                 plan: Union[str, Dict[str, Any]], device: Any = "cpu", *, backend: str = "pread",
                 return_stats: bool = False, **remote: Any) -> Any:
    """Loads the tensors one rank of a tensor-parallel job needs: each tensor the plan splits is
    `torch.chunk(full, world_size, dim)[rank]`, read alone from the file; the others whole.

    Args:
        path_or_url (`str` or `os.PathLike`):
            A file, an index `.json` or a checkpoint directory, or an `http(s)://` or `file://`
            URL of one.
        rank (`int`):
            This rank, from 0 to `world_size - 1`.
        world_size (`int`):
            The number of ranks.
        plan (`Dict[str, Any]` or JSON text):
            Name patterns (exact names or globs) to rules, the first match winning:

                {"*.q_proj.weight": {"split": "column"},           # dim 0 (output features)
                 "*.o_proj.weight": {"split": "row"},              # dim 1 (input features)
                 "*.embed_tokens.weight": {"split": "column", "dim": 0},
                 "*.norm.weight": "replicate"}                     # the default for unmatched names

            A plan that does not fit a tensor (dim out of range, a size `world_size` does not
            divide) raises SafetensorError before anything is read, on every rank alike.
        device (`str`, *optional*, defaults to `"cpu"`):
            Where the tensors go.
        backend (`str`, *optional*, defaults to `"pread"`):
            `"pread"` or `"mmap"`.
        return_stats (`bool`, *optional*, defaults to `False`):
            Also return what was read.
        **remote:
            For a URL: `token`, `ca_file`, `insecure`, `timeout` and `connections` (the token
            defaults to `$SAFETENSORS_TOKEN`, then `$HF_TOKEN`).

    Returns:
        `Dict[str, torch.Tensor]`, or with `return_stats` a pair of it and a dict: `bytes` read by
        this rank, `split_bytes` of them from split tensors, `split_full_bytes` (the split
        tensors' whole size), `checkpoint_bytes` (all tensors' size) and, for a URL,
        `http_requests` and `http_bytes`. Ctrl-C stops the load (KeyboardInterrupt).

    Example:

    ```python
    from safetensors.cxx import load_sharded

    tensors = load_sharded("model.safetensors.index.json", rank, world_size,
                           {"*.q_proj.weight": {"split": "column"}}, device=f"cuda:{rank}")
    ```
    """
    import numpy as np
    import torch

    unknown = sorted(set(remote) - set(_REMOTE_OPTIONS))
    if unknown:
        raise TypeError(f"load_sharded() got unexpected keyword arguments {unknown}")
    device = _device_name(device)
    if isinstance(rank, bool) or isinstance(world_size, bool) or not isinstance(rank, int) \
            or not isinstance(world_size, int) or world_size < 1 or not 0 <= rank < world_size:
        raise SafetensorError(f"rank {rank!r} is not in a world of size {world_size!r}")
    path = os.fsdecode(path_or_url)
    if remote and _is_url(path):
        remote = _remote_settings(**remote)  # checked by the extension, as safe_open's
    loader = TensorParallelLoad(path, rank, world_size, _plan_text(plan), backend, remote)
    parts = loader.tensors()
    buffers = [np.empty(max(nbytes, 1), dtype=np.uint8)[:nbytes] for _, _, _, nbytes, _, _ in parts]
    loader.load_into(buffers)
    out = {}
    for (name, code, shape, nbytes, _, _), raw in zip(parts, buffers):
        dtype = _dtypes.torch_dtype(code)
        shape = _torch_shape(code, shape)
        tensor = torch.from_numpy(raw).view(dtype).reshape(shape) if nbytes else torch.empty(shape, dtype=dtype)
        if _BIG_ENDIAN:
            tensor = _byteswapped_torch(tensor)
        out[name] = _to_device(tensor, device)
    if return_stats:
        return out, loader.stats()
    return out
