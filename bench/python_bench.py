#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python module's load and save cases side by side with torch.load / torch.save / np.load.

Every measurement runs in a fresh interpreter (imports excluded from the timing) on a warm
page cache: its inputs are read again right before each run, since this machine pages out
what stayed idle for about a minute (DAMON). The table shows medians and the ratio ours / baseline (below 1: ours is faster),
the median CPU seconds of the process (user + system: on a shared machine it moves much less
with the load than the wall time), and the peak RSS (VmHWM after a reset, else ru_maxrss) each
load reached above the interpreter's own. Usage:

    PYTHONPATH=build/python python3 bench/python_bench.py [--size-mb 1024] [--repeat 3] [--dir DIR]
        [--only load_file,load_file_touch,...] [--baseline-pythonpath DIR]

`save_file` is also set beside `torch.save` followed by an fsync (equal durability) and the
reference's writer emulated (its I/O pattern at upstream main: a temporary file sized up front,
1 MiB buffered writes, a rename, no fsync). `--baseline-pythonpath DIR` (repeatable) runs the
chosen cases again with another build of the module (e.g. one before a change), in the same run.

The reference package is not installed here: its figures, measured on this machine for
issue 20, are printed beside ours for the cases it has.
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

# Medians the reference package (0.3 line) measured on this machine (issue 20), in seconds.
REFERENCE = {
    "load_file": 0.058,
    "load_file_touch": 0.37,
    "get_tensor_read": 0.41,
    "get_slice": 0.040,
    "save_file": 6.6,
    "np_load_file_read": 2.3,
    "keys_100k": 0.69,
}


# ---------------------------------------------------------------- files


def model_state(size_mb):
    """A transformer-like state dict of about `size_mb` MiB: 291 tensors, bf16/fp16/fp32."""
    import torch

    layers = 32
    hidden = max(64, int(1024 * (size_mb / 1024) ** 0.5) // 64 * 64)
    inter = hidden * 11 // 4
    vocab = 32000 * hidden // 1024
    state = {"embed.weight": torch.randn(vocab, hidden).to(torch.bfloat16)}
    for i in range(layers):
        dtype = torch.bfloat16 if i % 2 == 0 else torch.float16
        p = f"layers.{i}."
        for name in ("q", "k", "v", "o"):
            state[p + name + ".weight"] = torch.randn(hidden, hidden).to(dtype)
        state[p + "up.weight"] = torch.randn(inter, hidden).to(dtype)
        state[p + "gate.weight"] = torch.randn(inter, hidden).to(dtype)
        state[p + "down.weight"] = torch.randn(hidden, inter).to(dtype)
        state[p + "norm1.weight"] = torch.ones(hidden)
        state[p + "norm2.weight"] = torch.ones(hidden)
    state["norm.weight"] = torch.ones(hidden)
    state["lm_head.weight"] = torch.randn(vocab, hidden).to(torch.bfloat16)
    return state


FILE_NAMES = {"st": "model.safetensors", "pt": "model.pt", "np_st": "arrays.safetensors", "npz": "arrays.npz",
              "many_st": "many.safetensors", "many_npz": "many.npz"}


def make_files(directory, size_mb):
    files = {key: os.path.join(directory, name) for key, name in FILE_NAMES.items()}
    if all(os.path.exists(path) for path in files.values()):
        return files  # --dir with the files of an earlier run (same --size-mb)
    import numpy as np
    import torch

    from safetensors.numpy import save_file as np_save_file
    from safetensors.torch import save_file

    state = model_state(size_mb)
    save_file(state, files["st"])
    torch.save(state, files["pt"])
    del state
    rng = np.random.default_rng(0)
    count = 64
    per = max(1, size_mb * (1 << 20) // 2 // count // 4)
    arrays = {f"a{i}": rng.standard_normal(per, dtype=np.float32) for i in range(count)}
    np_save_file(arrays, files["np_st"])
    np.savez(files["npz"], **arrays)
    del arrays
    many = {f"t{i}": np.full(2, i, np.float32) for i in range(100_000)}
    np_save_file(many, files["many_st"])
    np.savez(files["many_npz"], **many)
    return files


# ---------------------------------------------------------------- workers


def touch_pages(tensors):
    """Reads one byte of every page of every tensor."""
    import torch

    total = 0
    for t in tensors:
        if t.numel():
            total += int(t.reshape(-1).view(torch.uint8)[::4096].sum())
    return total


def read_arrays(arrays):
    """Reads every byte of every array (8 at a time where the size allows)."""
    import numpy as np

    total = 0
    for a in arrays:
        raw = a.reshape(-1).view(np.uint8)
        total += int((raw.view(np.uint64) if raw.size % 8 == 0 else raw).sum(dtype=np.uint64))
    return total


def read_bytes(tensors):
    """Reads every byte of every tensor."""
    import torch

    return read_arrays(t.reshape(-1).view(torch.uint8).numpy() for t in tensors if t.numel())


def reference_path_load(path):
    """The reference package's loading path, emulated in Python: one
    `torch.UntypedStorage.from_file(path, shared=False)` (a private copy-on-write mapping) and a
    view of it per tensor. What ours is compared with when the reference itself is absent."""
    import struct

    import torch

    from safetensors import _dtypes

    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    header.pop("__metadata__", None)
    size = os.path.getsize(path)
    whole = torch.tensor([], dtype=torch.uint8).set_(torch.UntypedStorage.from_file(path, False, size))
    out = {}
    for name, info in sorted(header.items(), key=lambda item: item[1]["data_offsets"][0]):
        begin, end = info["data_offsets"]
        out[name] = whole[8 + n + begin : 8 + n + end].view(_dtypes.torch_dtype(info["dtype"])).view(info["shape"])
    return out


def reference_path_save(tensors, header_source, path):
    """The reference's writer at upstream main (safetensors/src/tensor.rs, buffered_write_to_file),
    emulated in Python: a temporary file beside the target, sized to the total up front, the
    8-byte length, the header and every tensor's bytes through a 1 MiB buffer, then a rename; no
    fsync. The header is the one our writer gave the same tensors (its size is what matters)."""
    import struct
    import tempfile as tmp

    import torch

    with open(header_source, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = f.read(n)
    entries = json.loads(header)
    entries.pop("__metadata__", None)
    order = sorted(entries, key=lambda name: entries[name]["data_offsets"][0])
    total = 8 + n + max((entries[name]["data_offsets"][1] for name in order), default=0)
    fd, temp = tmp.mkstemp(dir=os.path.dirname(path))
    with open(fd, "wb", buffering=1 << 20) as out:
        out.truncate(total)
        out.write(struct.pack("<Q", n))
        out.write(header)
        for name in order:
            out.write(tensors[name].reshape(-1).view(torch.uint8).numpy().data)
    os.replace(temp, path)


def rss_now():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss():
    """The high-water RSS in bytes: VmHWM (reset by reset_peak_rss), else ru_maxrss (which,
    after exec, also counts the parent's RSS)."""
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) * 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def reset_peak_rss():
    """Resets the kernel's RSS high-water mark (Linux 4.0+), so that ru_maxrss measures
    from here rather than the imports' peak."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def worker(case, files):
    """Runs one case; returns (seconds, peak RSS growth in bytes, CPU seconds of the process)."""
    import numpy as np
    import torch

    import safetensors
    from safetensors import safe_open
    from safetensors.numpy import load_file as np_load_file
    from safetensors.torch import load_file, save_file

    keep = None
    out = os.path.join(os.path.dirname(files["st"]), f"out-{os.getpid()}")
    prepared = None
    if case in ("save_file", "torch.save", "torch.save_fsync", "reference_save"):
        prepared = {k: v.clone() for k, v in load_file(files["st"]).items()}
    reset_peak_rss()
    base_rss = rss_now()
    cpu_start = time.process_time()
    start = time.perf_counter()
    if case == "load_file":
        keep = load_file(files["st"])
    elif case == "load_file_pread":
        keep = load_file(files["st"], backend="pread")
    elif case == "torch.load":
        keep = torch.load(files["pt"])
    elif case == "load_file_touch":
        keep = load_file(files["st"])
        touch_pages(keep.values())
    elif case == "from_file":
        keep = reference_path_load(files["st"])
    elif case == "from_file_touch":
        keep = reference_path_load(files["st"])
        touch_pages(keep.values())
    elif case == "from_file_read":
        read_bytes(reference_path_load(files["st"]).values())
    elif case == "torch.load_touch":
        keep = torch.load(files["pt"])
        touch_pages(keep.values())
    elif case == "get_tensor_read":
        with safe_open(files["st"], framework="pt") as f:
            read_bytes(f.get_tensor(k) for k in f.keys())
    elif case == "torch.load_read":
        read_bytes(torch.load(files["pt"]).values())
    elif case == "get_slice":
        with safe_open(files["st"], framework="pt") as f:
            keep = []
            for k in f.keys():
                sl = f.get_slice(k)
                shape = sl.get_shape()
                if len(shape) == 2 and shape[0] >= 1024:
                    keep.append(sl[0 : shape[0] // 4])
    elif case == "torch.load_slice":
        keep = [t[0 : t.shape[0] // 4] for t in torch.load(files["pt"]).values() if t.dim() == 2 and t.shape[0] >= 1024]
    elif case == "save_file":
        save_file(prepared, out)
    elif case == "torch.save":
        torch.save(prepared, out)
    elif case == "torch.save_fsync":
        torch.save(prepared, out)
        fd = os.open(out, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
    elif case == "reference_save":
        reference_path_save(prepared, files["st"], out)
    elif case == "np_load_file_read":
        read_arrays(np_load_file(files["np_st"]).values())
    elif case == "np.load_read":
        with np.load(files["npz"]) as z:
            read_arrays(z[k] for k in z.files)
    elif case == "keys_100k":
        with safe_open(files["many_st"], framework="np") as f:
            keep = f.keys()
    elif case == "np.load_keys_100k":
        with np.load(files["many_npz"]) as z:
            keep = list(z.files)
    else:
        raise SystemExit(f"unknown case {case}")
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    peak = peak_rss()
    if os.path.exists(out):
        os.remove(out)
    del keep, safetensors
    return seconds, max(0, peak - base_rss), cpu


def inputs_of(case, files):
    """The files a case reads."""
    if case.startswith("np") or case == "np.load_read":
        return [files["np_st"], files["npz"]]
    if "100k" in case:
        return [files["many_st"], files["many_npz"]]
    if case.startswith("torch.load"):
        return [files["pt"]]
    return [files["st"]]


def warm(paths):
    """Reads the files into the page cache (DAMON evicts what stays idle for about a minute)."""
    buffer = bytearray(64 << 20)
    for path in paths:
        with open(path, "rb", buffering=0) as f:
            while f.readinto(buffer):
                pass


def run_once(case, files, pythonpath=None):
    """One fresh interpreter running `case` (its inputs read again first): (seconds, RSS growth, CPU)."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    warm(inputs_of(case, files))
    proc = subprocess.run([sys.executable, __file__, "--worker", case, "--files", json.dumps(files)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{case} failed:\n{proc.stderr}")
    # The worker removed what it wrote: settle that now (the journal commit, and on a filesystem
    # mounted with `discard` the trim of the freed blocks), or the next run to fsync pays for it.
    os.sync()
    return json.loads(proc.stdout.strip().splitlines()[-1])


def medians(runs):
    times = sorted(r[0] for r in runs)
    cpus = sorted(r[2] for r in runs)
    return times[len(times) // 2], max(r[1] for r in runs), cpus[len(cpus) // 2]


def run_worker(case, files, repeat, pythonpath=None):
    return medians([run_once(case, files, pythonpath) for _ in range(repeat)])


def run_round_robin(jobs, files, repeat):
    """`jobs` ({label: (case, pythonpath)}) run in turn, `repeat` rounds, each round starting one
    job later, so that a change in the machine's load, or what an earlier run left the disk and
    the memory to do, falls on each alike."""
    runs = {label: [] for label in jobs}
    labels = list(jobs)
    for round_ in range(repeat):
        for k in range(len(labels)):
            label = labels[(round_ + k) % len(labels)]
            case, pythonpath = jobs[label]
            runs[label].append(run_once(case, files, pythonpath))
    return {label: medians(r) for label, r in runs.items()}


# ---------------------------------------------------------------- main

PAIRS = [
    ("load_file", "torch.load", "torch load_file, returning the dict"),
    ("load_file_touch", "torch.load_touch", "same, then touching every page"),
    ("get_tensor_read", "torch.load_read", "safe_open + get_tensor every key, reading every byte"),
    ("get_slice", "torch.load_slice", "get_slice[0:rows/4] of the 2-D tensors"),
    ("save_file", "torch.save", "torch save_file"),
    ("np_load_file_read", "np.load_read", "numpy load_file, reading every byte"),
    ("keys_100k", "np.load_keys_100k", "open a 100,000-tensor file, list keys"),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024, help="size of the torch model file (MiB)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", help="where to write the files, kept (and reused when present); default: a "
                        "temporary directory, removed")
    parser.add_argument("--only", help="comma-separated cases to run (first column of PAIRS, e.g. "
                        "load_file_touch,get_tensor_read); default: all")
    parser.add_argument("--baseline-pythonpath", action="append", default=[],
                        help="another build of the module (its PYTHONPATH; may repeat): the chosen cases run with it "
                        "too, side by side")
    parser.add_argument("--worker")
    parser.add_argument("--files")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, json.loads(args.files))))
        return

    directory = args.dir or tempfile.mkdtemp(prefix="st-pybench-")
    os.makedirs(directory, exist_ok=True)
    try:
        print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
        files = make_files(directory, args.size_mb)
        for path in files.values():  # warm the page cache
            with open(path, "rb") as f:
                while f.read(64 << 20):
                    pass
        size = os.path.getsize(files["st"])
        print(f"model file: {size / 1e9:.2f} GB, {args.repeat} runs each, medians\n")
        print("| case | ours (s) | ours CPU (s) | baseline | baseline (s) | baseline CPU (s) | ours / baseline "
              "| reference 0.3 (s) | ours / reference |")
        print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
        peaks = {}
        results = {}
        only = set(args.only.split(",")) if args.only else None
        for ours, baseline, title in PAIRS:
            if only is not None and ours not in only:
                continue
            ours_s, ours_rss, ours_cpu = run_worker(ours, files, args.repeat)
            base_s, base_rss, base_cpu = run_worker(baseline, files, args.repeat)
            results[ours] = (ours_s, ours_cpu)
            peaks[ours], peaks[baseline] = ours_rss, base_rss
            # The reference's figures are for a 1 GB file: compared only at that size.
            ref = REFERENCE.get(ours) if abs(size - 1e9) < 0.1e9 or ours == "keys_100k" else None
            ref_cells = f"{ref:.3f} | {ours_s / ref:.2f}" if ref else "- | -"
            print(f"| {title} | {ours_s:.3f} | {ours_cpu:.3f} | `{baseline}` | {base_s:.3f} | {base_cpu:.3f} | "
                  f"{ours_s / base_s:.2f} | {ref_cells} |",
                  flush=True)
        if "save_file" in results:
            jobs = {"save_file": ("save_file", None),
                    "`torch.save` (no fsync)": ("torch.save", None),
                    "`torch.save` + fsync (equal durability)": ("torch.save_fsync", None),
                    "the reference's writer, emulated (no fsync)": ("reference_save", None)}
            for other in args.baseline_pythonpath:
                jobs[f"save_file of the build in {other}"] = ("save_file", other)
            got = run_round_robin(jobs, files, args.repeat)
            ours_s, _, ours_cpu = got.pop("save_file")
            print(f"\nsave_file (temporary, fsync, rename; {ours_s:.3f} s, CPU {ours_cpu:.3f} s) against writers "
                  "with and without durability, run in turn:\n")
            print("| baseline | baseline (s) | baseline CPU (s) | ours / baseline | CPU ours / baseline |")
            print("|---|---:|---:|---:|---:|")
            for title, (base_s, _, base_cpu) in got.items():
                print(f"| {title} | {base_s:.3f} | {base_cpu:.3f} | {ours_s / base_s:.2f} | {ours_cpu / base_cpu:.2f} |",
                      flush=True)
            results.pop("save_file")  # compared with the other build above
        for other in args.baseline_pythonpath if results else ():
            print(f"\nThis build against the module in {other}, in the same run:\n")
            print("| case | this build (s) | CPU (s) | other build (s) | CPU (s) | this / other |")
            print("|---|---:|---:|---:|---:|---:|")
            for case, (ours_s, ours_cpu) in results.items():
                other_s, _, other_cpu = run_worker(case, files, args.repeat, other)
                print(f"| {case} | {ours_s:.3f} | {ours_cpu:.3f} | {other_s:.3f} | {other_cpu:.3f} | "
                      f"{ours_s / other_s:.2f} |", flush=True)
        if results:
            print("\nThe reference's loading path, emulated (UntypedStorage.from_file(shared=False) + a view per "
                  "tensor), in the same run:\n")
            print("| case | ours (s) | ours CPU (s) | from_file path (s) | from_file CPU (s) | ours / from_file |")
            print("|---|---:|---:|---:|---:|---:|")
            for ours, emulated in (("load_file", "from_file"), ("load_file_touch", "from_file_touch"),
                                   ("get_tensor_read", "from_file_read")):
                if ours in results:
                    em_s, _, em_cpu = run_worker(emulated, files, args.repeat)
                    ours_s, ours_cpu = results[ours]
                    print(f"| {ours} | {ours_s:.3f} | {ours_cpu:.3f} | {em_s:.3f} | {em_cpu:.3f} | {ours_s / em_s:.2f} |",
                          flush=True)
        pread_s, pread_rss, _ = run_worker("load_file_pread", files, args.repeat)
        print(f"\nload_file(backend=\"pread\"): {pread_s:.3f} s")
        print("\nPeak RSS growth (VmHWM) against the file size:")
        for case in ("load_file", "load_file_touch", "torch.load", "torch.load_touch"):
            if case not in peaks:
                continue
            print(f"- {case}: {peaks[case] / 1e6:.0f} MB ({peaks[case] / size:.2f} x file size)")
        print(f"- load_file(backend=\"pread\"): {pread_rss / 1e6:.0f} MB ({pread_rss / size:.2f} x file size)")
        print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    finally:
        if not args.dir:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
