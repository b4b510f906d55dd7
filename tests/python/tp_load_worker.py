# SPDX-License-Identifier: Apache-2.0
"""One rank of test_tp_load.py's torchrun job (gloo, CPU): loads its parts of a sharded
checkpoint with safetensors.cxx.load_sharded from a path and from a URL, checks them against
torch.chunk of the full tensors and all-gathers split weights back, and writes what it read
to OUT/rank<N>.json. Any failed check raises, so torchrun exits non-zero.

    torchrun --nproc_per_node=4 tp_load_worker.py SPEC.json OUT
"""

import json
import os
import sys
import time

import torch
import torch.distributed as dist

from safetensors import safe_open
from safetensors.cxx import load_sharded


def rchar():
    """Bytes this process has read with read(2)/pread(2) so far (the kernel's count)."""
    with open("/proc/self/io") as f:
        return int(next(line for line in f if line.startswith("rchar:")).split()[1])


def full_tensors(spec):
    out = {}
    for shard in spec["shards"]:
        with safe_open(os.path.join(spec["directory"], shard), framework="pt") as f:
            out.update({name: f.get_tensor(name) for name in f.keys()})
    return out


def check_parts(parts, full, expect, rank, world):
    assert sorted(parts) == sorted(full), (sorted(parts), sorted(full))
    for name, dim in expect.items():
        want = full[name] if dim is None else torch.chunk(full[name], world, dim)[rank]
        got = parts[name]
        assert got.dtype == want.dtype and got.shape == want.shape, (name, got.dtype, got.shape, want.shape)
        assert torch.equal(got, want), f"rank {rank}: {name} differs from torch.chunk of the full tensor"


def check_gather(parts, full, name, dim, world):
    """All-gather of a split weight reproduces the original exactly."""
    pieces = [torch.empty_like(parts[name]) for _ in range(world)]
    dist.all_gather(pieces, parts[name])
    assert torch.equal(torch.cat(pieces, dim=dim), full[name]), f"all-gather of {name} differs from the original"


def main():
    spec_path, out_dir = sys.argv[1], sys.argv[2]
    with open(spec_path) as f:
        spec = json.load(f)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    started = time.perf_counter()
    full = full_tensors(spec)
    report = {"rank": rank, "world": world}
    sources = [("local", spec["directory"])] + ([("remote", spec["url"])] if spec.get("url") else [])
    for kind, source in sources:
        dist.barrier()  # ranks read at the same time, as in a real job
        before, start = rchar(), time.perf_counter()
        parts, stats = load_sharded(source, rank, world, spec["plan"], return_stats=True)
        stats["rchar"], stats["seconds"] = rchar() - before, time.perf_counter() - start
        check_parts(parts, full, spec["expect"], rank, world)
        for name, dim in spec["gather"].items():
            check_gather(parts, full, name, dim, world)
        report[kind] = stats
    dist.barrier()
    report["seconds"] = time.perf_counter() - started
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(report, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
