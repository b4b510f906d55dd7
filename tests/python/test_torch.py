# SPDX-License-Identifier: Apache-2.0
"""safetensors.torch: every dtype of the installed torch, slices, shared tensors and models."""

import pytest

torch = pytest.importorskip("torch")

from safetensors import SafetensorError, safe_open  # noqa: E402
from safetensors.torch import (  # noqa: E402
    _find_shared_tensors,
    load,
    load_file,
    load_model,
    save,
    save_file,
    save_model,
    storage_ptr,
    storage_size,
)

# torch 1.13 has these; newer names (float8_*, uint16/32/64) are tested where torch has them.
BASE_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
               "complex64"]
NEWER_DTYPES = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                "float8_e8m0fnu"]
AVAILABLE = BASE_DTYPES + [n for n in NEWER_DTYPES if isinstance(getattr(torch, n, None), torch.dtype)]


def sample(dtype, shape, gen):
    """Random bits of `dtype` (any pattern, NaNs included; bool as 0/1)."""
    numel = 1
    for d in shape:
        numel *= d
    element = torch.empty((), dtype=dtype).element_size()
    bits = torch.randint(0, 256, (numel * element,), dtype=torch.uint8, generator=gen)
    if dtype == torch.bool:
        return (bits > 127).reshape(shape)
    return bits.view(dtype).reshape(shape)


@pytest.mark.parametrize("name", AVAILABLE)
def test_every_dtype_round_trips_bit_exactly(tmp_path, name):
    dtype = getattr(torch, name)
    gen = torch.Generator().manual_seed(7)
    tensors = {"m": sample(dtype, (3, 4), gen), "s": sample(dtype, (), gen), "e": torch.empty((2, 0), dtype=dtype)}
    path = tmp_path / "t.safetensors"
    save_file(tensors, path)
    for loaded in (load_file(path), load(save(tensors)), load(path.read_bytes())):
        for key, t in tensors.items():
            assert loaded[key].dtype == dtype and loaded[key].shape == t.shape
            # Compare bits: NaN payloads must survive too.
            assert torch.equal(loaded[key].reshape(-1).view(torch.uint8) if t.numel() else loaded[key],
                               t.reshape(-1).view(torch.uint8) if t.numel() else t)


def test_bfloat16_slices_match_torch(tmp_path):
    t = torch.randn(6, 5, dtype=torch.float32).to(torch.bfloat16)
    save_file({"w": t}, tmp_path / "w.safetensors")
    with safe_open(tmp_path / "w.safetensors", framework="pt") as f:
        sl = f.get_slice("w")
        assert sl.get_dtype() == "BF16" and sl.get_shape() == [6, 5]
        assert torch.equal(sl[1:4, ::2], t[1:4, ::2])
        assert torch.equal(sl[-1], t[-1])
        assert torch.equal(sl[..., 2], t[..., 2])
        assert torch.equal(sl[::-2, 1], t.flip(0)[::2, 1])  # torch itself has no negative steps


def test_loaded_tensors_are_writable_and_independent(tmp_path):
    save_file({"a": torch.zeros(3)}, tmp_path / "a.safetensors")
    a = load_file(tmp_path / "a.safetensors")["a"]
    a += 1
    assert torch.equal(load_file(tmp_path / "a.safetensors")["a"], torch.zeros(3))


def test_save_file_refuses_shared_sparse_and_non_contiguous_tensors(tmp_path):
    base = torch.zeros(4, 4)
    with pytest.raises(RuntimeError, match="share memory"):
        save_file({"a": base, "b": base}, tmp_path / "x.safetensors")
    with pytest.raises(ValueError, match="non contiguous"):
        save_file({"t": base.t()}, tmp_path / "x.safetensors")
    with pytest.raises(ValueError, match="sparse"):
        save_file({"s": base.to_sparse()}, tmp_path / "x.safetensors")
    with pytest.raises(ValueError, match="Key `a` is invalid"):
        save_file({"a": [1.0]}, tmp_path / "x.safetensors")
    # Views of disjoint parts of one storage do not overlap: they are saved.
    save_file({"top": base[:2], "bottom": base[2:]}, tmp_path / "x.safetensors")
    assert sorted(load_file(tmp_path / "x.safetensors")) == ["bottom", "top"]


def test_find_shared_tensors_groups_only_overlapping_views():
    base = torch.zeros(10)
    other = torch.ones(3)
    groups = _find_shared_tensors({"a": base, "a2": base, "head": base[:3], "tail": base[5:], "o": other})
    assert sorted(map(sorted, groups)) == [["a", "a2", "head", "tail"], ["o"]]
    groups = _find_shared_tensors({"head": base[:3], "tail": base[5:]})
    assert sorted(map(sorted, groups)) == [["head"], ["tail"]]
    assert storage_ptr(base[5:]) == storage_ptr(base) == base.data_ptr()
    assert storage_size(base[5:]) == 40


class Tied(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(5, 3)
        self.head = torch.nn.Linear(3, 5, bias=False)
        self.head.weight = self.embed.weight


def test_save_model_deduplicates_tied_weights_and_reports_them(tmp_path):
    model = Tied()
    path = tmp_path / "m.safetensors"
    save_model(model, path, metadata={"user": "kept"})
    with safe_open(path, framework="pt") as f:
        assert f.keys() == ["embed.weight"]
        assert f.metadata() == {"user": "kept", "head.weight": "embed.weight"}
    fresh = Tied()
    missing, unexpected = load_model(fresh, path)
    assert (missing, unexpected) == (set(), [])
    assert torch.equal(fresh.head.weight, model.embed.weight)
    assert fresh.head.weight.data_ptr() == fresh.embed.weight.data_ptr()


def test_load_model_reports_missing_and_unexpected_names(tmp_path):
    path = tmp_path / "m.safetensors"
    save_file({"embed.weight": torch.zeros(5, 3), "extra": torch.zeros(1)}, path)

    class Two(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(5, 3)
            self.other = torch.nn.Linear(2, 2)

    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "other.bias", "other.weight"'):
        load_model(Two(), path)
    missing, unexpected = load_model(Two(), path, strict=False)
    assert missing == {"other.weight", "other.bias"} and unexpected == ["extra"]


def test_pt_errors_and_devices(tmp_path):
    save_file({"a": torch.ones(2)}, tmp_path / "a.safetensors")
    with pytest.raises(FileNotFoundError):
        load_file(tmp_path / "missing.safetensors")
    with safe_open(tmp_path / "a.safetensors", framework="pt", device="cpu") as f:
        with pytest.raises(SafetensorError, match="does not contain tensor b"):
            f.get_tensor("b")
        assert f.get_tensor("a").device.type == "cpu"


def test_dtypes_torch_lacks_are_refused(tmp_path, write_raw):
    if isinstance(getattr(torch, "float8_e4m3fn", None), torch.dtype):
        pytest.skip("this torch has float8")
    path = write_raw("f8.safetensors", {"a": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [0, 2]}}, b"\0\0")
    with safe_open(path, framework="pt") as f, pytest.raises(SafetensorError, match="no dtype for F8_E4M3"):
        f.get_tensor("a")
