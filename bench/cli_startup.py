#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Whole-process time of short CLI runs beside `cat FILE > /dev/null`, in the same run.

Each round runs every command once untimed (its binary, libraries and input back in the page
cache: this machine pages idle memory out) and then once timed, the commands interleaved so
that drift hits all alike; the table shows each command's median and its ratio to `cat`.

    bench/cli_startup.py [--rounds N] [--cli PATH ...] [FILE]

FILE defaults to a 1,000-tensor file written to a temporary folder. Each --cli (default: the
build tree's) gets `--version` and `validate FILE` rows; give two to compare builds.
"""
import argparse
import json
import os
import shutil
import statistics
import struct
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_model(path, tensors=1000):
    header, offset = {}, 0
    for i in range(tensors):
        header[f"model.layers.{i}.weight"] = {"dtype": "F32", "shape": [4, 4], "data_offsets": [offset, offset + 64]}
        offset += 64
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + bytes(offset))


def run_once(argv, devnull):
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1),
                                                                   (os.POSIX_SPAWN_DUP2, devnull, 2)])
    _, status = os.waitpid(pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({status})")
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--cli", action="append", help="a safetensors binary (repeatable)")
    args = parser.parse_args()
    clis = args.cli or [os.path.join(ROOT, "build", "tools", "cli", "safetensors")]
    scratch = tempfile.mkdtemp(prefix="st-startup-")
    try:
        path = args.file or os.path.join(scratch, "1k.safetensors")
        if not args.file:
            write_model(path)
        commands = [("cat FILE > /dev/null", [shutil.which("cat"), path])]
        for i, cli in enumerate(clis):
            label = f"[{i}] " if len(clis) > 1 else ""
            commands.append((f"{label}safetensors --version", [cli, "--version"]))
            commands.append((f"{label}safetensors validate FILE", [cli, "validate", path]))
        times = {name: [] for name, _ in commands}
        devnull = os.open(os.devnull, os.O_WRONLY)
        for _ in range(args.rounds):
            for name, argv in commands:
                with open(path, "rb") as f:  # the input back in the page cache
                    f.read()
                run_once(argv, devnull)
                times[name].append(run_once(argv, devnull))
        base = statistics.median(times[commands[0][0]])
        for i, cli in enumerate(clis):
            print(f"[{i}] {cli}" if len(clis) > 1 else cli)
        print(f"{path}: {os.path.getsize(path)} bytes; {args.rounds} interleaved rounds, medians")
        for name, _ in commands:
            m = statistics.median(times[name])
            print(f"  {name:40} {m * 1e3:7.2f} ms  {m / base:5.2f}x cat")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
