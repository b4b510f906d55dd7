# SPDX-License-Identifier: Apache-2.0
"""safetensors.batch on a real Dask cluster: one dask-scheduler and two dask-worker processes
on 127.0.0.1 (free ports), started once for the module and stopped at its end. The ctest
`python_batch` runs this (labels python, batch)."""

import glob
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import psutil
import pytest

import distributed  # noqa: F401 (python3-distributed, scripts/install-deps: a missing one fails here)
from safetensors import cxx
from safetensors.batch import EXIT_INVALID, EXIT_OK, EXIT_USAGE, MANIFEST_NAME, expand_inputs
from safetensors.numpy import save_file

HOST = "127.0.0.1"
CHUNK_DELAY = "0.02"  # seconds a worker's conversion waits at each progress report (the kill needs a window)
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFORMANCE = os.environ.get("SAFETENSORS_CONFORMANCE_DIR", os.path.join(SOURCE, "..", "shared", "conformance"))


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Cluster:
    """A scheduler and two workers (one thread each, with nannies) as separate processes."""

    def __init__(self, workdir):
        self.address = f"tcp://{HOST}:{free_port()}"
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        # The workers run in `workdir`: they import this build's package by absolute path.
        paths = env.get("PYTHONPATH", "").split(os.pathsep)
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in paths if p)
        self.log = open(os.path.join(workdir, "cluster.log"), "w")  # noqa: SIM115 (closed in stop)
        common = dict(env=env, stdout=self.log, stderr=subprocess.STDOUT, cwd=workdir)
        self.scheduler = subprocess.Popen(
            ["dask-scheduler", "--host", HOST, "--port", self.address.rsplit(":", 1)[1], "--dashboard-address",
             f"{HOST}:{free_port()}"], **common)
        worker_env = dict(env, SAFETENSORS_BATCH_TEST_CHUNK_DELAY=CHUNK_DELAY)
        self.workers = [
            subprocess.Popen(["dask-worker", self.address, "--host", HOST, "--nthreads", "1", "--nworkers", "1",
                              "--no-dashboard", "--memory-limit", "0", "--name", f"w{n}", "--local-directory",
                              os.path.join(workdir, f"w{n}")], **dict(common, env=worker_env))
            for n in range(2)]
        from distributed import Client

        self.client = Client(self.address, timeout=60)
        self.client.wait_for_workers(2, timeout=120)

    def worker_processes(self):
        """Every process our dask-worker commands run (nanny and worker)."""
        found = {}
        for w in self.workers:
            p = psutil.Process(w.pid)
            found[p.pid] = p
            for child in p.children(recursive=True):
                found[child.pid] = child
        return found

    def stop(self):
        self.client.close()
        for p in self.workers + [self.scheduler]:
            p.send_signal(signal.SIGTERM)
        for p in self.workers + [self.scheduler]:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.log.close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(str(tmp_path_factory.mktemp("cluster")))
    yield c
    c.stop()


def run_cli(*args):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "safetensors.batch", *args], env=env, capture_output=True,
                          text=True, timeout=240)


def read_report(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def pytorch_checkpoints(directory, count):
    """`count` small torch.save checkpoints (zip format) under directory/a and directory/b."""
    import torch

    torch.manual_seed(0)
    paths = []
    for n in range(count):
        sub = os.path.join(directory, "a" if n % 2 else "b")
        os.makedirs(sub, exist_ok=True)
        state = {f"layer{i}.weight": torch.randn(64, 64 + n) for i in range(6)}
        state["layer0.bias"] = torch.arange(n + 1, dtype=torch.int64)
        path = os.path.join(sub, f"model{n:02d}.pt")
        torch.save(state, path)
        paths.append(path)
    return paths


def test_validate_verdicts_match_the_cli_on_the_conformance_corpus(cluster, tmp_path):
    corpus = os.path.join(CONFORMANCE, "format")
    files = sorted(glob.glob(os.path.join(corpus, "*.safetensors")))
    assert len(files) > 100
    cli = subprocess.run([os.environ["SAFETENSORS_CLI"], "validate", "--json", *files], capture_output=True,
                         text=True, timeout=120)
    expected = {os.path.realpath(row["file"]): row["code"] for row in map(json.loads, cli.stdout.splitlines())}
    assert len(expected) == len(files)
    assert any(code is None for code in expected.values()) and any(expected.values())

    report = tmp_path / "validate.jsonl"
    done = run_cli("validate", "--scheduler", cluster.address, "--report", str(report), corpus)
    assert done.returncode == EXIT_INVALID, done.stderr
    rows = read_report(report)
    assert {os.path.realpath(row["input"]): row["code"] for row in rows} == expected
    assert all(row["status"] == ("ok" if row["code"] is None else "error") for row in rows)
    assert all(set(row) >= {"input", "status", "code", "message", "seconds"} for row in rows)
    assert f"{len(files)} inputs" in done.stderr


def test_convert_survives_a_killed_worker_then_skips_what_is_up_to_date(cluster, tmp_path):
    inputs = tmp_path / "zoo"
    paths = pytorch_checkpoints(str(inputs), 40)
    reference = tmp_path / "reference"
    for path in paths:
        rel = os.path.relpath(path, inputs)[:-3] + ".safetensors"
        os.makedirs(reference / os.path.dirname(rel), exist_ok=True)
        cxx.convert(path, reference / rel)
    out = tmp_path / "out"
    report = tmp_path / "convert.jsonl"
    job = subprocess.Popen([sys.executable, "-m", "safetensors.batch", "convert", "--scheduler", cluster.address,
                            "--out", str(out), "--report", str(report), "--no-progress", str(inputs)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The first temporary file a worker writes names its process: kill that process mid-file.
    ours = cluster.worker_processes()
    killed = []

    def kill_a_writer():
        if job.poll() is not None:
            raise AssertionError(f"the job ended before a worker was killed: {job.communicate()}")
        for temp in glob.glob(str(out / "**" / ".*.tmp-*"), recursive=True):
            pid = int(os.path.basename(temp).rsplit(".tmp-", 1)[1].split("-")[0])
            if pid in ours:
                os.kill(pid, signal.SIGKILL)
                killed.append((pid, temp))
                return True
        return False

    wait_for(kill_a_writer, 120, "a worker writing a temporary file")
    stdout, stderr = job.communicate(timeout=240)
    assert job.returncode == EXIT_OK, stderr
    assert not psutil.pid_exists(killed[0][0]) or psutil.Process(killed[0][0]).status() == psutil.STATUS_ZOMBIE

    rows = read_report(report)
    assert len(rows) == 40 and all(row["status"] == "ok" for row in rows), rows
    for path in paths:
        rel = os.path.relpath(path, inputs)[:-3] + ".safetensors"
        assert (out / rel).read_bytes() == (reference / rel).read_bytes(), rel
    assert glob.glob(str(out / "**" / ".*.tmp-*"), recursive=True) == []
    assert not os.path.exists(killed[0][1])
    by_input = {row["input"]: row for row in rows}
    first = by_input[paths[0]]
    assert first["tensors"] == 7 and first["output"] == str(out / "b" / "model00.safetensors")
    assert first["input_sha256"] == hashlib.sha256(open(paths[0], "rb").read()).hexdigest()

    # A second run converts nothing; an input touched but unchanged is skipped by its digest,
    # a changed one is converted again.
    again = tmp_path / "again.jsonl"
    done = run_cli("convert", "--scheduler", cluster.address, "--out", str(out), "--report", str(again), str(inputs))
    assert done.returncode == EXIT_OK, done.stderr
    rows = read_report(again)
    assert len(rows) == 40 and all(row["status"] == "skipped" for row in rows), rows
    assert "40 skipped" in done.stderr
    os.utime(paths[1])
    import torch

    torch.save({"only": torch.ones(3)}, paths[2])
    done = run_cli("convert", "--scheduler", cluster.address, "--out", str(out), "--report", str(again), str(inputs))
    assert done.returncode == EXIT_OK, done.stderr
    rows = {row["input"]: row for row in read_report(again)}
    assert rows[paths[1]]["status"] == "skipped" and rows[paths[1]]["message"] == "up to date (same digest)"
    assert rows[paths[2]]["status"] == "ok" and rows[paths[2]]["tensors"] == 1
    assert sum(row["status"] == "skipped" for row in rows.values()) == 39
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert len(manifest["outputs"]) == 40


def test_inspect_checksum_manifests_urls_and_bad_inputs(cluster, tmp_path):
    files = tmp_path / "files"
    files.mkdir()
    save_file({"w": np.ones((4, 8), dtype=np.float32), "b": np.zeros(3, dtype=np.float16)}, files / "one.safetensors",
              metadata={"format": "np"})
    np.save(files / "array.npy", np.arange(10, dtype=np.int32))
    (files / "broken.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{\"a\":1}")
    sharded = files / "sharded"
    cxx.shard(files / "one.safetensors", sharded, max_shard_size=100)
    assert len(glob.glob(str(sharded / "*.safetensors"))) == 2

    result = cxx.batch("inspect", [str(files)], scheduler=cluster.address)
    rows = {os.path.relpath(row["input"], files): row for row in result.rows}
    assert set(rows) == {"one.safetensors", "array.npy", "broken.safetensors",
                         "sharded/model.safetensors.index.json"}
    one = rows["one.safetensors"]
    assert (one["status"], one["tensors"], one["parameters"], one["metadata_format"], one["shards"]) == (
        "ok", 2, 35, "np", 1)
    assert one["dtypes"] == {"F16": {"tensors": 1, "parameters": 3, "bytes": 6},
                             "F32": {"tensors": 1, "parameters": 32, "bytes": 128}}
    assert (rows["sharded/model.safetensors.index.json"]["shards"], rows["sharded/model.safetensors.index.json"]
            ["tensors"]) == (2, 2)
    assert rows["array.npy"]["format"].startswith("NumPy") and rows["array.npy"]["parameters"] == 10
    assert rows["broken.safetensors"]["status"] == "error" and rows["broken.safetensors"]["code"]
    assert result.exit_code == EXIT_INVALID and (result.ok, result.errors) == (3, 1)

    # checksum: a directory, a file:// URL and a manifest naming a glob.
    (tmp_path / "list.txt").write_text("# inputs\nfiles/*.npy\n\n")
    url = "file://" + str(files / "one.safetensors")
    result = cxx.batch("checksum", [url, "@" + str(tmp_path / "list.txt"), str(sharded)], scheduler=cluster.address)
    rows = {row["input"]: row for row in result.rows}
    assert set(rows) == {url, str(files / "array.npy")} | set(glob.glob(str(sharded / "*.safetensors")))
    assert all(row["status"] == "ok" for row in rows.values()), rows
    for source, row in rows.items():
        data = open(source.removeprefix("file://"), "rb").read()
        assert row["sha256"] == hashlib.sha256(data).hexdigest() and row["bytes"] == len(data)
    assert rows[url]["tensor_sha256"] == cxx.checksum(files / "one.safetensors", per_tensor=True)["tensors"]
    assert "tensor_sha256" not in rows[str(files / "array.npy")]

    # convert of a URL: the same file as the path's conversion.
    result = cxx.batch("convert", [url], out=tmp_path / "from-url", scheduler=cluster.address, to="npz")
    assert [row["status"] for row in result.rows] == ["ok"], result.rows
    cxx.convert(files / "one.safetensors", tmp_path / "local.npz")
    assert (tmp_path / "from-url" / "one.npz").read_bytes() == (tmp_path / "local.npz").read_bytes()

    # A sharded PyTorch checkpoint: a task per shard, then its index beside the converted shards.
    import torch

    ckpt = tmp_path / "sharded-pt" / "ckpt"
    ckpt.mkdir(parents=True)
    parts = [{"a.weight": torch.ones(2, 3), "a.bias": torch.zeros(3)}, {"b.weight": torch.full((4,), 2.0)}]
    weight_map = {}
    for n, part in enumerate(parts):
        name = f"pytorch_model-0000{n + 1}-of-00002.bin"
        torch.save(part, ckpt / name)
        weight_map.update((key, name) for key in part)
    (ckpt / "pytorch_model.bin.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    out = tmp_path / "sharded-out"
    result = cxx.batch("convert", [str(tmp_path / "sharded-pt")], out=out, scheduler=cluster.address)
    assert [row["status"] for row in result.rows] == ["ok", "ok"], result.rows
    index = json.loads((out / "ckpt" / "pytorch_model.safetensors.index.json").read_text())
    assert index == {"metadata": {"total_size": 52}, "weight_map": {
        "a.bias": "pytorch_model-00001-of-00002.safetensors", "a.weight": "pytorch_model-00001-of-00002.safetensors",
        "b.weight": "pytorch_model-00002-of-00002.safetensors"}}
    with cxx.open_checkpoint(out / "ckpt") as f:
        assert sorted(f.keys()) == ["a.bias", "a.weight", "b.weight"]
        assert (f.get_tensor("b.weight") == 2.0).all()

    # validate of a URL gets the same verdict as of the path; a missing file is a row, not the end.
    result = cxx.batch("validate", ["file://" + str(files / "broken.safetensors"), str(files / "missing.safetensors"),
                                    str(files / "one.safetensors")], scheduler=cluster.address)
    codes = [row["code"] for row in result.rows]
    assert sorted(codes, key=str) == sorted([cxx.validate(files / "broken.safetensors").code, "IoError", None], key=str)


def test_usage_errors_exit_2(tmp_path):
    assert run_cli().returncode == EXIT_USAGE
    assert run_cli("convert", str(tmp_path)).returncode == EXIT_USAGE  # no --out
    done = run_cli("validate", str(tmp_path / "nothing-*.safetensors"))
    assert done.returncode == EXIT_USAGE and "no file matches" in done.stderr
    assert run_cli("frobnicate", str(tmp_path)).returncode == EXIT_USAGE
    done = run_cli("validate", "--report", str(tmp_path / "no" / "dir.jsonl"), str(tmp_path / "x.safetensors"))
    assert done.returncode == EXIT_USAGE and "cannot write the report" in done.stderr


def test_relative_names_of_directories_globs_and_manifests(tmp_path):
    (tmp_path / "d" / "sub").mkdir(parents=True)
    for name in ("d/x.safetensors", "d/sub/y.bin", "d/sub/.hidden.safetensors", "d/notes.txt"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "m.txt").write_text("d/x.safetensors\nhttps://host/repo/z.gguf?download=1\n")
    assert [rel for _, rel in expand_inputs([str(tmp_path / "d")])] == ["x.safetensors", os.path.join("sub", "y.bin")]
    assert [rel for _, rel in expand_inputs([str(tmp_path / "*" / "sub" / "*.bin")])] == [
        os.path.join("d", "sub", "y.bin")]
    # convert's --out inside an input directory is not an input on the next run.
    assert [rel for _, rel in expand_inputs([str(tmp_path / "d")], "convert", str(tmp_path / "d" / "sub"))] == [
        "x.safetensors"]
    assert expand_inputs(["@" + str(tmp_path / "m.txt")]) == [
        (str(tmp_path / "d" / "x.safetensors"), "x.safetensors"), ("https://host/repo/z.gguf?download=1", "z.gguf")]


def test_the_local_default_cluster(tmp_path):
    path = tmp_path / "ok.safetensors"
    save_file({"x": np.ones(2, dtype=np.float32)}, path)
    report = tmp_path / "local.jsonl"
    done = run_cli("validate", "--report", str(report), str(path))
    assert done.returncode == EXIT_OK, done.stderr
    assert [(row["status"], row["tensors"]) for row in read_report(report)] == [("ok", 1)]
    assert "workers" in done.stderr
