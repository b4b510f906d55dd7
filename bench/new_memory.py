#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What new memory costs on this machine: the floor under every load that keeps what it loads
(docs/remote.md, "Full load against curl").

Each row is a fresh process that maps --size-mb of anonymous memory and then, timed step by step:
faults it in with MADV_POPULATE_WRITE (the kernel, one call, no trap per page), where the row
says so; writes all of it once; writes it again. Huge pages are what numpy's np.empty advises for
large arrays; 4 KiB pages what torch.empty and malloc get. A pause before each row lets the memory
the previous process freed go back to the host, as it does between a program's runs.

    python3 bench/new_memory.py [--size-mb 1024] [--repeat 3] [--pause 4]
"""

import argparse
import ctypes
import mmap
import subprocess
import sys
import time

MADV_POPULATE_WRITE = 23  # Linux >= 5.14
ROWS = {
    "huge pages, populated": ("huge", True),
    "4 KiB pages, populated": ("small", True),
    "huge pages, faulted by the writes": ("huge", False),
    "4 KiB pages, faulted by the writes": ("small", False),
}


def probe(pages, populate, size):
    """Seconds for (populate or None, first write, second write) of `size` new bytes."""
    import numpy as np

    memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    memory.madvise(mmap.MADV_HUGEPAGE if pages == "huge" else mmap.MADV_NOHUGEPAGE)
    array = np.frombuffer(memory, dtype=np.uint8)
    source = np.full(32 << 20, 7, dtype=np.uint8)
    times = []
    if populate:
        address = ctypes.addressof(ctypes.c_char.from_buffer(memory))
        libc = ctypes.CDLL(None, use_errno=True)
        start = time.perf_counter()
        if libc.madvise(ctypes.c_void_p(address), ctypes.c_size_t(size), MADV_POPULATE_WRITE) != 0:
            raise SystemExit(f"madvise(MADV_POPULATE_WRITE): errno {ctypes.get_errno()}")
        times.append(time.perf_counter() - start)
    else:
        times.append(None)
    for _ in range(2):
        start = time.perf_counter()
        for offset in range(0, size, len(source)):
            piece = array[offset:offset + len(source)]
            piece[:] = source[:len(piece)]
        times.append(time.perf_counter() - start)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pause", type=float, default=4.0, help="seconds of rest before each process")
    parser.add_argument("--row", help=argparse.SUPPRESS)
    args = parser.parse_args()
    size = args.size_mb << 20
    if args.row:
        pages, populate = ROWS[args.row]
        print(" ".join("-" if t is None else f"{t:.3f}" for t in probe(pages, populate, size)))
        return

    results = {row: [] for row in ROWS}
    for round_ in range(args.repeat):
        for row in ROWS:
            time.sleep(args.pause)
            out = subprocess.run([sys.executable, __file__, "--size-mb", str(args.size_mb), "--row", row],
                                 check=True, capture_output=True, text=True).stdout.split()
            results[row].append(out)

    def span(values):
        numbers = sorted(float(v) for v in values if v != "-")
        return f"{numbers[0]:.2f}-{numbers[-1]:.2f} s" if numbers else ""

    print(f"{args.size_mb} MiB of new memory per process, {args.repeat} processes per row")
    print()
    print("| memory | fault-in | first write | second write |")
    print("|---|---:|---:|---:|")
    for row, runs in results.items():
        print(f"| {row} | {span(r[0] for r in runs)} | {span(r[1] for r in runs)} | {span(r[2] for r in runs)} |")


if __name__ == "__main__":
    main()
