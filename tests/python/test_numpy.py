# SPDX-License-Identifier: Apache-2.0
"""safetensors.numpy: round trips of every numpy dtype, metadata, layouts and input errors."""

import numpy as np
import pytest

from safetensors import SafetensorError, safe_open
from safetensors.numpy import load, load_file, save, save_file

NUMPY_DTYPES = ["bool", "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64",
                "float16", "float32", "float64", "complex64"]


def sample(dtype, shape, rng):
    if dtype == "bool":
        values = rng.random(shape) > 0.5
    elif dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    elif dtype == "complex64":
        values = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    else:
        values = rng.standard_normal(shape)
    return np.asarray(values, dtype=dtype)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_every_dtype_round_trips_through_a_file_and_bytes(tmp_path, dtype):
    rng = np.random.default_rng(len(dtype))
    tensors = {"scalar": sample(dtype, (), rng), "matrix": sample(dtype, (3, 5), rng),
               "empty": sample(dtype, (0, 4), rng)}
    path = tmp_path / "t.safetensors"
    save_file(tensors, path)
    for loaded in (load_file(path), load(save(tensors)), load(path.read_bytes())):
        assert sorted(loaded) == sorted(tensors)
        for name, array in tensors.items():
            assert loaded[name].dtype == array.dtype
            assert loaded[name].shape == array.shape
            np.testing.assert_array_equal(loaded[name], array)


def test_file_bytes_equal_save_bytes(tmp_path):
    tensors = {"b": np.arange(6, dtype=np.int16).reshape(2, 3), "a": np.ones(3, np.float64)}
    save_file(tensors, tmp_path / "t.safetensors", metadata={"k": "v"})
    assert (tmp_path / "t.safetensors").read_bytes() == save(tensors, metadata={"k": "v"})


def test_loaded_arrays_are_writable_copies(tmp_path):
    path = tmp_path / "t.safetensors"
    save_file({"a": np.zeros(4, np.float32)}, path)
    a = load_file(path)["a"]
    a[0] = 7  # the file's mapping is read-only: a view into it would crash here
    assert load_file(path)["a"][0] == 0


def test_metadata_round_trips_and_defaults_to_none(tmp_path):
    path = tmp_path / "t.safetensors"
    save_file({"a": np.zeros(1)}, path, metadata={"format": "np", "ünïcode": "välue"})
    with safe_open(path, framework="np") as f:
        assert f.metadata() == {"format": "np", "ünïcode": "välue"}
    save_file({"a": np.zeros(1)}, path)
    with safe_open(path, framework="numpy") as f:
        assert f.metadata() is None


def test_non_contiguous_and_big_endian_arrays_are_saved_by_value(tmp_path):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    tensors = {"t": base.T, "strided": base[:, ::2], "be": np.arange(5, dtype=">i4")}
    loaded = load(save(tensors))
    np.testing.assert_array_equal(loaded["t"], base.T)
    np.testing.assert_array_equal(loaded["strided"], base[:, ::2])
    np.testing.assert_array_equal(loaded["be"], np.arange(5))
    assert loaded["be"].dtype == np.dtype("<i4")


def test_bad_inputs_raise_like_the_reference(tmp_path):
    with pytest.raises(ValueError, match="Expected a dict"):
        save([np.zeros(1)])
    with pytest.raises(ValueError, match="Key `a` is invalid"):
        save({"a": [1, 2]})
    with pytest.raises(SafetensorError, match="float128|longdouble"):
        save({"a": np.zeros(2, dtype=np.longdouble)})
    with pytest.raises(TypeError, match="argument 'metadata': 'int' object cannot be converted to 'PyString'"):
        save({"a": np.zeros(1)}, metadata={"k": 1})
    with pytest.raises(TypeError, match="argument 'tensor_dict': 'int' object cannot be converted to 'PyString'"):
        save({1: np.zeros(1)})
    with pytest.raises(FileNotFoundError):
        load_file(tmp_path / "missing.safetensors")


def test_a_failed_save_leaves_the_old_file(tmp_path):
    path = tmp_path / "t.safetensors"
    save_file({"a": np.ones(2)}, path)
    with pytest.raises(SafetensorError):
        save_file({"__metadata__": np.ones(2)}, path)  # a reserved name
    np.testing.assert_array_equal(load_file(path)["a"], np.ones(2))


def test_dtypes_numpy_lacks_are_refused_for_numpy(tmp_path, write_raw):
    path = write_raw("bf16.safetensors", {"a": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}, b"\0" * 4)
    with safe_open(path, framework="np") as f:
        assert f.get_slice("a").get_dtype() == "BF16"
        with pytest.raises(SafetensorError, match="numpy has no dtype for BF16"):
            f.get_tensor("a")


def test_a_path_with_a_nul_byte_names_no_file(tmp_path):
    # open(2) stops at the NUL: "victim\0.txt" would be "victim", replaced or read instead.
    victim = tmp_path / "victim"
    save_file({"q": np.zeros(1)}, str(victim))
    before = victim.read_bytes()
    for bad in (str(victim) + "\0.txt", str(victim).encode() + b"\0.txt"):
        with pytest.raises(SafetensorError, match="NUL byte at byte"):
            save_file({"q": np.ones(2)}, bad)
        with pytest.raises(SafetensorError, match="NUL byte at byte"):
            load_file(bad)
        with pytest.raises(SafetensorError, match="NUL byte at byte"):
            safe_open(bad, framework="np")
    assert victim.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["victim"]
