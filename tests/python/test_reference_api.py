# SPDX-License-Identifier: Apache-2.0
"""API the reference package's current test suite uses (its test_no_mmap.py,
test_strided_slice.py and test_safetensor_error_pickle.py), checked against our module:
the `mmap=False` opt-out, `get_strided_slice`, and picklable errors."""

import pickle

import numpy as np
import pytest

from safetensors import SafetensorError, _safe_open_handle, safe_open
from safetensors.numpy import load_file as np_load_file
from safetensors.numpy import save_file as np_save_file

ARRAYS = {
    "w_2d": np.arange(8 * 16, dtype=np.float32).reshape(8, 16),
    "w_3d": np.arange(4 * 6 * 8, dtype=np.float32).reshape(4, 6, 8),
}


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "tiny.safetensors"
    np_save_file(ARRAYS, str(p), metadata={"foo": "bar"})
    return str(p)


def _views_a_mapping(array):
    """True when the array's memory is our private mapping of the file (mmap backend)."""
    base = array
    while isinstance(base, np.ndarray):
        base = base.base
    return type(getattr(base, "obj", None)).__name__ == "Mapping"  # via np.frombuffer's memoryview


def _cat(array, dim, intervals):
    return np.concatenate([array[(slice(None),) * dim + (slice(a, b),)] for a, b in intervals], axis=dim)


def test_mmap_false_reads_copies_with_the_pread_backend(path):
    with safe_open(path, framework="np", mmap=False) as f:
        assert f.metadata() == {"foo": "bar"}
        assert f._reader.backend == "pread"
        got = f.get_tensor("w_2d")
        np.testing.assert_array_equal(got, ARRAYS["w_2d"])
        assert not _views_a_mapping(got)
        np.testing.assert_array_equal(f.get_slice("w_2d")[:, 1:3], ARRAYS["w_2d"][:, 1:3])
    with safe_open(path, framework="np") as f:
        assert f._reader.backend == "mmap"
        assert _views_a_mapping(f.get_tensor("w_2d"))
    loaded = np_load_file(path, mmap=False)
    np.testing.assert_array_equal(loaded["w_3d"], ARRAYS["w_3d"])
    with open(path, "rb") as raw, _safe_open_handle(raw, framework="np", mmap=False) as f:
        assert f._reader.backend == "pread"


def test_mmap_false_in_torch_load_file_and_load_model(path, tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file, load_model, save_model

    loaded = load_file(path, mmap=False)
    assert torch.equal(loaded["w_2d"], torch.from_numpy(ARRAYS["w_2d"]))

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 3)

    src, dst = Tiny(), Tiny()
    save_model(src, str(tmp_path / "m.safetensors"))
    load_model(dst, str(tmp_path / "m.safetensors"), mmap=False)
    assert torch.equal(src.lin.weight, dst.lin.weight)


@pytest.mark.parametrize("backend", ["mmap", "pread"])
@pytest.mark.parametrize("name,dim,intervals", [
    ("w_2d", 0, [(0, 2), (4, 6)]),
    ("w_2d", 1, [(0, 4), (8, 12)]),
    ("w_3d", 2, [(0, 2), (3, 5), (6, 8)]),
    ("w_3d", 1, [(0, 1), (3, 5)]),
    ("w_2d", 0, [(4, 6), (0, 2)]),  # the caller's order
    ("w_2d", 0, [(0, 3), (1, 4)]),  # overlaps repeat data
    ("w_2d", -1, [(2, 5)]),
])
def test_get_strided_slice_is_the_concatenation_of_the_pieces(path, backend, name, dim, intervals):
    with safe_open(path, framework="np", backend=backend) as f:
        got = f.get_strided_slice(name, dim=dim, intervals=intervals)
    np.testing.assert_array_equal(got, _cat(ARRAYS[name], dim % ARRAYS[name].ndim, intervals))


def test_get_strided_slice_in_torch(path):
    torch = pytest.importorskip("torch")
    with safe_open(path, framework="pt") as f:
        got = f.get_strided_slice("w_2d", dim=1, intervals=[(0, 4), (8, 12)])
    assert isinstance(got, torch.Tensor)
    assert torch.equal(got, torch.from_numpy(_cat(ARRAYS["w_2d"], 1, [(0, 4), (8, 12)])))


@pytest.mark.parametrize("name,dim,intervals,message", [
    ("w_2d", 5, [(0, 1)], "dim 5 is invalid"),
    ("w_2d", 0, [], "intervals is empty"),
    ("w_2d", 0, [(4, 2)], r"interval \(4, 2\) is invalid"),
    ("w_2d", 0, [(3, 3)], r"interval \(3, 3\) is invalid"),
    ("w_2d", 0, [(0, 100)], r"interval \(0, 100\) is invalid for dimension 0 of size 8"),
])
def test_get_strided_slice_refuses_bad_arguments(path, name, dim, intervals, message):
    with safe_open(path, framework="np") as f:
        with pytest.raises(SafetensorError, match=message):
            f.get_strided_slice(name, dim=dim, intervals=intervals)
        with pytest.raises(SafetensorError, match="does not contain tensor"):
            f.get_strided_slice("does_not_exist", dim=0, intervals=[(0, 1)])


def test_safetensor_error_pickles(path):
    for err in (SafetensorError(), SafetensorError("Error while deserializing header")):
        restored = pickle.loads(pickle.dumps(err))
        assert isinstance(restored, SafetensorError) and restored.args == err.args and str(restored) == str(err)
    with pytest.raises(SafetensorError) as e:
        with safe_open(path, framework="np") as f:
            f.get_tensor("absent")
    restored = pickle.loads(pickle.dumps(e.value))
    assert str(restored) == str(e.value) and restored.tensor == "absent"
