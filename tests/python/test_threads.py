# SPDX-License-Identifier: Apache-2.0
"""Reads from many threads: correct results, and the GIL released while bytes are copied."""

import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from safetensors import safe_open
from safetensors.numpy import save_file


@pytest.fixture(scope="module")
def many_tensors(tmp_path_factory):
    rng = np.random.default_rng(5)
    tensors = {f"t{i}": rng.standard_normal((64, 33)).astype(np.float32) for i in range(32)}
    path = tmp_path_factory.mktemp("threads") / "many.safetensors"
    save_file(tensors, path)
    return path, tensors


@pytest.mark.parametrize("backend", ["mmap", "pread"])
def test_threads_sharing_one_handle_read_correctly(many_tensors, backend):
    path, tensors = many_tensors
    with safe_open(path, framework="np", backend=backend) as f:
        def read(name):
            whole = f.get_tensor(name)
            part = f.get_slice(name)[3:40:3, ::-2]
            return name, whole, part

        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(read, list(tensors) * 4))
    for name, whole, part in results:
        np.testing.assert_array_equal(whole, tensors[name])
        np.testing.assert_array_equal(part, tensors[name][3:40:3, ::-2])


def other_thread_runs_during(action):
    """True when a thread waiting for the GIL gets it while `action()` runs. The switch
    interval is made huge, so only a call that releases the GIL lets the other thread in."""
    ran = threading.Event()
    go = threading.Event()
    worker = threading.Thread(target=lambda: (go.wait(), ran.set()))
    old = sys.getswitchinterval()
    worker.start()
    sys.setswitchinterval(1000)
    try:
        go.set()  # the worker is now runnable but needs the GIL, which this thread holds
        for _ in range(20):
            action()
            if ran.is_set():
                break
        result = ran.is_set()
    finally:
        sys.setswitchinterval(old)
        worker.join()
    return result


def test_reads_release_the_gil(tmp_path):
    path = tmp_path / "big.safetensors"
    save_file({"big": np.ones(8 << 20, np.uint8)}, path)  # 8 MiB: copying takes a while

    def busy_python():
        sum(range(200_000))

    # The control: pure Python never lets the waiting thread in, so the probe can fail.
    assert not other_thread_runs_during(busy_python)
    with safe_open(path, framework="np", backend="pread") as f:
        assert other_thread_runs_during(lambda: f.get_tensor("big"))
    with safe_open(path, framework="np") as f:
        assert other_thread_runs_during(lambda: f.get_slice("big")[::2])
