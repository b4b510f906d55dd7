# SPDX-License-Identifier: Apache-2.0
"""_safe_open_handle on Python binary file objects: real files (mapped through their
descriptor), fsspec's local and memory files, BytesIO and bare read/seek objects, which are
read only in the bytes asked for."""

import io
import re

import numpy as np
import pytest

from safetensors import SafetensorError, _safe_open_handle
from safetensors.numpy import save, save_file

ARRAYS = {f"t{i}": np.arange(i * 1000, (i + 1) * 1000, dtype=np.float32).reshape(10, 100) for i in range(8)}


class CountingReader(io.RawIOBase):
    """A seekable byte stream that counts what is read from it."""

    def __init__(self, data, readinto=True):
        self._data = io.BytesIO(data)
        self.bytes_read = 0
        if not readinto:
            self.readinto = None  # read() only

    def readable(self):
        return True

    def seekable(self):
        return True

    def seek(self, offset, whence=io.SEEK_SET):
        return self._data.seek(offset, whence)

    def tell(self):
        return self._data.tell()

    def read(self, n=-1):
        chunk = self._data.read(n)
        self.bytes_read += len(chunk)
        return chunk

    def readinto(self, buffer):  # noqa: F811 - replaced by None for the read()-only variant
        n = self._data.readinto(buffer)
        self.bytes_read += n
        return n


def views_a_mapping(array):
    """Whether the array's memory is the extension's file mapping (not a copy)."""
    base = array
    while isinstance(base, np.ndarray):
        base = base.base
    return type(getattr(base, "obj", base)).__name__ == "Mapping"  # np.frombuffer keeps a memoryview


@pytest.mark.parametrize("with_readinto", [True, False])
def test_a_stream_is_read_only_in_the_bytes_asked_for(with_readinto):
    data = save(ARRAYS)
    stream = CountingReader(data, readinto=with_readinto)
    with _safe_open_handle(stream, framework="np") as f:
        header_bytes = stream.bytes_read
        assert header_bytes < 1024 and f.keys() == sorted(ARRAYS)
        assert not views_a_mapping(f.get_tensor("t0"))
        header_bytes += ARRAYS["t0"].nbytes
        np.testing.assert_array_equal(f.get_tensor("t3"), ARRAYS["t3"])
        assert stream.bytes_read == header_bytes + ARRAYS["t3"].nbytes
        np.testing.assert_array_equal(f.get_slice("t5")[2:4], ARRAYS["t5"][2:4])
        np.testing.assert_array_equal(f.get_slice("t6")[:, 1:3], ARRAYS["t6"][:, 1:3])
        assert stream.bytes_read == header_bytes + ARRAYS["t3"].nbytes + 2 * 400 + 10 * 8
    assert stream.bytes_read < len(data) // 2


def test_a_truncated_stream_raises_safetensor_error():
    data = save(ARRAYS)
    with pytest.raises(SafetensorError):
        _safe_open_handle(io.BytesIO(data[:-10]), framework="np")
    with pytest.raises(SafetensorError):
        _safe_open_handle(io.BytesIO(data[:5]), framework="np")


@pytest.mark.parametrize(
    "data, words",
    [
        (b"", "empty file (0 bytes), not a SafeTensors file"),
        (b"GGUF\x03\0\0\0" + bytes(64), "this is a GGUF file, not SafeTensors"),
        ((72).to_bytes(8, "little") + b"{" + b" " * 63,
         "file is truncated: the header needs 72 bytes after the length prefix, the file has 64"),
    ],
)
def test_a_stream_gets_the_framing_words_a_path_gets(data, words, tmp_path):
    path = tmp_path / "framing.safetensors"
    path.write_bytes(data)
    for source in (io.BytesIO(data), CountingReader(data, readinto=False)):
        with pytest.raises(SafetensorError, match=re.escape(words)):
            _safe_open_handle(source, framework="np")
    with pytest.raises(SafetensorError, match=re.escape(words)):
        with open(path, "rb") as f:
            _safe_open_handle(f, framework="np")


def test_torch_tensors_from_a_stream():
    torch = pytest.importorskip("torch")
    with _safe_open_handle(io.BytesIO(save(ARRAYS)), framework="pt") as f:
        assert torch.equal(f.get_tensor("t1"), torch.from_numpy(ARRAYS["t1"]))


def test_fsspec_memory_and_local_files(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    memory = fsspec.filesystem("memory")
    with memory.open("/models/m.safetensors", "wb") as out:
        out.write(save(ARRAYS))
    with memory.open("/models/m.safetensors", "rb") as raw, _safe_open_handle(raw, framework="np") as f:
        assert f.offset_keys() == list(ARRAYS)
        np.testing.assert_array_equal(f.get_tensor("t7"), ARRAYS["t7"])
        np.testing.assert_array_equal(f.get_slice("t0")[-1], ARRAYS["t0"][-1])
    memory.rm("/models/m.safetensors")

    path = tmp_path / "local.safetensors"
    save_file(ARRAYS, path)
    with fsspec.open(str(path), "rb") as raw, _safe_open_handle(raw, framework="np") as f:
        got = f.get_tensor("t2")
        np.testing.assert_array_equal(got, ARRAYS["t2"])
        assert views_a_mapping(got)  # mapped through the descriptor
