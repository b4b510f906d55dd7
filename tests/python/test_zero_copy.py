# SPDX-License-Identifier: Apache-2.0
"""Zero-copy loading: with the mmap backend, tensors and arrays view one private
(copy-on-write) mapping of the file; writes never reach the file; misaligned tensors and
the pread backend copy."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from safetensors import safe_open
from safetensors.numpy import load_file as np_load_file
from safetensors.numpy import save_file as np_save_file

from conftest import raw_file

torch = pytest.importorskip("torch")
from safetensors.torch import load_file, save_file  # noqa: E402


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "m.safetensors"
    tensors = {
        "w": torch.arange(64, dtype=torch.float32).reshape(8, 8),
        "h": torch.linspace(-2, 2, 24).to(torch.bfloat16).reshape(4, 6),
        "b": torch.arange(5, dtype=torch.int64),
        "d": torch.arange(3, dtype=torch.float64),
        "s": torch.tensor(1.5, dtype=torch.float16),
        "e": torch.zeros((0, 3)),
    }
    save_file(tensors, path)
    return path, tensors


def storage_of(tensor):
    storage = tensor.untyped_storage() if hasattr(tensor, "untyped_storage") else tensor.storage()
    return storage.data_ptr(), storage.nbytes()


def test_load_file_tensors_view_one_mapping_of_the_whole_file(model_file):
    path, tensors = model_file
    loaded = load_file(path)
    size = os.path.getsize(path)
    storages = {storage_of(t) for name, t in loaded.items() if t.numel()}
    assert len(storages) == 1 and next(iter(storages))[1] == size
    for name, t in tensors.items():
        assert loaded[name].dtype == t.dtype and torch.equal(loaded[name], t), name
    assert loaded["w"].is_contiguous()


def test_writes_to_loaded_tensors_never_reach_the_file(model_file):
    path, tensors = model_file
    before = path.read_bytes()
    loaded = load_file(path)
    loaded["w"][0, 0] = 1234.0
    loaded["h"].fill_(7)
    with safe_open(path, framework="pt") as f:
        view = f.get_tensor("b")
        view += 1
    assert path.read_bytes() == before
    again = load_file(path)
    assert torch.equal(again["w"], tensors["w"]) and torch.equal(again["b"], tensors["b"])
    assert loaded["w"][0, 0].item() == 1234.0


def test_tensors_outlive_the_handle_and_the_loader(model_file):
    import gc

    path, tensors = model_file
    with safe_open(path, framework="pt") as f:
        w = f.get_tensor("w")
        row = f.get_slice("w")[2:4]
    del f
    gc.collect()
    assert torch.equal(w, tensors["w"]) and torch.equal(row, tensors["w"][2:4])


def test_a_file_replaced_by_rename_leaves_loaded_tensors_unchanged(model_file):
    path, tensors = model_file
    loaded = load_file(path)
    save_file({k: torch.zeros_like(v) for k, v in tensors.items()}, path)  # temporary + rename
    for name, t in tensors.items():
        assert torch.equal(loaded[name], t), name
    assert float(load_file(path)["w"].abs().sum()) == 0.0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux page-cache semantics")
def test_an_in_place_rewrite_shows_through_untouched_pages_but_not_written_ones(model_file):
    # Documented in docs/python.md: MAP_PRIVATE keeps only the pages a tensor wrote to.
    path, tensors = model_file
    loaded = load_file(path)
    loaded["b"][0] = 42  # this page (the whole small file) is now private to us
    other = load_file(path)
    with open(path, "r+b") as f:
        with safe_open(path, framework="pt") as g:
            _, _, _, offset = g._reader.locate("w")
        f.seek(offset)
        f.write(np.full(4, 9.0, np.float32).tobytes())
    assert loaded["w"][0, 0].item() == 0.0  # private copy of the page
    assert other["w"][0, :4].tolist() == [9.0, 9.0, 9.0, 9.0]  # untouched: the file's new bytes


def test_numpy_arrays_view_the_mapping_and_are_writable(tmp_path):
    path = tmp_path / "n.safetensors"
    arrays = {"a": np.arange(12, dtype=np.float64).reshape(3, 4), "b": np.arange(7, dtype=np.int16)}
    np_save_file(arrays, path)
    before = path.read_bytes()
    loaded = np_load_file(path)
    for name, array in arrays.items():
        got = loaded[name]
        base = got
        while isinstance(base, np.ndarray):
            base = base.base
        assert type(base.obj).__name__ == "Mapping" and got.flags.writeable  # via np.frombuffer's memoryview
        np.testing.assert_array_equal(got, array)
    loaded["a"][:] = -1
    assert path.read_bytes() == before


def test_leading_dimension_slices_are_views_and_others_copies(model_file):
    path, tensors = model_file
    size = os.path.getsize(path)
    with safe_open(path, framework="pt") as f:
        rows = f.get_slice("w")[2:5]
        cols = f.get_slice("w")[:, 1:3]
        empty = f.get_slice("w")[[]]
    assert storage_of(rows)[1] == size and torch.equal(rows, tensors["w"][2:5])
    assert storage_of(cols)[1] == 2 * 8 * 4 and torch.equal(cols, tensors["w"][:, 1:3])
    assert list(empty.shape) == [0, 8]


def test_pread_backend_copies(model_file):
    path, tensors = model_file
    loaded = load_file(path, backend="pread")
    assert storage_of(loaded["w"])[1] == tensors["w"].numel() * 4
    assert torch.equal(loaded["h"], tensors["h"])


def test_misaligned_tensors_are_copied(tmp_path):
    # U8 at [0, 2), then an F32 at [2, 10): its first byte is not 4-aligned in the file.
    header = '{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"f":{"dtype":"F32","shape":[2],"data_offsets":[2,10]}}'
    header += " " * (-(8 + len(header)) % 8)
    data = b"\x01\x02" + np.array([1.5, -2.0], np.float32).tobytes()
    path = tmp_path / "mis.safetensors"
    path.write_bytes(raw_file(header, data))
    loaded = load_file(path)
    assert loaded["f"].tolist() == [1.5, -2.0] and storage_of(loaded["f"])[1] == 8
    assert storage_of(loaded["a"])[1] == os.path.getsize(path)
    assert np_load_file(path)["f"].tolist() == [1.5, -2.0]


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux's peak-RSS reset")
def test_peak_rss_of_load_file_stays_near_the_file_size(tmp_path):
    path = tmp_path / "big.safetensors"
    n = 64 << 20
    np_save_file({f"t{i}": np.full(n // 4 // 4, i, np.float32) for i in range(4)}, path)
    script = textwrap.dedent(f"""
        import resource, sys
        import torch
        from safetensors.torch import load_file
        float(torch.ones(1 << 16).sum())  # torch's first reduction sets up its thread pool
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets the peak RSS, so the imports' peak does not hide the load's
        with open("/proc/self/statm") as f:
            base = int(f.read().split()[1]) * resource.getpagesize()
        loaded = load_file({str(path)!r})
        total = sum(int(t.view(-1)[::1024].sum()) for t in loaded.values())  # one read per page
        # VmHWM, not ru_maxrss: after exec, ru_maxrss also counts the parent's (pytest's) RSS.
        with open("/proc/self/status") as f:
            peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) * 1024
        print(peak - base)
    """)
    env = dict(os.environ)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    grown = int(out.stdout.strip().splitlines()[-1])
    size = os.path.getsize(path)
    assert size * 0.9 <= grown <= size * 1.1, grown  # the pages touched, and nothing more
