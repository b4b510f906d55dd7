# SPDX-License-Identifier: Apache-2.0
"""What the reference package's own torch tests check (test_pt_model.py, test_pt_comparison.py,
test_simple.py), reproduced against our module: the private helpers real code imports, tied
weights in save_model/load_model, and tensors identical to torch.load's."""

import copy

import pytest

torch = pytest.importorskip("torch")

import safetensors.torch as st_torch  # noqa: E402
from safetensors import SafetensorError, TensorSpec, safe_open, serialize  # noqa: E402
from safetensors.torch import (  # noqa: E402
    _end_ptr,
    _find_shared_tensors,
    _flatten,
    _is_complete,
    _remove_duplicate_names,
    _tobytes,
    load,
    load_file,
    load_model,
    save,
    save_file,
    save_model,
    storage_ptr,
    storage_size,
)


class OnesModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.a.weight = torch.nn.Parameter(torch.ones((4, 4)))
        self.a.bias = torch.nn.Parameter(torch.ones((4,)))
        self.b = self.a


class TiedModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(10, 10)
        self.b = self.a


class TransposedModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(10, 10)
        self.a.weight = torch.nn.Parameter(torch.arange(100.0).reshape(10, 10).transpose(0, 1))


class CopyModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(10, 10)
        self.b = copy.deepcopy(self.a)


class UntiedModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(10, 10)
        self.b = torch.nn.Linear(10, 10)


def assert_same_state(model, other):
    state = model.state_dict()
    for k, v in other.state_dict().items():
        torch.testing.assert_close(v, state[k])


def test_module_level_names_of_the_reference_exist():
    for name in ("storage_ptr", "storage_size", "_end_ptr", "_is_complete", "_find_shared_tensors",
                 "_filter_shared_not_shared", "_remove_duplicate_names", "_flatten", "_tobytes", "_SIZE", "_TYPES",
                 "_getdtype", "_view2torch", "_float8_e4m3fn", "_float8_e5m2", "save", "save_file", "load",
                 "load_file", "save_model", "load_model", "safe_open", "serialize", "serialize_file", "deserialize",
                 "Dict", "Optional", "Union", "defaultdict"):
        assert hasattr(st_torch, name), name
    assert st_torch._SIZE[torch.bfloat16] == 2 and st_torch._TYPES["BF16"] is torch.bfloat16
    assert st_torch._getdtype("F32") is torch.float32


def test_is_complete():
    a = torch.zeros((3, 3))
    assert _is_complete(a)
    assert not _is_complete(a[:1, :])
    assert not _is_complete(a[::2, :])  # spans the storage, with holes
    assert _is_complete(torch.zeros((2, 2), device="meta"))


def test_find_shared_tensors():
    a = torch.zeros((3, 3))
    b = a[:1, :]
    assert _find_shared_tensors({"A": a, "B": b}) == [{"A", "B"}]
    assert _find_shared_tensors({"A": a}) == [{"A"}]
    assert _find_shared_tensors({"B": b}) == [{"B"}]
    c = torch.zeros((2, 2), device="meta")
    assert _find_shared_tensors({"C": c, "D": c[:1]}) == []


def test_find_shared_tensors_splits_a_storage_into_overlapping_runs():
    a = torch.zeros((4,))
    assert _find_shared_tensors({"B": a[:2], "C": a[2:]}) == [{"B"}, {"C"}]
    assert _find_shared_tensors({"B": a[:2], "C": a[1:]}) == [{"B", "C"}]
    assert _find_shared_tensors({"B": a[:2], "C": a[2:], "D": a[:1]}) == [{"B", "D"}, {"C"}]


def test_find_shared_tensors_keeps_the_order_of_first_appearance():
    x, y, z = torch.zeros(2), torch.zeros(3), torch.zeros(4)
    assert _find_shared_tensors({"z": z, "x": x, "y": y, "x2": x}) == [{"z"}, {"x", "x2"}, {"y"}]


def test_storage_ptr_and_size_of_a_smaller_storage_on_the_same_memory():
    m = torch.randn(10)
    n = torch.empty([], dtype=m.dtype)
    untyped = m.untyped_storage() if hasattr(m, "untyped_storage") else m.storage().untyped()
    n.set_(untyped[: 4 * 4])
    assert storage_ptr(n) == storage_ptr(m)
    assert (storage_size(n), storage_size(m)) == (16, 40)
    assert _find_shared_tensors({"m": m, "n": n}) == [{"m"}, {"n"}]


def test_end_ptr():
    a = torch.zeros((4,))
    assert _end_ptr(a) - a.data_ptr() == 16
    b = torch.zeros((16,))[::4]
    assert _end_ptr(b) - b.data_ptr() == 16 * 3 + 4
    h = torch.zeros((16,), dtype=torch.float16)[::4]
    assert _end_ptr(h) - h.data_ptr() == 8 * 3 + 2
    e = torch.zeros((0,))
    assert _end_ptr(e) == e.data_ptr()


def test_remove_duplicate_names():
    a = torch.zeros((3, 3))
    b = a[:1, :]
    assert _remove_duplicate_names({"A": a, "B": b}) == {"A": ["B"]}
    assert _remove_duplicate_names({"A": a, "B": b, "C": a}) == {"A": ["B", "C"]}
    assert _remove_duplicate_names({"C": a, "A": a}, discard_names=["A"]) == {"C": ["A"]}
    assert _remove_duplicate_names({"C": a, "A": a}, preferred_names=["C"]) == {"C": ["A"]}
    with pytest.raises(RuntimeError) as e:
        _remove_duplicate_names({"B": b})
    assert "None is covering the entire storage.Refusing to save/load the model" in str(e.value)


def test_save_file_refuses_tied_weights_with_the_reference_message(tmp_path):
    with pytest.raises(RuntimeError) as e:
        save_file(TiedModel().state_dict(), tmp_path / "t.safetensors")
    assert "Some tensors share memory, this will lead to duplicate memory on disk" in str(e.value)
    assert "`save_model`" in str(e.value)


def test_save_model_drops_tied_names_into_the_metadata(tmp_path):
    model = OnesModel()
    path = tmp_path / "ones.safetensors"
    save_model(model, path)
    with safe_open(path, framework="pt") as f:
        assert f.metadata() == {"b.bias": "a.bias", "b.weight": "a.weight"}
    assert path.read_bytes()[-80:] == b"\x00\x00\x80?" * 20  # 20 float32 ones, little-endian
    other = OnesModel()
    load_model(other, path)
    assert_same_state(model, other)


def test_save_model_keeps_user_metadata(tmp_path):
    save_model(TiedModel(), tmp_path / "t.safetensors", metadata={"b.bias": "mine", "x": "y"})
    with safe_open(tmp_path / "t.safetensors", framework="pt") as f:
        assert f.metadata() == {"b.bias": "mine", "b.weight": "a.weight", "x": "y"}


def test_load_model_accepts_files_saved_under_other_tied_names(tmp_path):
    model = TiedModel()
    state = model.state_dict()
    state.pop("a.weight")
    state.pop("a.bias")
    save_file(state, tmp_path / "t.safetensors")
    other = TiedModel()
    load_model(other, tmp_path / "t.safetensors", backend="pread")
    assert_same_state(model, other)


def test_save_model_makes_transposed_parameters_contiguous_by_default(tmp_path):
    model = TransposedModel()
    with pytest.raises(ValueError) as e:
        save_model(model, tmp_path / "c.safetensors", force_contiguous=False)
    assert "use save_model(..., force_contiguous=True)" in str(e.value)
    save_model(model, tmp_path / "c.safetensors")
    other = TransposedModel()
    other.a.weight.data.zero_()
    load_model(other, tmp_path / "c.safetensors")
    assert_same_state(model, other)


def test_channels_last_parameters_save_by_default(tmp_path):
    conv = torch.nn.Conv2d(3, 4, 3).to(memory_format=torch.channels_last)
    assert not conv.weight.is_contiguous()
    save_model(conv, tmp_path / "conv.safetensors")
    other = torch.nn.Conv2d(3, 4, 3)
    load_model(other, tmp_path / "conv.safetensors")
    assert torch.equal(other.weight, conv.weight)


def test_copies_are_not_shared():
    assert _find_shared_tensors(CopyModel().state_dict()) == [{"a.weight"}, {"a.bias"}, {"b.weight"}, {"b.bias"}]


def test_load_model_reports_missing_and_unexpected_names(tmp_path):
    save_model(TiedModel(), tmp_path / "tied.safetensors")
    with pytest.raises(RuntimeError) as e:
        load_model(UntiedModel(), tmp_path / "tied.safetensors")
    assert 'Missing key(s) in state_dict: "b.bias", "b.weight"' in str(e.value)
    missing, unexpected = load_model(UntiedModel(), tmp_path / "tied.safetensors", strict=False)
    assert missing == {"b.bias", "b.weight"} and unexpected == []

    save_model(UntiedModel(), tmp_path / "untied.safetensors")
    with pytest.raises(RuntimeError) as e:
        load_model(TiedModel(), tmp_path / "untied.safetensors")
    assert 'Unexpected key(s) in state_dict: "b.bias", "b.weight"' in str(e.value)


def test_flatten_gives_tensor_specs_serialize_accepts():
    tensors = {"a": torch.arange(6, dtype=torch.int32).reshape(2, 3), "b": torch.ones(2, dtype=torch.bfloat16)}
    flat = _flatten(tensors)
    assert all(isinstance(spec, TensorSpec) for spec in flat.values())
    assert (flat["a"].dtype, flat["a"].shape, flat["a"].data_len) == ("I32", [2, 3], 24)
    assert serialize(flat) == save(tensors)
    with pytest.raises(ValueError, match="Expected a dict"):
        _flatten([torch.zeros(1)])
    with pytest.raises(ValueError, match="Key `a` is invalid, expected torch.Tensor"):
        _flatten({"a": [1]})
    with pytest.raises(ValueError, match="You are trying to save a sparse tensors: `\\['s'\\]`"):
        _flatten({"s": torch.zeros(3).to_sparse()})
    with pytest.raises(ValueError, match="You are trying to save a non contiguous tensor: `t`"):
        _flatten({"t": torch.zeros(3, 2).t()})


def test_tobytes():
    t = torch.tensor([1.0, 2.0], dtype=torch.float32)
    assert _tobytes(t, "t") == b"\x00\x00\x80?\x00\x00\x00@"
    assert _tobytes(torch.zeros((0, 3)), "e") == b""
    assert _tobytes(torch.tensor(True), "b") == b"\x01"
    with pytest.raises(ValueError, match="non contiguous tensor: `x`"):
        _tobytes(torch.zeros(2, 2).t(), "x")


def test_accepts_paths(tmp_path):
    tensors = {"a": torch.zeros((2, 2)), "b": torch.zeros((2, 3), dtype=torch.uint8)}
    save_file(tensors, tmp_path / "out.safetensors")
    assert set(load_file(tmp_path / "out.safetensors")) == {"a", "b"}


def test_load_file_keys_follow_the_data_order(tmp_path):
    tensors = {"z": torch.zeros(2, dtype=torch.uint8), "a": torch.zeros(2, dtype=torch.float64),
               "m": torch.zeros(2, dtype=torch.int32)}
    save_file(tensors, tmp_path / "o.safetensors")
    with safe_open(tmp_path / "o.safetensors", framework="pt") as f:
        order = f.offset_keys()
    assert list(load_file(tmp_path / "o.safetensors")) == order == ["a", "m", "z"]


def test_metadata_and_keys_must_be_strings(tmp_path):
    with pytest.raises(TypeError, match="argument 'metadata': 'int' object cannot be converted to 'PyString'"):
        save_file({"a": torch.zeros(1)}, tmp_path / "m.safetensors", metadata={"k": 1})
    with pytest.raises(TypeError, match="'int' object cannot be converted to 'PyString'"):
        save({2: torch.zeros(1)})
    save_file({"a": torch.zeros(1)}, tmp_path / "m.safetensors")
    with safe_open(tmp_path / "m.safetensors", framework="pt") as f:
        with pytest.raises(TypeError, match="argument 'name'"):
            f.get_tensor(1)
        with pytest.raises(TypeError, match="argument 'name'"):
            f.get_slice(None)


def comparison_files(tmp_path):
    """(name, tensors) sets covering dtypes, shapes, empty and scalar tensors, and many tensors."""
    gen = torch.Generator().manual_seed(3)
    yield "dtypes", {
        "f32": torch.randn(7, 5, generator=gen),
        "f16": torch.randn(3, 9, generator=gen).half(),
        "bf16": torch.randn(11, 2, generator=gen).bfloat16(),
        "f64": torch.randn(4, generator=gen).double(),
        "i64": torch.randint(-(2**40), 2**40, (6,), generator=gen),
        "i32": torch.randint(-1000, 1000, (2, 2, 2), generator=gen, dtype=torch.int32),
        "i16": torch.randint(-1000, 1000, (5,), generator=gen, dtype=torch.int16),
        "i8": torch.randint(-100, 100, (3, 1), generator=gen, dtype=torch.int8),
        "u8": torch.randint(0, 255, (9,), generator=gen, dtype=torch.uint8),
        "bool": torch.randint(0, 2, (4, 4), generator=gen).bool(),
        "c64": torch.randn(3, generator=gen, dtype=torch.complex64),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros((0, 4)),
    }
    yield "layers", {f"layer.{i}.{kind}": torch.randn(16, 8 + i, generator=gen).to(dtype)
                     for i in range(12) for kind, dtype in (("w", torch.bfloat16), ("b", torch.float32))}
    yield "one-big", {"w": torch.randn(512, 1024, generator=gen)}


@pytest.mark.parametrize("backend", ["mmap", "pread"])
def test_load_file_matches_torch_load_of_the_same_weights(tmp_path, backend):
    for name, tensors in comparison_files(tmp_path):
        st_path, pt_path = tmp_path / f"{name}.safetensors", tmp_path / f"{name}.pt"
        save_file(tensors, st_path)
        torch.save(tensors, pt_path)
        expected = torch.load(pt_path)
        got = load_file(st_path, backend=backend)
        assert set(got) == set(expected), name
        for key, t in expected.items():
            assert got[key].dtype == t.dtype and got[key].shape == t.shape, (name, key)
            assert torch.equal(got[key], t), (name, key)
        from_bytes = load(st_path.read_bytes())
        assert all(torch.equal(from_bytes[key], t) for key, t in expected.items()), name


def test_slices_match_torch_indexing(tmp_path):
    a = torch.randn((10, 5))
    save_file({"a": a}, tmp_path / "slice.safetensors")
    with safe_open(tmp_path / "slice.safetensors", framework="pt", device="cpu") as f:
        sl = f.get_slice("a")
        for key in (slice(None), slice(None, 2), (slice(None), slice(None, 2)), (0, slice(None, 2)),
                    (slice(2, None), 0), (slice(2, None), 1), (slice(2, None), -1), (slice(2, None), -5)):
            torch.testing.assert_close(sl[key], a[key])
        assert list(sl[[]].shape) == [0, 5] and list(sl[list()].shape) == [0, 5]
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


def test_disjoint_views_of_one_storage_save(tmp_path):
    a = torch.arange(8.0).reshape(4, 2)
    save_file({"top": a[:1], "rest": a[1:]}, tmp_path / "d.safetensors")
    loaded = load_file(tmp_path / "d.safetensors")
    assert torch.equal(loaded["top"], a[:1]) and torch.equal(loaded["rest"], a[1:])


def test_zero_sized_tensors(tmp_path):
    tensors = {"a": torch.zeros((2, 0)), "b": torch.zeros((0,), dtype=torch.int8), "c": torch.ones(3)}
    save_file(tensors, tmp_path / "z.safetensors")
    for loaded in (load_file(tmp_path / "z.safetensors"), load_file(tmp_path / "z.safetensors", backend="pread"),
                   load(save(tensors))):
        for k, t in tensors.items():
            assert loaded[k].shape == t.shape and loaded[k].dtype == t.dtype and torch.equal(loaded[k], t)
