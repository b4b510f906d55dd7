#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The C API from another language: Python's ctypes loads libsafetensors_c.so by path.

Every file of the conformance corpus must get its expected verdict (verdicts.tsv) opened
with mmap, pread and from memory; with --cli, the verdict (code, offset, tensor) of
`safetensors validate --json` under each policy too. Then tensors written through the C
writer are read back whole and through numpy-style slices, compared with numpy's own
slicing. Prints "ctypes consumer ok: N files".
"""
import argparse
import ctypes as C
import json
import os
import subprocess
import sys

OK = 0
DTYPES = {"F32": 17, "F64": 19, "I64": 20, "U8": 4, "I16": 11, "BF16": 14}
POLICIES = {"reference": 0, "strict": 1, "lenient": 2}
# The CLI's input diagnosis rewrites these for a terminal ("empty file", "this is a GGUF file")
# without the offset; their code and every other verdict's location must agree.
LENGTH_PREFIX_ERRORS = ("HeaderTooSmall", "HeaderTooLarge", "InvalidHeaderLength")


def load(path):
    lib = C.CDLL(path)
    p, u64, size = C.c_void_p, C.c_uint64, C.c_size_t
    sigs = {
        "safetensors_version": (C.c_char_p, []),
        "safetensors_status_name": (C.c_char_p, [C.c_int]),
        "safetensors_last_error_code": (C.c_int, []),
        "safetensors_last_error_message": (C.c_char_p, []),
        "safetensors_last_error_offset": (C.c_int, [C.POINTER(u64)]),
        "safetensors_last_error_tensor": (C.c_char_p, []),
        "safetensors_options_new": (C.c_int, [C.POINTER(p)]),
        "safetensors_options_free": (None, [p]),
        "safetensors_options_set_backend": (C.c_int, [p, C.c_int]),
        "safetensors_options_set_policy": (C.c_int, [p, C.c_int]),
        "safetensors_open": (C.c_int, [C.c_char_p, p, C.POINTER(p)]),
        "safetensors_open_buffer": (C.c_int, [p, size, p, C.POINTER(p)]),
        "safetensors_close": (None, [p]),
        "safetensors_tensor_count": (C.c_int, [p, C.POINTER(size)]),
        "safetensors_tensor_find": (C.c_int, [p, C.c_char_p, C.POINTER(size)]),
        "safetensors_tensor_name": (C.c_int, [p, size, C.POINTER(C.c_char_p), C.POINTER(size)]),
        "safetensors_tensor_dtype": (C.c_int, [p, size, C.POINTER(C.c_int)]),
        "safetensors_tensor_shape": (C.c_int, [p, size, C.POINTER(C.POINTER(u64)), C.POINTER(size)]),
        "safetensors_tensor_offsets": (C.c_int, [p, size, C.POINTER(u64), C.POINTER(u64)]),
        "safetensors_tensor_read": (C.c_int, [p, size, p, size]),
        "safetensors_tensor_read_f32": (C.c_int, [p, size, p, size]),
        "safetensors_slice_new": (C.c_int, [p, size, C.c_char_p, C.POINTER(p)]),
        "safetensors_slice_free": (None, [p]),
        "safetensors_slice_shape": (C.c_int, [p, C.POINTER(C.POINTER(u64)), C.POINTER(size)]),
        "safetensors_slice_byte_size": (C.c_int, [p, C.POINTER(u64)]),
        "safetensors_slice_read": (C.c_int, [p, p, size]),
        "safetensors_metadata_get": (C.c_int, [p, C.c_char_p, C.POINTER(C.c_char_p), C.POINTER(size)]),
        "safetensors_writer_new": (C.c_int, [C.POINTER(p)]),
        "safetensors_writer_free": (None, [p]),
        "safetensors_writer_add_tensor": (C.c_int, [p, C.c_char_p, C.c_int, C.POINTER(u64), size, p, size]),
        "safetensors_writer_set_metadata": (C.c_int, [p, C.c_char_p, C.c_char_p]),
        "safetensors_writer_write": (C.c_int, [p, C.c_char_p]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


class Error(Exception):
    pass


class Api:
    def __init__(self, lib):
        self.lib = lib

    def check(self, status):
        if status != OK:
            raise Error(self.lib.safetensors_status_name(status).decode())

    def last_error(self):
        offset = C.c_uint64()
        has = self.lib.safetensors_last_error_offset(C.byref(offset))
        tensor = self.lib.safetensors_last_error_tensor()
        return offset.value if has else None, tensor.decode() if tensor is not None else None

    def open(self, path=None, data=None, backend=0, policy=0):
        """(verdict, handle or None, offset, tensor)"""
        options, handle = C.c_void_p(), C.c_void_p()
        self.check(self.lib.safetensors_options_new(C.byref(options)))
        self.check(self.lib.safetensors_options_set_backend(options, backend))
        self.check(self.lib.safetensors_options_set_policy(options, policy))
        if data is not None:  # a ctypes buffer: the handle reads it in place
            status = self.lib.safetensors_open_buffer(data, C.sizeof(data), options, C.byref(handle))
        else:
            status = self.lib.safetensors_open(os.fsencode(path), options, C.byref(handle))
        self.lib.safetensors_options_free(options)
        if status == OK:
            return "ok", handle, None, None
        assert not handle.value and self.lib.safetensors_last_error_code() == status
        return (self.lib.safetensors_status_name(status).decode(), None) + self.last_error()


def run_corpus(api, corpus, cli):
    rows = []
    with open(os.path.join(corpus, "verdicts.tsv"), encoding="utf-8") as tsv:
        next(tsv)
        for line in tsv:
            fields = line.rstrip("\n").split("\t")
            rows.append((fields[0], fields[2]))
    failures = []
    for name, expected in rows:
        path = os.path.join(corpus, name)
        with open(path, "rb") as f:
            data = f.read()
        buffer = C.create_string_buffer(data, len(data))  # outlives the handle
        for how, kwargs in (("mmap", {"path": path}), ("pread", {"path": path, "backend": 1}),
                            ("buffer", {"data": buffer})):
            got, handle, _, _ = api.open(**kwargs)
            if handle:
                api.lib.safetensors_close(handle)
            if got != expected:
                failures.append(f"{name} ({how}): {got}, expected {expected}")
    if cli:
        for policy, number in POLICIES.items():
            out = subprocess.run([cli, "validate", "--json", "--policy", policy] +
                                 [os.path.join(corpus, n) for n, _ in rows],
                                 stdout=subprocess.PIPE, check=False).stdout.decode()
            lines = [json.loads(line) for line in out.splitlines()]
            if len(lines) != len(rows):
                failures.append(f"the CLI printed {len(lines)} lines for {len(rows)} files")
            for doc in lines:
                got, handle, offset, tensor = api.open(path=doc["file"], policy=number)
                if handle:
                    api.lib.safetensors_close(handle)
                cli_verdict = ("ok", None, None) if doc["ok"] else (doc["code"], doc["offset"], doc["tensor"])
                if got in LENGTH_PREFIX_ERRORS:  # the CLI explains these, dropping offset 0
                    offset = cli_verdict[1]
                if (got, offset, tensor) != cli_verdict:
                    failures.append(f"{doc['file']} under {policy}: {(got, offset, tensor)}, the CLI {cli_verdict}")
    return len(rows), failures


def round_trip(api, scratch):
    try:
        import numpy as np
    except ImportError:
        print("numpy is missing: the slicing round trip is skipped")
        return []
    rng = np.random.default_rng(7)
    arrays = {
        "f32": rng.standard_normal((4, 5, 6)).astype(np.float32),
        "f64": rng.standard_normal((7, 3)),
        "i64": rng.integers(-1000, 1000, size=(9,)),
        "u8": rng.integers(0, 255, size=(2, 3, 4, 5)).astype(np.uint8),
        "i16": rng.integers(-3000, 3000, size=(6, 1, 4)).astype(np.int16),
        "scalar": np.array(3.5, dtype=np.float32),
    }
    kinds = {np.dtype(np.float32): "F32", np.dtype(np.float64): "F64", np.dtype(np.int64): "I64",
             np.dtype(np.uint8): "U8", np.dtype(np.int16): "I16"}
    writer = C.c_void_p()
    api.check(api.lib.safetensors_writer_new(C.byref(writer)))
    for name in arrays:
        a = arrays[name] = np.array(arrays[name], order="C")  # ascontiguousarray would make 0-d arrays 1-d
        dims = (C.c_uint64 * max(a.ndim, 1))(*a.shape)
        api.check(api.lib.safetensors_writer_add_tensor(writer, name.encode(), DTYPES[kinds[a.dtype]], dims, a.ndim,
                                                        a.ctypes.data, a.nbytes))
    api.check(api.lib.safetensors_writer_set_metadata(writer, b"format", b"np"))
    path = os.path.join(scratch, "ctypes.safetensors")
    api.check(api.lib.safetensors_writer_write(writer, os.fsencode(path)))
    api.lib.safetensors_writer_free(writer)

    failures = []
    verdict, f, _, _ = api.open(path=path)
    if verdict != "ok":
        return [f"{path}: {verdict}"]
    value = C.c_char_p()
    api.check(api.lib.safetensors_metadata_get(f, b"format", C.byref(value), None))
    if value.value != b"np":
        failures.append(f"metadata: {value.value}")
    specs = {
        "f32": ["", "1", "1:3, ::2", "..., -1", "-1, 1:, ::-2", "::-1", "2:1", "0:0"],
        "f64": ["::3", ":, 1", "-2:"],
        "i64": ["::-3", "4", "10:"],
        "u8": ["1, ..., 2", ":, ::-1, 1:3", "..."],
        "i16": [":, 0, ::3", "5, :, -1"],
        "scalar": ["", "..."],
    }
    for name, a in arrays.items():
        index = C.c_size_t()
        api.check(api.lib.safetensors_tensor_find(f, name.encode(), C.byref(index)))
        whole = np.empty_like(a)
        api.check(api.lib.safetensors_tensor_read(f, index, whole.ctypes.data, whole.nbytes))
        if not np.array_equal(whole, a):
            failures.append(f"{name}: whole tensor differs")
        for spec in specs[name]:
            # np.array, not ascontiguousarray: a 0-d result must keep shape ().
            expected = np.array(eval(f"a[{spec}]") if spec else a)  # noqa: S307 - our own literals
            s = C.c_void_p()
            api.check(api.lib.safetensors_slice_new(f, index, spec.encode(), C.byref(s)))
            dims, rank, size = C.POINTER(C.c_uint64)(), C.c_size_t(), C.c_uint64()
            api.check(api.lib.safetensors_slice_shape(s, C.byref(dims), C.byref(rank)))
            api.check(api.lib.safetensors_slice_byte_size(s, C.byref(size)))
            shape = tuple(dims[i] for i in range(rank.value))
            out = np.empty(shape, dtype=a.dtype)
            if size.value != out.nbytes:
                failures.append(f"{name}[{spec}]: {size.value} bytes, numpy {out.nbytes}")
            else:
                api.check(api.lib.safetensors_slice_read(s, out.ctypes.data, out.nbytes))
                if shape != expected.shape or not np.array_equal(out, expected):
                    failures.append(f"{name}[{spec}]: {shape} {out.ravel()[:4]}, numpy {expected.shape}")
            api.lib.safetensors_slice_free(s)
    api.lib.safetensors_close(f)
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--library", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--scratch", required=True)
    parser.add_argument("--cli")
    args = parser.parse_args()
    api = Api(load(args.library))
    files, failures = run_corpus(api, args.corpus, args.cli)
    os.makedirs(args.scratch, exist_ok=True)
    failures += round_trip(api, args.scratch)
    for failure in failures:
        print("FAIL", failure, file=sys.stderr)
    if failures:
        return 1
    print(f"ctypes consumer ok: {files} files (libsafetensors_c {api.lib.safetensors_version().decode()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
