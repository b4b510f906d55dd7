#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tensor-parallel loading side by side with its baseline, in one torchrun job (gloo, CPU):
every rank loads its parts with safetensors.cxx.load_sharded, or loads the whole file and
slices it with torch.chunk(...).clone(), from one local file and from nginx on 127.0.0.1.

Wall time is the slowest rank's (barriers around each step), median of --repeat runs. Bytes
per rank: for a URL the library's HTTP body bytes (equal to nginx's access log, which the
table also sums over all ranks), for a path the kernel's count of bytes read by read/pread
(/proc/self/io rchar). A mapped file (load_file, mmap) reads through page faults, which no
counter here sees: its bytes are not shown. The local file is in the page cache (warm).

    PYTHONPATH=build/python python3 bench/tp_load_bench.py [--size-mb 256] [--world 4] [--repeat 3] [--dir DIR]
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "python"))

# Megatron/vLLM's split of a Llama block.
PLAN = {
    "*.q_proj.weight": "column", "*.k_proj.weight": "column", "*.v_proj.weight": "column",
    "*.gate_proj.weight": "column", "*.up_proj.weight": "column",
    "*.o_proj.weight": "row", "*.down_proj.weight": "row",
    "model.embed_tokens.weight": {"split": "column", "dim": 0},
    "lm_head.weight": "column",
}


def model_state(size_mb):
    """A Llama-like bf16 state dict of about `size_mb` MiB (8 layers) and each tensor's split dim."""
    import torch

    layers = 8
    hidden = max(256, int(1024 * (size_mb / 256) ** 0.5) // 256 * 256)
    inter = hidden * 11 // 4 // 64 * 64
    vocab = 16000
    g = torch.Generator().manual_seed(0)

    def weight(*shape):
        return torch.randint(-2**15, 2**15, shape, generator=g, dtype=torch.int16).view(torch.bfloat16)

    state = {"model.embed_tokens.weight": (weight(vocab, hidden), 0), "lm_head.weight": (weight(vocab, hidden), 0),
             "model.norm.weight": (weight(hidden), None)}
    for i in range(layers):
        p = f"model.layers.{i}."
        for name in ("q", "k", "v"):
            state[p + f"self_attn.{name}_proj.weight"] = (weight(hidden, hidden), 0)
        state[p + "self_attn.o_proj.weight"] = (weight(hidden, hidden), 1)
        state[p + "mlp.gate_proj.weight"] = (weight(inter, hidden), 0)
        state[p + "mlp.up_proj.weight"] = (weight(inter, hidden), 0)
        state[p + "mlp.down_proj.weight"] = (weight(hidden, inter), 1)
        state[p + "input_layernorm.weight"] = (weight(hidden), None)
        state[p + "post_attention_layernorm.weight"] = (weight(hidden), None)
    return state


# ---------------------------------------------------------------- one rank (under torchrun)


def rchar():
    with open("/proc/self/io") as f:
        return int(next(line for line in f if line.startswith("rchar:")).split()[1])


def worker(spec_path, out_dir):
    import torch
    import torch.distributed as dist

    from safetensors.cxx import load_sharded
    from safetensors.torch import load_file

    with open(spec_path) as f:
        spec = json.load(f)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    dims = spec["dims"]

    def chunked(full):
        return {n: (t if dims[n] is None else torch.chunk(t, world, dims[n])[rank].clone()) for n, t in full.items()}

    def parts_of(source):
        return load_sharded(source, rank, world, PLAN, return_stats=True)

    def parts_mapped(source):
        return load_sharded(source, rank, world, PLAN, backend="mmap", return_stats=True)

    def whole_then_chunk(source):
        full, stats = load_sharded(source, 0, 1, {}, return_stats=True)
        return chunked(full), stats

    def mapped_then_chunk(source):
        return chunked(load_file(source)), {}

    cases = [("local", "load_sharded", spec["path"], parts_of),
             ("local", "load_sharded (mmap)", spec["path"], parts_mapped),
             ("local", "whole file + torch.chunk", spec["path"], whole_then_chunk),
             ("local", "load_file (mmap) + torch.chunk", spec["path"], mapped_then_chunk),
             ("nginx", "load_sharded", spec["url"], parts_of),
             ("nginx", "whole file + torch.chunk", spec["url"], whole_then_chunk)]
    results = []
    for source_kind, method, source, run in cases:
        for repeat in range(spec["repeat"]):
            dist.barrier()
            if rank == 0:
                mark = os.path.getsize(spec["access_log"])
            dist.barrier()
            before, start = rchar(), time.perf_counter()
            parts, stats = run(source)
            elapsed = time.perf_counter() - start
            read = rchar() - before
            wall = torch.tensor([elapsed], dtype=torch.float64)
            dist.all_reduce(wall, op=dist.ReduceOp.MAX)
            row = {"source": source_kind, "method": method, "repeat": repeat, "rank": rank, "wall": wall.item(),
                   "rank_seconds": elapsed, "parts_bytes": sum(t.numel() * t.element_size() for t in parts.values())}
            if source_kind == "local" and "mmap" not in method:  # rchar misses page faults
                row["bytes"] = read
            if "http_bytes" in stats:
                row["bytes"], row["requests"] = stats["http_bytes"], stats["http_requests"]
            if rank == 0:
                time.sleep(0.2)  # nginx logs a request after answering it
                row["log"] = [mark, os.path.getsize(spec["access_log"])]
            results.append(row)
            del parts
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(results, f)
    dist.destroy_process_group()


# ---------------------------------------------------------------- launcher


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log_bytes(path, start, stop):
    with open(path, "rb") as f:
        f.seek(start)
        text = f.read(stop - start).decode()
    return sum(int(line.split('"')[2].split()[0]) for line in text.splitlines())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=256)
    parser.add_argument("--world", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", default=None, help="where the model file goes (default: a temporary folder)")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return

    import nginx_server
    from safetensors.torch import save_file

    work = tempfile.mkdtemp(prefix="st-tp-bench-", dir=args.dir)
    try:
        state = model_state(args.size_mb)
        path = os.path.join(work, "model.safetensors")
        save_file({n: t for n, (t, _) in state.items()}, path)
        size = os.path.getsize(path)
        dims = {n: d for n, (_, d) in state.items()}
        del state
        with open(path, "rb") as f:  # split tensors' bytes, from the header
            header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
        split = sum(e["data_offsets"][1] - e["data_offsets"][0] for n, e in header.items()
                    if n != "__metadata__" and dims[n] is not None)
        with nginx_server.NginxServer(work) as server:
            spec = {"path": path, "url": server.url("model.safetensors"), "dims": dims, "repeat": args.repeat,
                    "access_log": os.path.join(server._dir, "nginx", "access.log")}
            with open(os.path.join(work, "spec.json"), "w") as f:
                json.dump(spec, f)
            env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
            # --redirects/--tee: see tests/python/test_tp_load.py (torch 1.13 on Python 3.11).
            subprocess.run(["torchrun", "--nnodes=1", f"--nproc_per_node={args.world}", "--master_addr=127.0.0.1",
                            f"--master_port={free_port()}", "--redirects=1", "--tee=1",
                            f"--log_dir={os.path.join(work, 'logs')}", os.path.abspath(__file__),
                            "--worker", os.path.join(work, "spec.json"), work], env=env, check=True,
                           stdout=subprocess.DEVNULL)
            rows = [r for k in range(args.world) for r in json.load(open(os.path.join(work, f"rank{k}.json")))]
            access_log = spec["access_log"]
            report(rows, args, size, split, access_log)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(rows, args, size, split, access_log):
    mib = 1 << 20
    print(f"{args.world} ranks, one {size / mib:.0f} MiB bf16 file ({split / mib:.0f} MiB of it split by the plan), "
          f"median of {args.repeat}; {os.cpu_count()} CPUs")
    print()
    print("| source | method | wall s | MiB read per rank (mean) | requests per rank | nginx MiB sent, all ranks |")
    print("|---|---|---|---|---|---|")
    keys = []
    for r in rows:
        if (r["source"], r["method"]) not in keys:
            keys.append((r["source"], r["method"]))
    for source, method in keys:
        mine = [r for r in rows if r["source"] == source and r["method"] == method]
        wall = statistics.median(r["wall"] for r in mine if r["rank"] == 0)
        read = [r["bytes"] for r in mine if "bytes" in r]
        per_rank = f"{statistics.mean(read) / mib:.1f}" if read else "(mapped)"
        requests = [r["requests"] for r in mine if "requests" in r]
        per_rank_requests = f"{statistics.mean(requests):.0f}" if requests else ""
        sent = ""
        if source == "nginx":
            logs = [r["log"] for r in mine if r["rank"] == 0]
            sent = f"{statistics.median(log_bytes(access_log, *m) for m in logs) / mib:.1f}"
        print(f"| {source} | {method} | {wall:.3f} | {per_rank} | {per_rank_requests} | {sent} |")


if __name__ == "__main__":
    main()
