# SPDX-License-Identifier: Apache-2.0
"""What the reference package's test_simple.py checks with numpy, reproduced: byte-exact
serialization (order-invariant, aligned, metadata first, big-endian input), deserialization,
closed handles, slicing messages."""

import numpy as np
import pytest

from safetensors import SafetensorError, safe_open
from safetensors.numpy import load, load_file, save, save_file

ZEROS_2x2_I32 = b"\x00" * 16


def test_serialization_is_byte_exact(tmp_path):
    data = np.zeros((2, 2), dtype=np.int32)
    expected = (b'@\x00\x00\x00\x00\x00\x00\x00{"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}}   '
                b" " + ZEROS_2x2_I32)
    assert save({"test": data}) == expected
    save_file({"test": data}, tmp_path / "s.safetensors")
    assert (tmp_path / "s.safetensors").read_bytes() == expected
    data[1, 1] = 1
    assert save({"test": data})[-4:] == b"\x01\x00\x00\x00"


def test_deserialization():
    serialized = (b'<\x00\x00\x00\x00\x00\x00\x00{"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}}'
                  + ZEROS_2x2_I32)
    out = load(serialized)
    assert list(out) == ["test"]
    np.testing.assert_array_equal(out["test"], np.zeros((2, 2), dtype=np.int32))


def test_deserialization_metadata(tmp_path):
    serialized = (b'f\x00\x00\x00\x00\x00\x00\x00{"__metadata__":{"framework":"pt"},"test1":{"dtype":"I32",'
                  b'"shape":[2,2],"data_offsets":[0,16]}}       ' + ZEROS_2x2_I32)
    (tmp_path / "m.safetensors").write_bytes(serialized)
    with safe_open(tmp_path / "m.safetensors", framework="np") as g:
        assert g.metadata() == {"framework": "pt"}


def test_serialization_is_order_invariant_and_aligned():
    a, h = np.zeros((2, 2), dtype=np.int32), np.zeros((2, 2), dtype=np.float16)
    assert save({"test1": a, "test2": a}) == save({"test2": a, "test1": a})
    out = save({"test1": a, "test2": h})
    assert out == save({"test2": h, "test1": a})
    assert out == (b'\x80\x00\x00\x00\x00\x00\x00\x00{"test1":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]},'
                   b'"test2":{"dtype":"F16","shape":[2,2],"data_offsets":[16,24]}}      ' + b"\x00" * 24)
    assert (out[8:].index(b"\x00") + 8) % 8 == 0


def test_serialization_metadata_and_big_endian_input():
    expected = (b'`\x00\x00\x00\x00\x00\x00\x00{"__metadata__":{"framework":"pt"},"test1":{"dtype":"I32",'
                b'"shape":[2,2],"data_offsets":[0,16]}} ' + ZEROS_2x2_I32)
    assert save({"test1": np.zeros((2, 2), dtype=np.int32)}, metadata={"framework": "pt"}) == expected
    assert save({"test1": np.zeros((2, 2), dtype=">i4")}, metadata={"framework": "pt"}) == expected
    big = np.arange(4, dtype=">i4")
    assert load(save({"b": big}))["b"].tolist() == [0, 1, 2, 3]


def test_numpy_example_and_bool(tmp_path):
    tensors = {"a": np.zeros((2, 2)), "b": np.zeros((2, 3), dtype=np.uint8), "c": np.asarray(False)}
    save_file(tensors, tmp_path / "out.safetensors")
    for loaded in (load_file(tmp_path / "out.safetensors"), load(save(tensors))):
        assert loaded.keys() == tensors.keys() or set(loaded) == set(tensors)
        for k, v in tensors.items():
            assert loaded[k].dtype == v.dtype and np.array_equal(loaded[k], v)


def test_a_closed_handle_raises(tmp_path):
    save_file({"a": np.zeros(2)}, tmp_path / "c.safetensors")
    with safe_open(tmp_path / "c.safetensors", framework="np") as f:
        pass
    with pytest.raises(SafetensorError):
        f.keys()
    (tmp_path / "c.safetensors").write_text("something")  # nothing holds the file open


def test_numpy_slice_messages(tmp_path):
    a = np.random.rand(10, 5)
    save_file({"a": a}, tmp_path / "slice.safetensors")
    with safe_open(tmp_path / "slice.safetensors", framework="np", device="cpu") as f:
        sl = f.get_slice("a")
        for key in (slice(None), slice(None, 2), (slice(None), slice(None, 2)), (0, slice(None, 2)),
                    (slice(2, None), 0), (slice(2, None), -1), (slice(2, None), -5)):
            np.testing.assert_array_equal(sl[key], a[key])
        assert list(sl[list()].shape) == [0, 5]
        with pytest.raises(SafetensorError) as e:
            sl[2:, -6]
        assert str(e.value) == "Invalid index -6 for dimension 1 of size 5"
        with pytest.raises(SafetensorError) as e:
            sl[[0, 1]]
        assert str(e.value) == "Non empty lists are not implemented"
        with pytest.raises(SafetensorError) as e:
            sl[2:, 20]
        assert str(e.value) == ("Error during slicing [2:, 20] with shape [10, 5]: index 20 out of bounds for "
                                "tensor dimension #1 of size 5")


def test_exception_for_a_bad_tensor_dict():
    from safetensors import serialize

    with pytest.raises(TypeError):
        serialize({"test": {"dtype": "float32", "shape": [1]}})
