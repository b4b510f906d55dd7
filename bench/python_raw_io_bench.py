#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""load_file / save_file of the `safetensors` Python package against numpy's own raw I/O
(np.fromfile of the same file's data / ndarray.tofile of the same bytes), in the same run. Not a test: prints ratios.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_raw_io_bench.py [--bytes N] [--tensors K] [--repeat R]

ratio = numpy's time / ours (above 1: we are faster). Each round runs every case once, in a
rotating order, and the median over rounds is reported, so load bursts hit all cases alike.
Every case runs once untimed first, so files are warm in the page cache.
"""

import argparse
import os
import statistics
import struct
import sys
import tempfile
import time

import numpy as np

import safetensors.numpy as stnp

try:
    import torch

    import safetensors.torch as stpt
except ImportError:  # the torch rows are skipped
    torch = None


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bytes", type=int, default=1 << 30, help="total tensor bytes (default 1 GiB)")
    parser.add_argument("--tensors", type=int, default=16, help="tensors in the file (default 16)")
    parser.add_argument("--repeat", type=int, default=5, help="rounds; the median is reported (default 5)")
    parser.add_argument("--dir", default=os.environ.get("TMPDIR", "/tmp"), help="scratch directory")
    args = parser.parse_args()

    per_tensor = args.bytes // args.tensors // 4
    rng = np.random.default_rng(0)
    arrays = {f"layer.{i}.weight": rng.standard_normal(per_tensor, dtype=np.float32) for i in range(args.tensors)}
    flat = np.concatenate(list(arrays.values()))  # the same bytes as one raw array
    total = flat.nbytes

    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        st_path = os.path.join(scratch, "model.safetensors")
        raw_path = os.path.join(scratch, "model.raw")
        stnp.save_file(arrays, st_path)
        flat.tofile(raw_path)

        def tofile_fsync():
            with open(raw_path, "wb") as f:
                flat.tofile(f)
                f.flush()
                os.fsync(f.fileno())

        def tofile_atomic():  # the durability save_file gives: new file, fsync, rename, directory fsync
            temp = raw_path + ".tmp"
            with open(temp, "wb") as f:
                flat.tofile(f)
                f.flush()
                os.fsync(f.fileno())
            os.rename(temp, raw_path)
            directory = os.open(scratch, os.O_RDONLY)
            os.fsync(directory)
            os.close(directory)

        with open(st_path, "rb") as f:
            data_start = 8 + struct.unpack("<Q", f.read(8))[0]

        cases = {
            # The same bytes of the same file: page-cache state (dirty, under writeback) is shared.
            "load  np.fromfile": lambda: np.fromfile(st_path, dtype=np.float32, offset=data_start),
            "load  safetensors.numpy.load_file (mmap)": lambda: stnp.load_file(st_path),
            "load  safetensors.numpy.load_file (pread)": lambda: stnp.load_file(st_path, backend="pread"),
            "save  ndarray.tofile": lambda: flat.tofile(raw_path),
            "save  ndarray.tofile + fsync": tofile_fsync,
            "save  ndarray.tofile + fsync + rename": tofile_atomic,
            "save  safetensors.numpy.save_file": lambda: stnp.save_file(arrays, st_path),
        }
        if torch is not None:
            tensors = {k: torch.from_numpy(v) for k, v in arrays.items()}
            cases["load  safetensors.torch.load_file (mmap)"] = lambda: stpt.load_file(st_path)
            cases["save  safetensors.torch.save_file"] = lambda: stpt.save_file(tensors, st_path)

        names = list(cases)
        times = {n: [] for n in names}
        for name in names:  # warm-up: page cache, allocator, first-write costs
            cases[name]()
        for r in range(args.repeat):
            order = names[r % len(names):] + names[: r % len(names)]
            for name in order:
                times[name].append(timed(cases[name]))
        median = {n: statistics.median(t) for n, t in times.items()}

    def line(name, baseline):
        t = median[name]
        ratio = f"{median[baseline] / t:5.2f}x vs {baseline.split('  ', 1)[1]}" if baseline else ""
        print(f"{name:44s} {t * 1e3:9.1f} ms {total / t / 2**30:6.2f} GiB/s  {ratio}")

    print(f"{total / 2**30:.2f} GiB in {args.tensors} float32 tensors, median of {args.repeat} rounds, "
          f"python {sys.version.split()[0]}, numpy {np.__version__}" + (f", torch {torch.__version__}" if torch else ""))
    for name in names:
        if name.startswith("load  safetensors"):
            line(name, "load  np.fromfile")
        elif name.startswith("save  safetensors"):
            line(name, "save  ndarray.tofile")
            line(name, "save  ndarray.tofile + fsync")
            line(name, "save  ndarray.tofile + fsync + rename")
        else:
            line(name, None)


if __name__ == "__main__":
    main()
