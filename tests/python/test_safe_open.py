# SPDX-License-Identifier: Apache-2.0
"""safe_open, get_slice, serialize/deserialize and the errors of the top-level API."""

import io

import numpy as np
import pytest

import safetensors
from safetensors import SafetensorError, TensorSpec, _safe_open_handle, deserialize, safe_open, serialize
from safetensors.numpy import save_file


@pytest.fixture
def sample_file(tmp_path):
    path = tmp_path / "s.safetensors"
    tensors = {"zeta": np.arange(10, dtype=np.int32), "alpha": np.arange(6, dtype=np.float64).reshape(2, 3),
               "mid": np.ones((4, 1), np.uint8)}
    save_file(tensors, path, metadata={"who": "test"})
    return path, tensors


def test_keys_are_sorted_and_offset_keys_follow_the_data(sample_file):
    path, tensors = sample_file
    with safe_open(path, framework="np") as f:
        assert f.keys() == ["alpha", "mid", "zeta"]
        # The writer orders by dtype width (F64 first, then I32, then U8).
        assert f.offset_keys() == ["alpha", "zeta", "mid"]
        assert f.metadata() == {"who": "test"}
        for name in tensors:
            np.testing.assert_array_equal(f.get_tensor(name), tensors[name])
        assert sorted(f.get_tensors()) == sorted(tensors)


def test_version_and_exception_type():
    assert isinstance(safetensors.__version__, str) and "+cxx." in safetensors.__version__
    assert issubclass(SafetensorError, Exception)


def random_key(rng, shape):
    """A random numpy index: ints (negative too), slices with steps of both signs, one `...`."""
    key, used_ellipsis = [], False
    for size in shape:
        choice = rng.integers(0, 5)
        if choice == 0 and size > 0:
            key.append(int(rng.integers(-size, size)))
        elif choice == 1 and not used_ellipsis:
            key.append(Ellipsis)
            used_ellipsis = True
        else:
            bound = size + 3
            start = None if rng.random() < 0.3 else int(rng.integers(-bound, bound))
            stop = None if rng.random() < 0.3 else int(rng.integers(-bound, bound))
            step = None if rng.random() < 0.3 else int(rng.choice([-3, -2, -1, 1, 2, 3]))
            key.append(slice(start, stop, step))
    key = key[: int(rng.integers(0, len(key) + 1))]  # trailing dimensions may be left out
    return tuple(key) if len(key) != 1 or rng.random() < 0.5 else key[0]


def past_the_end(key, shape):
    """Whether upstream main refuses `key`: a slice (step None or positive) whose explicit start is
    at or past its dimension's size, or whose explicit stop is past it (numpy clamps both)."""
    items = key if isinstance(key, tuple) else (key,)
    if Ellipsis in items:
        cut = items.index(Ellipsis)
        after = items[cut + 1:]
        placed = list(enumerate(items[:cut])) + list(zip(range(len(shape) - len(after), len(shape)), after))
    else:
        placed = list(enumerate(items))
    return any(isinstance(item, slice) and (item.step is None or item.step > 0)
               and ((item.start is not None and item.start >= shape[dim])
                    or (item.stop is not None and item.stop > shape[dim]))
               for dim, item in placed if dim < len(shape))


def test_slices_match_numpy_on_random_specs(tmp_path):
    rng = np.random.default_rng(1234)
    arrays = {"a": rng.standard_normal((5, 7, 3)).astype(np.float32), "b": np.arange(11, dtype=np.int16),
              "c": rng.integers(0, 255, (4, 0, 2), dtype=np.uint8), "d": np.array(3.5)}
    path = tmp_path / "slices.safetensors"
    save_file(arrays, path)
    with safe_open(path, framework="np") as f:
        for name, array in arrays.items():
            sl = f.get_slice(name)
            assert sl.get_shape() == list(array.shape)
            for _ in range(150):
                key = random_key(rng, array.shape)
                try:
                    expected = array[key]
                except IndexError:  # an integer out of bounds: ours must refuse it too
                    with pytest.raises(SafetensorError):
                        sl[key]
                    continue
                if past_the_end(key, array.shape):
                    with pytest.raises(SafetensorError, match="out of bounds for tensor dimension"):
                        sl[key]
                    continue
                got = sl[key]
                assert got.shape == expected.shape, (name, key)
                np.testing.assert_array_equal(got, expected, err_msg=f"{name}{key}")


def test_slice_errors(sample_file):
    path, _ = sample_file
    with safe_open(path, framework="np") as f:
        sl = f.get_slice("alpha")
        assert sl.get_dtype() == "F64"
        with pytest.raises(SafetensorError) as e:
            sl[2]  # out of bounds
        assert e.value.code == "InvalidSlice"
        with pytest.raises(SafetensorError):
            sl[0, 0, 0]  # too many indices
        with pytest.raises(SafetensorError):
            sl[::0]
        with pytest.raises(SafetensorError):
            sl[None]
        np.testing.assert_array_equal(sl[np.int64(1)], [3.0, 4.0, 5.0])


def test_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        safe_open(tmp_path / "nope.safetensors", framework="pt")
    assert e.value.errno == 2
    # Upstream main's words: the path as Rust's Path::display() prints it, unquoted.
    assert str(e.value) == f"No such file or directory: {tmp_path / 'nope.safetensors'}"
    with pytest.raises(FileNotFoundError) as e:
        safe_open("notafile", framework="np", backend="pread")
    assert str(e.value) == "No such file or directory: notafile"
    with pytest.raises(FileNotFoundError) as e:
        safe_open('no"ta\\fi\nle', framework="np")
    assert str(e.value) == 'No such file or directory: no"ta\\fi\nle'


def test_paths_may_be_str_bytes_or_path_like(sample_file):
    path, tensors = sample_file
    for name in (str(path), path, bytes(path)):
        with safe_open(name, framework="np") as f:
            assert f.keys() == sorted(tensors)
    save_file(tensors, bytes(path))


def test_device_and_backend_errors_use_the_reference_words(sample_file):
    path, _ = sample_file
    with pytest.raises(SafetensorError) as e:
        safe_open(path, framework="pt", device="bogus")
    assert str(e.value) == "device bogus is invalid"
    with pytest.raises(SafetensorError) as e:
        safe_open(path, framework="np", device="cuda:0")
    assert str(e.value) == "Device cuda:0 is not supported for framework numpy"
    with pytest.raises(SafetensorError) as e:
        safe_open(path, framework="pt", backend="bogus")
    assert str(e.value) == 'backend "bogus" is invalid (expected one of: "mmap", "pread")'
    with safe_open(path, framework="pt", device="cpu") as f:
        assert f.keys()


def test_unknown_tensor_raises_safetensor_error(sample_file):
    path, _ = sample_file
    with safe_open(path, framework="np") as f:
        for call in (f.get_tensor, f.get_slice):
            with pytest.raises(SafetensorError, match="does not contain tensor nope") as e:
                call("nope")
            assert e.value.code == "TensorNotFound" and e.value.tensor == "nope" and e.value.path == str(path)
        with pytest.raises(SafetensorError) as e:
            f.get_slice("alpha")[0, 0, 0]
        assert e.value.path == str(path) and e.value.tensor == "alpha"


@pytest.mark.parametrize("header,data,prefix,code", [
    ({}, b"", 1000, "InvalidHeaderLength"),
    ({}, b"", 200_000_000, "HeaderTooLarge"),
    ({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8, None, "InvalidOffset"),
    ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4, None, "MetadataIncompleteBuffer"),
    ({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8, None, "TensorInvalidInfo"),
    ({"a": {"dtype": "X9", "shape": [1], "data_offsets": [0, 1]}}, b"\0", None, "InvalidHeaderDeserialization"),
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}',
     b"\0", None, "DuplicateKey"),
])
def test_invalid_files_raise_safetensor_error_with_our_code(write_raw, header, data, prefix, code):
    path = write_raw("bad.safetensors", header, data, prefix)
    with pytest.raises(SafetensorError) as e:
        safe_open(path, framework="np")
    assert e.value.code == code
    assert str(path) in str(e.value)


def test_framework_and_device_are_checked(sample_file):
    path, _ = sample_file
    with pytest.raises(SafetensorError, match="framework nope is invalid"):
        safe_open(path, framework="nope")
    with pytest.raises(SafetensorError, match="not supported"):
        safe_open(path, framework="np", device="cuda:0")


def test_a_closed_handle_refuses_reads_but_keeps_what_was_read(sample_file):
    path, tensors = sample_file
    with safe_open(path, framework="np") as f:
        zeta = f.get_tensor("zeta")
        sl = f.get_slice("zeta")
    np.testing.assert_array_equal(zeta, tensors["zeta"])
    with pytest.raises(SafetensorError, match="closed"):
        f.get_tensor("zeta")
    with pytest.raises(SafetensorError, match="closed"):
        sl[0:2]


@pytest.mark.parametrize("backend", ["mmap", "pread"])
def test_backends_read_the_same(sample_file, backend):
    path, tensors = sample_file
    with safe_open(path, framework="np", backend=backend) as f:
        for name, array in tensors.items():
            np.testing.assert_array_equal(f.get_tensor(name), array)
            np.testing.assert_array_equal(f.get_slice(name)[1:], array[1:])


def test_safe_open_handle_reads_open_files_and_file_like_objects(sample_file):
    path, tensors = sample_file
    with open(path, "rb") as raw, _safe_open_handle(raw, framework="np") as f:
        np.testing.assert_array_equal(f.get_tensor("alpha"), tensors["alpha"])
    with _safe_open_handle(io.BytesIO(path.read_bytes()), framework="np") as f:
        assert f.keys() == sorted(tensors)
        np.testing.assert_array_equal(f.get_tensor("zeta"), tensors["zeta"])


def test_serialize_takes_tensor_specs_refuses_dicts_and_deserialize_inverts_it(tmp_path):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([1, 2, 3], dtype=np.uint8)
    spec = TensorSpec(dtype="float32", shape=[2, 3], data_ptr=a.ctypes.data, data_len=a.nbytes)
    assert (spec.dtype, spec.shape, spec.data_len) == ("F32", [2, 3], 24)
    b_spec = TensorSpec(dtype="U8", shape=(3,), data_ptr=b.ctypes.data, data_len=3)
    blob = serialize({"a": spec, "b": b_spec}, metadata={"m": "1"})
    items = deserialize(blob)
    assert [name for name, _ in items] == ["a", "b"]
    assert items[0][1] == {"shape": [2, 3], "dtype": "F32", "data": bytearray(a.tobytes())}
    assert items[1][1]["data"] == bytearray(b"\x01\x02\x03")
    safetensors.serialize_file({"b": b_spec}, tmp_path / "f.st")
    assert deserialize((tmp_path / "f.st").read_bytes())[0][1]["dtype"] == "U8"
    with pytest.raises(TypeError, match="'dict' object cannot be converted to 'TensorSpec'"):
        serialize({"b": {"dtype": "uint8", "shape": [3], "data": b.tobytes()}})
    # Older reference releases raised SafetensorError here, and their tests still check it.
    with pytest.raises(SafetensorError, match="'dict' object cannot be converted to 'TensorSpec'"):
        serialize({"test": {"dtype": "float32", "shape": [1]}})
    with pytest.raises(TypeError, match="'dict' object cannot be converted to 'TensorSpec'"):
        safetensors.serialize_file({"b": {"dtype": "U8", "shape": [3], "data": b}}, tmp_path / "g.st")
    assert not (tmp_path / "g.st").exists()


def test_serialize_errors():
    with pytest.raises(SafetensorError, match="dtype float128 is not covered"):
        TensorSpec(dtype="float128", shape=[1], data_ptr=0, data_len=0)
    data = np.zeros(1, np.uint8)
    with pytest.raises(SafetensorError, match="tensor 'a' has 1 bytes of data, its dtype and shape need 2"):
        serialize({"a": TensorSpec(dtype="uint8", shape=[2], data_ptr=data.ctypes.data, data_len=1)})
    with pytest.raises(SafetensorError, match="negative dimension -1 in a shape"):
        serialize({"a": TensorSpec(dtype="uint8", shape=[-1], data_ptr=data.ctypes.data, data_len=1)})
    with pytest.raises(TypeError, match="'int' object cannot be converted to 'PyString'"):
        serialize({1: TensorSpec(dtype="uint8", shape=[1], data_ptr=data.ctypes.data, data_len=1)})
    with pytest.raises(TypeError, match="argument 'metadata'"):
        serialize({}, metadata={"a": 2})
    with pytest.raises(SafetensorError):
        deserialize(b"\x01\x00")
