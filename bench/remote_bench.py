#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A full remote load side by side with `curl -o /dev/null` of the same file from the same
server, in one run: nginx on 127.0.0.1 (tests/python/nginx_server.py) serving one file from
the page cache (warmed by a first, untimed curl).

Cases, taking turns --repeat times (median wall time, throughput = file size / wall):
  curl -o /dev/null          one connection, the baseline
  load_sharded(url, 0, 1)    safetensors.cxx's parallel loader into torch tensors (Python)
  safe_open(url) get_tensor  one tensor after another, each split over parallel connections
  loader, reused buffers     load_sharded's transfer alone, into memory touched beforehand
  fresh buffers, no transfer the page faults alone of as much new memory as a load fills

    PYTHONPATH=build/python python3 bench/remote_bench.py [--size-mb 1024] [--repeat 5] [--dir DIR]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "python"))


def write_model(path, size_mb):
    """Tensors of 32 MiB (the size of a large real weight) plus a few small ones, random bytes."""
    import numpy as np

    from safetensors.numpy import save_file

    rng = np.random.default_rng(0)
    tensors = {}
    left = size_mb << 20
    i = 0
    while left > 0:
        n = min(32 << 20, left)
        tensors[f"layer.{i:03d}.weight"] = rng.integers(0, 256, n, dtype=np.uint8)
        tensors[f"layer.{i:03d}.norm"] = rng.integers(0, 256, 4096, dtype=np.uint8)
        left -= n
        i += 1
    save_file(tensors, path)


def timed(cases, repeat):
    """Median wall time of each case, the cases taking turns so that a busy moment of a shared
    machine does not fall on one of them only."""
    times = {name: [] for name, _ in cases}
    for _ in range(repeat):
        for name, run in cases:
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return [(name, statistics.median(times[name])) for name, _ in cases]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", default=None, help="where the file goes (default: a temporary folder)")
    args = parser.parse_args()

    import nginx_server
    import numpy as np

    from safetensors import safe_open
    from safetensors._safetensors_cxx import TensorParallelLoad
    from safetensors.cxx import load_sharded

    work = tempfile.mkdtemp(prefix="st-remote-bench-", dir=args.dir)
    try:
        path = os.path.join(work, "model.safetensors")
        write_model(path, args.size_mb)
        size = os.path.getsize(path)
        with nginx_server.NginxServer(work) as server:
            url = server.url("model.safetensors")
            curl = ["curl", "--silent", "--show-error", "--fail", "-o", "/dev/null", url]
            subprocess.run(curl, check=True)  # the page cache, warm for every case

            def load_all():
                tensors = load_sharded(url, 0, 1, {})
                assert sum(t.numel() for t in tensors.values()) > 0

            def one_by_one():
                with safe_open(url, framework="np") as f:
                    for name in f.keys():
                        f.get_tensor(name)

            # The library's transfer alone: the same loader into buffers allocated and touched once,
            # so that no page of fresh memory is faulted in during the timing (as curl writes to
            # /dev/null from one reused buffer).
            loader = TensorParallelLoad(url, 0, 1, "{}", "pread", {})
            buffers = [np.ones(nbytes, dtype=np.uint8) for _, _, _, nbytes, _, _ in loader.tensors()]

            def touch_fresh():  # what a load into new memory pays the kernel in page faults
                for _, _, _, nbytes, _, _ in loader.tensors():
                    np.empty(nbytes, dtype=np.uint8)[::4096] = 1

            cases = [("curl -o /dev/null", lambda: subprocess.run(curl, check=True)),
                     ("load_sharded(url, 0, 1, {})", load_all),
                     ("safe_open(url) + get_tensor each", one_by_one),
                     ("the same loader into reused buffers", lambda: loader.load_into(buffers)),
                     ("no transfer: fresh buffers of the same sizes, one byte per page written", touch_fresh)]
            results = timed(cases, args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    mib = 1 << 20
    curl_rate = size / results[0][1]
    print(f"one {size / mib:.0f} MiB file from nginx on 127.0.0.1 (page cache warm), median of {args.repeat}; "
          f"{os.cpu_count()} CPUs")
    print()
    print("| case | wall s | MiB/s | x curl |")
    print("|---|---|---|---|")
    for name, wall in results:
        rate = size / wall
        print(f"| {name} | {wall:.3f} | {rate / mib:.0f} | {rate / curl_rate:.2f} |")


if __name__ == "__main__":
    main()
