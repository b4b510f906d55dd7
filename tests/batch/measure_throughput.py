# SPDX-License-Identifier: Apache-2.0
"""files/s of safetensors.batch at 1 and 2 dask-workers (one thread each) on 127.0.0.1, beside the
baseline of one process calling safetensors.cxx in a loop, in the same run (docs/batch.md#throughput).

    PYTHONPATH=build/python /usr/bin/python3 tests/batch/measure_throughput.py [FILES]
"""

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import torch
from distributed import Client

from safetensors import cxx
from safetensors.batch import batch


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def reread(paths):
    """The machine pages idle files out: every timed run starts from the same (cached) inputs."""
    for path in paths:
        with open(path, "rb") as f:
            f.read()


def best_of_3(run):
    return max(run() for _ in range(3))


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    work = tempfile.mkdtemp(prefix="batch-throughput-")
    data, out = os.path.join(work, "data"), os.path.join(work, "out")
    os.makedirs(data)
    torch.manual_seed(0)
    for n in range(count):
        torch.save({f"layer{i}.weight": torch.randn(64, 64) for i in range(7)}, os.path.join(data, f"m{n:03d}.pt"))
    files = sorted(glob.glob(os.path.join(data, "*.pt")))
    print(f"{count} PyTorch checkpoints of {os.path.getsize(files[0])} bytes")

    def serial_convert():
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        reread(files)
        start = time.perf_counter()
        for f in files:
            cxx.convert(f, os.path.join(out, os.path.basename(f)[:-3] + ".safetensors"))
        return count / (time.perf_counter() - start)

    def serial_validate():
        outputs = sorted(glob.glob(os.path.join(out, "*.safetensors")))
        reread(outputs)
        start = time.perf_counter()
        for f in outputs:
            assert cxx.validate(f).ok
        return count / (time.perf_counter() - start)

    log = open(os.path.join(work, "cluster.log"), "w")  # noqa: SIM115
    address = f"tcp://127.0.0.1:{free_port()}"
    processes = [subprocess.Popen(["dask-scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1],
                                   "--no-dashboard"], stdout=log, stderr=subprocess.STDOUT)]
    client = Client(address, timeout=60)
    try:
        print(f"baseline, one process: convert {best_of_3(serial_convert):.1f} files/s, "
              f"validate {best_of_3(serial_validate):.1f} files/s")
        for workers in (1, 2):
            processes.append(subprocess.Popen(["dask-worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                                               "--nworkers", "1", "--no-dashboard", "--memory-limit", "0"],
                                              stdout=log, stderr=subprocess.STDOUT))
            client.wait_for_workers(workers, timeout=120)

            def dask_convert():
                shutil.rmtree(out, ignore_errors=True)
                reread(files)
                result = batch("convert", [data], out=out, client=client, progress_bar=False, log=lambda line: None)
                assert result.ok == count, result.rows[:2]
                return result.files_per_second

            def dask_validate():
                reread(glob.glob(os.path.join(out, "*.safetensors")))
                result = batch("validate", [out], client=client, progress_bar=False, log=lambda line: None)
                assert result.ok == count, result.rows[:2]
                return result.files_per_second

            print(f"safetensors.batch, {workers} worker(s): convert {best_of_3(dask_convert):.1f} files/s, "
                  f"validate {best_of_3(dask_validate):.1f} files/s", flush=True)
        print(f"baseline again, one process: convert {best_of_3(serial_convert):.1f} files/s")
    finally:
        client.close()
        for p in processes:
            p.send_signal(signal.SIGTERM)
        for p in processes:
            p.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
