# SPDX-License-Identifier: Apache-2.0
"""safetensors.cxx: validation policies, the streaming writer, checkpoints, MLX quantization."""

import json

import numpy as np
import pytest

from safetensors import SafetensorError, cxx, safe_open
from safetensors.numpy import load_file, save_file

U8 = {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]}


def test_validate_reports_the_code_and_location_per_policy(tmp_path, write_raw):
    good = tmp_path / "good.safetensors"
    save_file({"a": np.zeros(2, np.uint8)}, good)
    assert cxx.validate(good) == cxx.ValidationResult(ok=True)

    trailing = write_raw("trailing.safetensors", {"a": U8}, b"\0\0\0")  # one byte past the last tensor
    result = cxx.validate(trailing)
    assert not result and result.code == "MetadataIncompleteBuffer"
    lenient = cxx.validate(trailing, policy="lenient")
    assert lenient.ok and len(lenient.warnings) == 1

    deep = write_raw("deep.safetensors", {"a": {"dtype": "U8", "shape": [1] * 9, "data_offsets": [0, 1]}}, b"\0")
    assert cxx.validate(deep).ok
    strict = cxx.validate(deep, policy="strict")
    assert strict.code == "LimitExceeded" and strict.tensor == "a"

    bad_offset = write_raw("gap.safetensors", {"a": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}}, b"\0\0")
    result = cxx.validate(bad_offset)
    assert result.code == "InvalidOffset" and result.tensor == "a" and str(bad_offset) in result.message
    assert cxx.validate(tmp_path / "missing").code == "IoError"
    with pytest.raises(SafetensorError, match="policy nope is invalid"):
        cxx.validate(good, policy="nope")


def test_streaming_writer_accepts_interleaved_chunks_and_commits(tmp_path):
    path = tmp_path / "stream.safetensors"
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    b = np.arange(5, dtype=np.int64)
    with cxx.writer(path, {"a": ("float32", [4, 3]), "b": (np.int64, [5])}, metadata={"m": "x"}) as w:
        assert [t[0] for t in w.tensors()] == ["b", "a"]  # file order: widest dtype first
        w.append("a", a[:1])
        w.append("b", b.tobytes())
        w.append("a", a[1:])
    loaded = load_file(path)
    np.testing.assert_array_equal(loaded["a"], a)
    np.testing.assert_array_equal(loaded["b"], b)
    with safe_open(path, framework="np") as f:
        assert f.metadata() == {"m": "x"}


def test_streaming_writer_leaves_the_target_untouched_on_failure(tmp_path):
    path = tmp_path / "stream.safetensors"
    save_file({"old": np.ones(1)}, path)
    with pytest.raises(SafetensorError, match="received 4 of its 8 bytes"):
        with cxx.writer(path, [("a", "uint8", [8])]) as w:
            w.append("a", b"\0" * 4)
    with pytest.raises(KeyError):
        with cxx.writer(path, [("a", "uint8", [8])]) as w:
            w.append("a", b"\0" * 8)
            raise KeyError("the producer failed")
    with cxx.writer(path, [("a", "uint8", [2])]) as w:
        with pytest.raises(SafetensorError):
            w.append("a", b"\0" * 3)  # past the tensor's end
        with pytest.raises(SafetensorError):
            w.append("nope", b"\0")
        w.abort()
    assert list(load_file(path)) == ["old"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stream.safetensors"]  # no temporaries left


def test_streaming_writer_takes_torch_chunks(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file as torch_load

    t = torch.randn(4, 2).to(torch.bfloat16)
    with cxx.writer(tmp_path / "t.safetensors", {"t": (torch.bfloat16, [4, 2])}) as w:
        w.append("t", t[:2])
        w.append("t", t[2:])
    assert torch.equal(torch_load(tmp_path / "t.safetensors")["t"], t)


def write_sharded(tmp_path, weight_map_extra=None):
    save_file({"a": np.arange(3, dtype=np.float32)}, tmp_path / "model-00001-of-00002.safetensors")
    save_file({"b": np.ones((2, 2), np.int8)}, tmp_path / "model-00002-of-00002.safetensors")
    weight_map = {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}
    weight_map.update(weight_map_extra or {})
    index = {"metadata": {"total_size": 16}, "weight_map": weight_map}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))


def test_checkpoint_directories_open_as_one_namespace(tmp_path):
    write_sharded(tmp_path)
    with cxx.open_checkpoint(tmp_path) as c:
        assert c.keys() == ["a", "b"]
        assert c.offset_keys() == ["a", "b"]
        assert c.metadata() == {"total_size": "16"}
        np.testing.assert_array_equal(c.get_tensor("a"), np.arange(3, dtype=np.float32))
        np.testing.assert_array_equal(c.get_slice("b")[1], np.ones(2, np.int8))
        with pytest.raises(SafetensorError) as e:
            c.get_tensor("c")
        assert e.value.code == "TensorNotFound"


def test_checkpoint_shard_names_must_stay_in_the_directory(tmp_path):
    write_sharded(tmp_path, {"c": "../escape.safetensors"})
    with pytest.raises(SafetensorError) as e:
        cxx.open_checkpoint(tmp_path / "model.safetensors.index.json")
    assert e.value.code == "UnsafePath"


def affine_reference(weight, scales, biases, bits, group_size):
    """MLX's affine dequantization written out in numpy: codes LSB-first in little-endian words."""
    words = weight.reshape(weight.shape[0], -1).astype(np.uint64)
    per_word = 32 // bits
    shifts = (np.arange(per_word, dtype=np.uint64) * bits)
    codes = ((words[:, :, None] >> shifts) & ((1 << bits) - 1)).reshape(weight.shape[0], -1)
    s = np.repeat(scales.reshape(scales.shape[0], -1), group_size, axis=1)
    b = np.repeat(biases.reshape(biases.shape[0], -1), group_size, axis=1)
    return (s * codes + b).astype(np.float32)


@pytest.mark.parametrize("bits,group_size", [(4, 64), (8, 32), (2, 128)])
def test_affine_quantize_then_dequantize(tmp_path, bits, group_size):
    rng = np.random.default_rng(bits)
    x = rng.standard_normal((6, 256)).astype(np.float32)
    q = cxx.quantize(x, mode="affine", bits=bits, group_size=group_size)
    assert q["weight"].shape == (6, 256 * bits // 32) and q["weight"].dtype == np.uint32
    assert q["scales"].shape == (6, 256 // group_size) and q["scales"].dtype == np.float32
    expected = affine_reference(q["weight"], q["scales"], q["biases"], bits, group_size)
    # One step of each group bounds the error (MLX shifts the grid by up to half a step so that
    # zero is exact, on top of half a step of rounding).
    assert np.all(np.abs(expected - x) <= np.repeat(np.abs(q["scales"]), group_size, axis=1) + 1e-5)

    path = tmp_path / "q.safetensors"
    save_file({"l.weight": q["weight"], "l.scales": q["scales"], "l.biases": q["biases"]}, path,
              metadata={"format": "mlx", "quantization_bits": str(bits), "quantization_group_size": str(group_size)})
    (layer,) = cxx.mlx_layers(path)
    assert (layer["path"], layer["bits"], layer["group_size"], layer["shape"]) == ("l", bits, group_size, [6, 256])
    np.testing.assert_allclose(cxx.dequantize(path, "l.weight"), expected, rtol=1e-6, atol=1e-6)
    assert list(cxx.dequantize(path)) == ["l.weight"]
    assert cxx.dequantize(path, "l.weight", dtype="float16").dtype == np.float16


def test_mxfp4_round_trip_and_errors(tmp_path):
    x = np.linspace(-6, 6, 2 * 64, dtype=np.float32).reshape(2, 64)
    q = cxx.quantize(x, mode="mxfp4")
    assert q["biases"] is None and q["scales"].dtype == np.uint8 and q["scales"].shape == (2, 2)
    path = tmp_path / "fp4.safetensors"
    save_file({"l.weight": q["weight"], "l.scales": q["scales"]}, path, metadata={"format": "mlx"})
    y = cxx.dequantize(path, "l.weight")
    assert y.shape == x.shape and np.max(np.abs(y - x)) <= 1.0  # FP4's coarsest step at |x| in [4, 6] is 2
    with pytest.raises(SafetensorError, match="not the weight of a quantized layer"):
        cxx.dequantize(path, "l.scales")
    with pytest.raises(SafetensorError):
        cxx.quantize(np.zeros((2, 33), np.float32))  # not a multiple of the group size
    with pytest.raises(SafetensorError):
        cxx.quantize(np.zeros((2, 64), np.float32), mode="affine", bits=7)
