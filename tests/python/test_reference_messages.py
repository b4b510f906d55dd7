# SPDX-License-Identifier: Apache-2.0
"""Messages as upstream main words them (huggingface/safetensors 24b0b28, bindings/python/src/lib.rs):
the reference's sentence first, our detail (path, message, offset, tensor) after it."""

import io

import numpy as np
import pytest

import safetensors.numpy as st_np
from safetensors import SafetensorError, TensorSpec, _safe_open_handle, deserialize, safe_open, serialize, serialize_file

BAD_JSON = b"\x04\x00\x00\x00\x00\x00\x00\x00{no}"


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "good.safetensors"
    st_np.save_file({"a": np.arange(10, dtype=np.float32).reshape(10, 1) * np.ones(5, np.float32)}, path)
    return path


@pytest.mark.parametrize("backend", ["mmap", "pread"])
def test_a_bad_header_is_an_error_while_deserializing_the_header(tmp_path, backend):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(BAD_JSON)
    with pytest.raises(SafetensorError) as e:
        safe_open(path, framework="np", backend=backend)
    assert str(e.value).startswith(f"Error while deserializing header: {path}: invalid JSON in header: ")
    assert e.value.code == "InvalidHeaderDeserialization" and e.value.path == str(path)
    with pytest.raises(SafetensorError, match="^Error while deserializing header: ") as e:
        st_np.load_file(path)


def test_a_bad_header_of_a_file_object_is_an_error_while_deserializing_the_header():
    for data in (BAD_JSON, b"\xff" * 8 + b"{}"):
        with pytest.raises(SafetensorError, match="^Error while deserializing header: "):
            _safe_open_handle(io.BytesIO(data), framework="np")


def test_bad_bytes_are_an_error_while_deserializing():
    for call in (deserialize, st_np.load):
        with pytest.raises(SafetensorError) as e:
            call(BAD_JSON)
        assert str(e.value).startswith("Error while deserializing: invalid JSON in header: ")
        assert e.value.code == "InvalidHeaderDeserialization"


def test_serialize_failures_are_errors_while_serializing(tmp_path):
    data = np.zeros(3, np.uint8)
    spec = TensorSpec(dtype="uint8", shape=[4], data_ptr=data.ctypes.data, data_len=3)
    with pytest.raises(SafetensorError) as e:
        serialize({"a": spec})
    assert str(e.value) == "Error while serializing: tensor 'a' has 3 bytes of data, its dtype and shape need 4"
    with pytest.raises(SafetensorError, match="^Error while serializing: tensor 'a' has 3 bytes"):
        serialize_file({"a": spec}, tmp_path / "x.safetensors")
    assert not (tmp_path / "x.safetensors").exists()


def test_save_file_into_a_missing_folder_is_a_safetensor_error(tmp_path):
    target = tmp_path / "missing" / "x.safetensors"
    with pytest.raises(SafetensorError) as e:
        st_np.save_file({"a": np.zeros(2)}, target)
    assert not isinstance(e.value, OSError)  # the reference raises SafetensorError, not FileNotFoundError
    assert str(e.value).startswith("Error while serializing: ") and "No such file or directory" in str(e.value)
    assert e.value.code == "IoError"
    assert not (tmp_path / "missing").exists()


def test_a_missing_tensor_is_the_references_sentence_then_the_path(good):
    with safe_open(good, framework="np") as f:
        for call in (f.get_tensor, f.get_slice):
            with pytest.raises(SafetensorError) as e:
                call("nope")
            assert str(e.value) == f"File does not contain tensor nope ({good})"
            assert e.value.code == "TensorNotFound" and e.value.tensor == "nope"
    with open(good, "rb") as raw:
        stream = io.BytesIO(raw.read())
    with _safe_open_handle(stream, framework="np") as f:
        with pytest.raises(SafetensorError) as e:
            f.get_tensor("nope")
        assert str(e.value) == "File does not contain tensor nope"


def test_a_missing_file_is_file_not_found_with_the_path_unquoted():
    with pytest.raises(FileNotFoundError) as e:
        safe_open("notafile", framework="pt")
    assert str(e.value) == "No such file or directory: notafile" and e.value.errno == 2


@pytest.mark.parametrize("key,message", [
    (np.s_[:20], "Error during slicing [:20] with shape [10, 5]: index 19 out of bounds for tensor dimension #0 of size 10"),
    (np.s_[:, :20],
     "Error during slicing [:, :20] with shape [10, 5]: index 19 out of bounds for tensor dimension #1 of size 5"),
    (np.s_[2:, 20],
     "Error during slicing [2:, 20] with shape [10, 5]: index 20 out of bounds for tensor dimension #1 of size 5"),
    (np.s_[10:], "Error during slicing [10:] with shape [10, 5]: index 10 out of bounds for tensor dimension #0 of size 10"),
    (np.s_[12:20],
     "Error during slicing [12:20] with shape [10, 5]: index 12 out of bounds for tensor dimension #0 of size 10"),
    (np.s_[..., 3:6],
     "Error during slicing [..., 3:6] with shape [10, 5]: index 5 out of bounds for tensor dimension #1 of size 5"),
])
@pytest.mark.parametrize("backend", ["mmap", "pread"])
def test_slice_bounds_past_the_end_are_errors_as_on_main(good, backend, key, message):
    with safe_open(good, framework="np", backend=backend) as f:
        with pytest.raises(SafetensorError) as e:
            f.get_slice("a")[key]
        assert str(e.value) == message and e.value.code == "InvalidSlice"


def test_slices_within_bounds_and_our_extras_still_work(good):
    full = st_np.load_file(good)["a"]
    with safe_open(good, framework="np") as f:
        sl = f.get_slice("a")
        for key in (np.s_[:10], np.s_[:, :5], np.s_[9:10], np.s_[::3], np.s_[-20:], np.s_[8:2:-2], np.s_[:, -1],
                    np.s_[5:3]):
            np.testing.assert_array_equal(sl[key], full[key], err_msg=str(key))
