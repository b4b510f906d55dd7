# SPDX-License-Identifier: Apache-2.0
"""safetensors.cxx's pipelines: convert (a .pt made by Debian's torch, back through
torch.load), the rewrites that are conversions with options (cast, extract, merge, shard),
diff and checksum, with the same results as the CLI."""

import hashlib
import os

import numpy as np
import pytest
import torch

from safetensors import SafetensorError
from safetensors.cxx import (cast, checksum, convert, dequantize, dequantize_checkpoint, describe, diff, extract,
                             merge, pickle_verdict, quantize, quantize_checkpoint, shard)
from safetensors.numpy import load_file as load_numpy
from safetensors.torch import load_file, save_file


@pytest.fixture
def checkpoint(tmp_path):
    torch.manual_seed(0)
    state = {"embed.weight": torch.randn(64, 32), "head.bias": torch.arange(10, dtype=torch.int64),
             "norm.weight": torch.randn(32).to(torch.bfloat16)}
    path = tmp_path / "model.pt"
    torch.save(state, path)
    return path, state


def test_pytorch_to_safetensors_equals_torch_load(checkpoint, tmp_path):
    path, state = checkpoint
    out = tmp_path / "model.safetensors"
    summary = convert(path, out)
    assert summary["input_format"] == "PyTorch"
    assert summary["output_format"] == "SafeTensors"
    assert summary["tensors"] == 3
    assert summary["parameters"] == 64 * 32 + 10 + 32
    loaded = load_file(out)
    reference = torch.load(path)
    assert loaded.keys() == reference.keys()
    for name, tensor in reference.items():
        assert torch.equal(loaded[name], tensor), name


def test_cast_and_npz_output(checkpoint, tmp_path):
    path, state = checkpoint
    out = tmp_path / "model.npz"
    summary = convert(path, out, dtype="F16")
    convert(out, tmp_path / "back.safetensors")  # and back, through the .npz reader
    arrays = load_numpy(tmp_path / "back.safetensors")
    assert arrays["embed.weight"].dtype == np.float16
    assert arrays["head.bias"].dtype == np.int64  # integers are not cast
    np.testing.assert_array_equal(arrays["embed.weight"], state["embed.weight"].numpy().astype(np.float16))
    assert summary["output_format"] == "NumPy .npz"


def test_progress_is_called_and_an_exception_in_it_stops_with_no_output(checkpoint, tmp_path):
    path, _ = checkpoint
    calls = []
    convert(path, tmp_path / "a.safetensors", progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1][0] == calls[-1][1]

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        convert(path, tmp_path / "b.safetensors", progress=stop)
    assert not (tmp_path / "b.safetensors").exists()
    assert sorted(os.listdir(tmp_path)) == ["a.safetensors", "model.pt"]


def test_bad_requests_raise_safetensor_error_naming_the_problem(checkpoint, tmp_path):
    path, _ = checkpoint
    with pytest.raises(SafetensorError, match="applies to .npz output only"):
        convert(path, tmp_path / "x.safetensors", compress=True)
    with pytest.raises(SafetensorError, match="same file"):
        convert(path, path, to="safetensors")
    with pytest.raises(SafetensorError, match="unknown dtype"):
        convert(path, tmp_path / "y.safetensors", dtype="F17")
    assert not (tmp_path / "x.safetensors").exists()


def test_misuses_name_the_keyword(model, tmp_path):
    """The library checks every option once, for every face, naming it as the caller spells it:
    here as a keyword. An option given at its default value is a choice, refused where it does
    not apply (the CLI's flags and the C API's keys get the same checks)."""
    path, _ = model
    out = tmp_path / "o.safetensors"
    with pytest.raises(SafetensorError, match=r"^shared= applies to PyTorch input only \(the input is SafeTensors\)"):
        convert(path, out, shared="keep")
    with pytest.raises(SafetensorError, match=r"^compress= applies to \.npz output only \(the output is SafeTensors\)"):
        convert(path, out, compress=True)
    with pytest.raises(SafetensorError, match="^max_output_size=: invalid size '0': must be at least one byte"):
        convert(path, out, max_output_size=0)
    with pytest.raises(SafetensorError, match=r"raise the budget with max_output_size= if"):
        convert(path, out, max_output_size=10)
    with pytest.raises(SafetensorError, match="^dtype=: unknown dtype 'F17'"):
        cast(path, out, "F17")
    assert not out.exists()
    assert convert(path, out, compress=False, strict=False)["tensors"] == 4
    # cast, extract and merge write one file: a directory there is refused (as the CLI refuses
    # it), not filled with shards.
    (tmp_path / "adir").mkdir()
    for rewrite in (lambda: merge(path, tmp_path / "adir"), lambda: cast(path, tmp_path / "adir", "F16"),
                    lambda: extract(path, tmp_path / "adir")):
        with pytest.raises(SafetensorError, match="cannot write the output: Is a directory"):
            rewrite()
    assert not os.listdir(tmp_path / "adir")


def test_rewrites_name_another_format_instead_of_reading_it(checkpoint, tmp_path):
    path, _ = checkpoint  # a torch.save zip: convert reads it, the rewrites refuse it by name
    for rewrite in (lambda: merge(path, tmp_path / "m.safetensors"), lambda: shard(path, tmp_path / "s"),
                    lambda: extract(path, tmp_path / "e.safetensors"), lambda: cast(path, tmp_path / "c.safetensors", "F16")):
        with pytest.raises(SafetensorError, match=r"this is a PyTorch \(zip\) file, not SafeTensors"):
            rewrite()
    assert sorted(os.listdir(tmp_path)) == ["model.pt"]


@pytest.fixture
def model(tmp_path):
    tensors = {"a.w": torch.tensor([1.0, 2.0, 3.0, 1e6]), "a.b": torch.tensor([0.5, -0.5]),
               "c.w": torch.arange(6, dtype=torch.float32).reshape(2, 3), "n": torch.tensor([-1, 1], dtype=torch.int32)}
    path = tmp_path / "model.safetensors"
    save_file(tensors, path, metadata={"format": "pt", "owner": "me"})
    return path, tensors


def test_cast_chosen_tensors_in_place(model):
    path, tensors = model
    summary = cast(path, path, "BF16", only="a.*", exclude=["a.b"])
    assert summary["files"] == [os.fsdecode(path)]
    loaded = load_file(path)
    assert loaded["a.w"].dtype == torch.bfloat16
    assert loaded["a.b"].dtype == torch.float32 and loaded["c.w"].dtype == torch.float32
    assert loaded["n"].dtype == torch.int32
    assert torch.equal(loaded["a.w"], tensors["a.w"].to(torch.bfloat16))
    with pytest.raises(SafetensorError, match="no tensor matches 'zzz'"):
        cast(path, path, "F16", only="zzz")


def test_extract_selects_renames_and_edits_metadata(model, tmp_path):
    path, tensors = model
    out = tmp_path / "part.safetensors"
    extract(path, out, only=["a.*", "n"], exclude="a.b", rename={"a.*": "x.*"}, set_metadata={"new": "1"},
            remove_metadata=["owner"])
    from safetensors import safe_open
    with safe_open(out, "pt") as f:
        assert list(f.keys()) == ["n", "x.w"]
        assert f.metadata() == {"format": "pt", "new": "1"}
        assert torch.equal(f.get_tensor("x.w"), tensors["a.w"])
    with pytest.raises(SafetensorError, match="rename: no selected tensor matches 'zzz'"):
        extract(path, tmp_path / "y.safetensors", rename={"zzz": "q"})
    assert not (tmp_path / "y.safetensors").exists()


def test_shard_then_merge_round_trips(model, tmp_path):
    path, tensors = model
    summary = shard(path, tmp_path / "ck", max_shard_size=16, prefix="m")
    assert summary["output_format"] == "SafeTensors (sharded)"
    assert summary["files"][-1] == "m.safetensors.index.json"
    assert len(summary["files"]) >= 3
    assert all((tmp_path / "ck" / name).exists() for name in summary["files"])
    merge(tmp_path / "ck", tmp_path / "merged.safetensors")
    merged = load_file(tmp_path / "merged.safetensors")
    assert merged.keys() == tensors.keys()
    for name, tensor in tensors.items():
        assert torch.equal(merged[name], tensor), name


def test_diff_reports_what_the_cli_reports(model, tmp_path):
    path, tensors = model
    other = dict(tensors, **{"a.w": torch.tensor([1.0, 2.001, 3.0, 1e6])})
    del other["n"]
    save_file(other, tmp_path / "other.safetensors", metadata={"format": "pt", "owner": "you"})
    report = diff(path, tmp_path / "other.safetensors")
    assert not report["equal"]
    assert report["only_in_a"] == ["n"] and report["only_in_b"] == []
    assert report["metadata"] == [{"key": "owner", "a": "me", "b": "you"}]
    by_name = {t["name"]: t for t in report["tensors"]}
    assert by_name["a.w"]["mismatched"] == 1 and by_name["a.w"]["first_mismatch"][0] == 1
    assert by_name["c.w"]["equal"] and by_name["c.w"]["max_abs"] == 0
    loose = diff(path, tmp_path / "other.safetensors", atol=0.01)
    assert {t["name"]: t["mismatched"] for t in loose["tensors"]}["a.w"] == 0
    assert diff(path, path)["equal"]


def test_checksum_matches_hashlib(model):
    path, _ = model
    data = path.read_bytes()
    digest = checksum(path, per_tensor=True)
    assert digest["sha256"] == hashlib.sha256(data).hexdigest()
    assert digest["bytes"] == len(data)
    header = 8 + int.from_bytes(data[:8], "little")
    import json
    entries = {k: v for k, v in json.loads(data[8:header]).items() if k != "__metadata__"}
    assert list(digest["tensors"]) == sorted(entries, key=lambda k: entries[k]["data_offsets"][0])
    for name, entry in entries.items():
        begin, end = entry["data_offsets"]
        assert digest["tensors"][name] == hashlib.sha256(data[header + begin:header + end]).hexdigest(), name
    assert checksum(path)["tensors"] == {}
    with pytest.raises(SafetensorError, match="Is a directory"):
        checksum(path.parent)


def test_quantize_checkpoint_then_dequantize_matches_the_array_functions(tmp_path):
    weight = np.sin(np.arange(8 * 128, dtype=np.float32) * 0.1).reshape(8, 128)
    from safetensors.numpy import save_file
    save_file({"layer.weight": weight, "norm.weight": np.ones(128, np.float32)}, tmp_path / "m.safetensors")
    calls = []
    summary = quantize_checkpoint(tmp_path / "m.safetensors", tmp_path / "q.safetensors", bits=8, group_size=32,
                                  config_out=tmp_path / "config.json", progress=lambda d, t: calls.append(d))
    assert summary["layers"] == 1 and not summary["sharded"] and calls
    expected = quantize(weight, bits=8, group_size=32)
    q = load_numpy(tmp_path / "q.safetensors")
    np.testing.assert_array_equal(q["layer.weight"], expected["weight"])
    np.testing.assert_array_equal(q["layer.scales"], expected["scales"])
    assert '"bits": 8' in (tmp_path / "config.json").read_text()
    dequantize_checkpoint(tmp_path / "q.safetensors", tmp_path / "d.safetensors", dtype="F32")
    np.testing.assert_array_equal(load_numpy(tmp_path / "d.safetensors")["layer.weight"],
                                  dequantize(tmp_path / "q.safetensors", "layer.weight"))
    with pytest.raises(SafetensorError, match="no tensor to quantize"):
        quantize_checkpoint(tmp_path / "m.safetensors", tmp_path / "x.safetensors", only="norm.*")
    assert not (tmp_path / "x.safetensors").exists()


def test_max_output_size_bounds_every_writing_function(model, tmp_path):
    """The output budget (SECURITY.md): torch.save of many names over one storage is refused
    above max_output_size, before anything is written; every writing function takes it."""
    base = torch.zeros(1024)
    aliases = tmp_path / "aliases.pt"
    torch.save({f"t{i}": base.view(-1) for i in range(300)}, aliases)  # 300 x 4 KiB out of 4 KiB
    convert(aliases, tmp_path / "default.safetensors")  # under the default's 1 GiB floor
    out = tmp_path / "out.safetensors"
    with pytest.raises(SafetensorError, match="would hold 1228800 bytes of tensor data, over the output budget "
                                              "of 1000000 bytes"):
        convert(aliases, out, max_output_size="1MB")
    assert not out.exists()
    assert convert(aliases, out, max_output_size=1228800)["bytes"] == 1228800

    path, _ = model
    shard(path, tmp_path / "ck", max_shard_size=40)
    weight = np.ones((4, 64), np.float32)
    from safetensors.numpy import save_file
    save_file({"layer.weight": weight}, tmp_path / "m.safetensors")
    quantize_checkpoint(tmp_path / "m.safetensors", tmp_path / "q.safetensors")
    small = {"max_output_size": 10}
    for name, write in [("convert", lambda: convert(path, tmp_path / "x.npz", **small)),
                        ("cast", lambda: cast(path, tmp_path / "x.safetensors", "F64", **small)),
                        ("extract", lambda: extract(path, tmp_path / "x.safetensors", **small)),
                        ("merge", lambda: merge(tmp_path / "ck", tmp_path / "x.safetensors", **small)),
                        ("shard", lambda: shard(path, tmp_path / "xdir", **small)),
                        ("quantize", lambda: quantize_checkpoint(tmp_path / "m.safetensors", tmp_path / "x.safetensors",
                                                                 **small)),
                        ("dequantize", lambda: dequantize_checkpoint(tmp_path / "q.safetensors",
                                                                     tmp_path / "x.safetensors", **small))]:
        with pytest.raises(SafetensorError, match="over the output budget of 10 bytes"):
            write()
        assert not (tmp_path / "x.safetensors").exists() and not (tmp_path / "x.npz").exists(), name
        assert not (tmp_path / "xdir").exists(), name


HOSTILE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "pytorch", "hostile")
PYTORCH_FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "pytorch")
SENTINEL = "/tmp/safetensors-pytorch-fixture-pwned"  # what the hostile files' payloads would create


def test_a_pickle_that_tries_to_run_code_is_refused_with_its_own_code_and_verdict(tmp_path):
    if os.path.exists(SENTINEL):
        os.remove(SENTINEL)
    for name, first in (("saved_os_system_nested_p2_zip.pt", "posix.system"),
                        ("hand_stack_global_eval_legacy.pt", "builtins.eval")):
        path = os.path.join(HOSTILE, name)
        for strict in (False, True):
            with pytest.raises(SafetensorError) as raised:
                convert(path, tmp_path / "out.safetensors", strict=strict)
            assert raised.value.code == "CodeExecution"
            assert "refused: this file tries to run code: %s at byte " % first in str(raised.value)
            assert not (tmp_path / "out.safetensors").exists()
        verdict = pickle_verdict(path)
        assert verdict["kind"] == "runs code"
        assert verdict["refusal"]["code"] == "CodeExecution"
        listed = [g for g in verdict["globals"] if g["name"] == first]
        assert listed and listed[0]["runs_code"] and listed[0]["offset"] > 0
    assert not os.path.exists(SENTINEL)


def test_pickle_verdict_of_inert_objects_and_of_a_plain_state_dict(checkpoint):
    verdict = pickle_verdict(os.path.join(PYTORCH_FIXTURES, "opaque.pt"))
    assert verdict["kind"] == "inert objects"
    assert verdict["refusal"] is None
    names = [g["name"] for g in verdict["globals"]]
    assert "argparse.Namespace" in names and "pathlib.PosixPath" in names
    assert not any(g["runs_code"] for g in verdict["globals"])
    path, _ = checkpoint
    assert pickle_verdict(path) == {"kind": "allowlisted", "globals": [], "refusal": None}


def test_describe_gives_inspects_rows_from_the_format_table(checkpoint, tmp_path):
    path, state = checkpoint
    d = describe(path)
    assert d["format_id"] == "pytorch" and d["format"].startswith("PyTorch checkpoint (zip container")
    assert d["extra_title"] == "notes" and d["refusal"] is None
    rows = {t["name"]: t for t in d["tensors"]}
    assert rows["embed.weight"] == {"name": "embed.weight", "dtype": "F32", "shape": [64, 32], "bytes": 64 * 32 * 4,
                                    "elements": 64 * 32, "extra": ""}
    assert "pickle verdict: allowlisted globals only" in d["notes"]
    npy = tmp_path / "a.npy"
    np.save(npy, np.arange(6, dtype=np.float32).reshape(2, 3))
    d = describe(npy)
    assert (d["format_id"], d["format"], d["extra_title"]) == ("npy", "NumPy .npy", "descr")
    assert [(t["name"], t["shape"], t["extra"]) for t in d["tensors"]] == [("a", [2, 3], "<f4")]
    refused = describe(os.path.join(HOSTILE, "hand_stack_global_eval_legacy.pt"))
    assert refused["refusal"]["code"] == "CodeExecution" and refused["tensors"] == []
    assert refused["notes"][0] == "pickle verdict: refused: this file tries to run code"
    out = tmp_path / "m.safetensors"
    convert(path, out)
    with pytest.raises(SafetensorError, match="SafeTensors files are read with safe_open"):
        describe(out)
