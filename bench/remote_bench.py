#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Full remote loads through the public API side by side with `curl -o /dev/null` of the same
file from the same server, in one run: nginx on 127.0.0.1 (tests/python/nginx_server.py).

Cases (each run a fresh interpreter that times the load call alone, as a program loading a
model does once; curl's own transfer time, `%{time_total}`):
  curl -o /dev/null                 one connection into one reused buffer: the baseline
  curl -o tmpfs                     the same transfer kept in new memory (a file on /dev/shm, removed)
  new memory alone                  no transfer: the file's size of np.empty, written once
  torch load_file(url)              safetensors.torch.load_file of the URL
  safe_open(url) + get_tensor each  numpy arrays, one tensor after another
  load_sharded(url, 0, 1, {})       safetensors.cxx's parallel loader into torch tensors

The cases take turns, each round starting one case later, for --repeat rounds (median wall
time; x curl = curl's time / the case's). The file is read again right before every run: this
machine evicts page cache idle for about a minute (DAMON), and nginx must serve from memory.
With --baseline-pythonpath the loads run a second time with another build of the module.

    PYTHONPATH=build/python python3 bench/remote_bench.py [--size-mb 1024] [--repeat 7] [--dir DIR] \
        [--baseline-pythonpath OTHER_BUILD/python]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "python"))

CURL = "curl -o /dev/null"
CURL_TMPFS = "curl -o tmpfs (new memory)"
NEW_MEMORY = "new memory alone: np.empty + fill"
TMPFS = "/dev/shm"
LOADS = {
    "torch load_file(url)": "load_file",
    "safe_open(url) + get_tensor each": "safe_open",
    "load_sharded(url, 0, 1, {})": "load_sharded",
}


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


def worker(case, url, size):
    """Imports first (not timed), then times one load (of `url`, or `size` bytes of new memory)."""
    import resource

    import torch  # noqa: F401  (imported before the timing, as a program has it already)

    from safetensors import safe_open
    from safetensors.cxx import load_sharded
    from safetensors.torch import load_file

    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime
    start = time.perf_counter()
    if case == "load_file":
        nbytes = sum(t.numel() * t.element_size() for t in load_file(url).values())
    elif case == "safe_open":
        nbytes = 0
        with safe_open(url, framework="np") as f:
            for name in f.keys():
                nbytes += f.get_tensor(name).nbytes
    elif case == "new_memory":  # the floor every load that keeps its tensors pays: first writes
        import numpy as np

        nbytes = size
        np.empty(nbytes, dtype=np.uint8).fill(1)
    else:
        nbytes = sum(t.numel() * t.element_size() for t in load_sharded(url, 0, 1, {}).values())
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime - cpu, "bytes": nbytes}))


def warm(path):
    """Reads the file into the page cache again (DAMON evicts what stays idle for about a minute)."""
    buffer = bytearray(64 << 20)
    with open(path, "rb", buffering=0) as f:
        while f.readinto(buffer):
            pass


def run_once(label, url, path, size, pythonpath):
    """One timed run of `label`: (wall seconds, CPU seconds of the loading process or None)."""
    warm(path)
    if label.startswith("curl"):
        target = "/dev/null" if label == CURL else os.path.join(TMPFS, f"remote-bench-{os.getpid()}.bin")
        try:
            out = subprocess.run(["curl", "--silent", "--show-error", "--fail", "-o", target, "-w", "%{time_total}",
                                  url], check=True, capture_output=True, text=True).stdout
        finally:
            if target != "/dev/null" and os.path.exists(target):
                os.unlink(target)
        return float(out), None
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    case = "new_memory" if label == NEW_MEMORY else LOADS[label.split(" @ ")[0]]
    proc = subprocess.run([sys.executable, __file__, "--worker", case, "--url", url, "--bytes", str(size)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{label} failed:\n{proc.stderr}")
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    if got["bytes"] != size:
        raise SystemExit(f"{label} loaded {got['bytes']} tensor bytes, the file holds {size}")
    return got["wall"], got["cpu"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--dir", default=None, help="where the file goes (default: a temporary folder)")
    parser.add_argument("--baseline-pythonpath", default=None, help="another build's python folder, run beside")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--bytes", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.url, args.bytes)
        return

    import nginx_server

    floors = [CURL_TMPFS] if os.path.isdir(TMPFS) else []
    jobs = [(label, None) for label in [CURL] + floors + [NEW_MEMORY] + list(LOADS)]
    if args.baseline_pythonpath:
        jobs += [(f"{label} @ baseline", args.baseline_pythonpath) for label in LOADS]
    work = tempfile.mkdtemp(prefix="st-remote-bench-", dir=args.dir)
    try:
        path = os.path.join(work, "model.safetensors")
        write_model(path, args.size_mb)
        size = os.path.getsize(path)
        tensor_bytes = size - 8 - int.from_bytes(open(path, "rb").read(8), "little")
        walls = {label: [] for label, _ in jobs}
        cpus = {label: [] for label, _ in jobs}
        with nginx_server.NginxServer(work) as server:
            url = server.url("model.safetensors")
            for round_ in range(args.repeat):
                for k in range(len(jobs)):
                    label, pythonpath = jobs[(round_ + k) % len(jobs)]
                    wall, cpu = run_once(label, url, path, tensor_bytes, pythonpath)
                    walls[label].append(wall)
                    if cpu is not None:
                        cpus[label].append(cpu)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    mib = 1 << 20
    curl = statistics.median(walls[CURL])
    print(f"one {size / mib:.0f} MiB file from nginx on 127.0.0.1, page cache warm before each run; "
          f"median of {args.repeat} interleaved rounds; {os.cpu_count()} CPUs")
    print()
    print("| case | wall s | MiB/s | x curl | CPU s | runs (s) |")
    print("|---|---:|---:|---:|---:|---|")
    for label, _ in jobs:
        wall = statistics.median(walls[label])
        cpu = f"{statistics.median(cpus[label]):.3f}" if cpus[label] else ""
        runs = " ".join(f"{t:.2f}" for t in walls[label])
        print(f"| {label} | {wall:.3f} | {size / wall / mib:.0f} | {curl / wall:.2f} | {cpu} | {runs} |")


if __name__ == "__main__":
    main()
