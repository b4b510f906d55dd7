# SPDX-License-Identifier: Apache-2.0
"""Dtype names: the format's codes ("F32"), numpy's and torch's names ("float32"), and the
numpy/torch dtype objects for each code."""

from ._safetensors_cxx import SafetensorError

# Format code -> the name numpy and torch use (torch's for the types numpy lacks).
CODE_TO_NAME = {
    "BOOL": "bool",
    "U8": "uint8",
    "I8": "int8",
    "U16": "uint16",
    "I16": "int16",
    "U32": "uint32",
    "I32": "int32",
    "U64": "uint64",
    "I64": "int64",
    "F16": "float16",
    "BF16": "bfloat16",
    "F32": "float32",
    "F64": "float64",
    "C64": "complex64",
    "F8_E4M3": "float8_e4m3fn",
    "F8_E5M2": "float8_e5m2",
    "F8_E8M0": "float8_e8m0fnu",
    "F8_E4M3FNUZ": "float8_e4m3fnuz",
    "F8_E5M2FNUZ": "float8_e5m2fnuz",
    "F4": "float4_e2m1fn_x2",
}
NAME_TO_CODE = {name: code for code, name in CODE_TO_NAME.items()}
NAME_TO_CODE["bool_"] = "BOOL"  # numpy's scalar type np.bool_
# Codes without a name above (F6_*) are accepted as codes only.
ALL_CODES = set(CODE_TO_NAME) | {"F6_E2M3", "F6_E3M2"}

# numpy has no bfloat16 nor 8/6/4-bit floats.
NUMPY_CODES = ("BOOL", "U8", "I8", "U16", "I16", "U32", "I32", "U64", "I64", "F16", "F32", "F64", "C64")


def to_code(dtype):
    """A dtype given as a code ("F32"), a name ("float32", "torch.float32") or a numpy/torch
    dtype object, as its format code. Unknown dtypes raise SafetensorError."""
    name = dtype.__name__ if isinstance(dtype, type) else str(dtype).rsplit(".", 1)[-1]  # np.int64, torch.int64
    if name in NAME_TO_CODE:
        return NAME_TO_CODE[name]
    if name in ALL_CODES:
        return name
    raise SafetensorError(f"dtype {name} is not covered")


def numpy_dtype(code):
    import numpy as np

    if code not in NUMPY_CODES:
        raise SafetensorError(f"numpy has no dtype for {code}; open the file with framework='pt'")
    return np.dtype(CODE_TO_NAME[code]).newbyteorder("<")


def torch_dtype(code):
    import torch

    found = getattr(torch, CODE_TO_NAME.get(code, ""), None)
    if not isinstance(found, torch.dtype):
        raise SafetensorError(f"torch {torch.__version__} has no dtype for {code}")
    return found


_TORCH_ITEMSIZE = {}


def torch_itemsize(dtype):
    """Bytes per element of a torch dtype (cached: torch 1.13 has no dtype.itemsize)."""
    size = _TORCH_ITEMSIZE.get(dtype)
    if size is None:
        import torch

        size = _TORCH_ITEMSIZE[dtype] = torch.empty((), dtype=dtype).element_size()
    return size
