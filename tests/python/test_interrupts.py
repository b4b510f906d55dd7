# SPDX-License-Identifier: Apache-2.0
"""Ctrl-C during a long save_file / load_file raises KeyboardInterrupt promptly (the
extension checks for signals between 64 MiB pieces) and leaves no temporary file."""

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals and sparse files")

SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading, time
    import numpy as np
    from safetensors.numpy import load_file, save_file
    kind, path = sys.argv[1], sys.argv[2]
    def interrupt():
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=interrupt, daemon=True).start()
    start = time.perf_counter()
    try:
        if kind == "save":
            save_file({"big": np.zeros(3 << 30, np.uint8)}, path)  # untouched zero pages: no RAM needed
        else:
            load_file(path, backend="pread")
        print("finished", time.perf_counter() - start)
    except KeyboardInterrupt:
        print("interrupted", time.perf_counter() - start)
""")


def run(kind, path):
    out = subprocess.run([sys.executable, "-c", SCRIPT, kind, str(path)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_ctrl_c_interrupts_a_long_save_and_removes_the_temporary(tmp_path):
    target = tmp_path / "big.safetensors"
    what, seconds = run("save", target)
    assert what == "interrupted", "the save finished before the interrupt: make it bigger"
    assert float(seconds) < 10
    assert os.listdir(tmp_path) == []  # neither the target nor a temporary


def test_ctrl_c_interrupts_a_long_pread_load(tmp_path):
    path = tmp_path / "sparse.safetensors"
    nbytes = 3 << 30
    header = b'{"big":{"dtype":"U8","shape":[%d],"data_offsets":[0,%d]}}' % (nbytes, nbytes)
    header += b" " * (-(8 + len(header)) % 8)
    with open(path, "wb") as f:
        f.write(len(header).to_bytes(8, "little") + header)
        f.truncate(8 + len(header) + nbytes)  # a hole: reads back as zeros, costs no disk
    what, seconds = run("load", path)
    assert what == "interrupted", "the load finished before the interrupt: make it bigger"
    assert float(seconds) < 10
