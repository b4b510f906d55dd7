# SPDX-License-Identifier: Apache-2.0
"""safetensors.cxx.load_sharded: tensor-parallel loading of a sharded checkpoint by a real
torchrun job (4 ranks, gloo, CPU; tp_load_worker.py), from a path and from nginx, with the
bytes each rank reads counted by the library, by the kernel (/proc/self/io) and in nginx's
access log; plus the API's errors in this process."""

import json
import math
import os
import shutil
import socket
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
import torch.distributed  # noqa: E402

from safetensors import SafetensorError  # noqa: E402
from safetensors._safetensors_cxx import tp_load_reads_urls  # noqa: E402
from safetensors.cxx import load_sharded  # noqa: E402
from safetensors.torch import save_file  # noqa: E402

import nginx_server  # noqa: E402

WORLD = 4
HEAD = 100_000  # the first request of a remote file fetches this much (speculative header)
PLAN = {
    "*.q_proj.weight": {"split": "column"},
    "*.o_proj.weight": {"split": "row"},
    "*.up_proj.*": "column",
    "*.down_proj.weight": {"split": "row", "dim": -1},
    "model.embed_tokens.weight": {"split": "column", "dim": 0},
    "lm_head.weight": "column",
}


def _model(layers=4, hidden=256, inter=1024, vocab=1000):
    """name -> (tensor, dim its plan splits or None), like a small Llama."""
    g = torch.Generator().manual_seed(0)
    out = {
        "model.embed_tokens.weight": (torch.randn(vocab, hidden, generator=g), 0),
        "lm_head.weight": (torch.randn(vocab, hidden, generator=g).half(), 0),
        "model.norm.weight": (torch.randn(hidden, generator=g), None),
    }
    for i in range(layers):
        p = f"model.layers.{i}."
        out[p + "self_attn.q_proj.weight"] = (torch.randn(hidden, hidden, generator=g), 0)
        out[p + "self_attn.o_proj.weight"] = (torch.randn(hidden, hidden, generator=g), 1)
        out[p + "mlp.up_proj.weight"] = (torch.randn(inter, hidden, generator=g).bfloat16(), 0)
        out[p + "mlp.up_proj.bias"] = (torch.randn(inter, generator=g).bfloat16(), 0)
        out[p + "mlp.down_proj.weight"] = (torch.randn(hidden, inter, generator=g).bfloat16(), 1)
        out[p + "input_layernorm.weight"] = (torch.randn(hidden, generator=g), None)
    return out


def _write_sharded(directory, model, shards=3):
    """model-0000k-of-0000n.safetensors + model.safetensors.index.json."""
    names = sorted(model)
    files, weight_map = [], {}
    for k in range(shards):
        shard = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        part = {n: model[n][0] for n in names[k::shards]}
        save_file(part, os.path.join(directory, shard))
        files.append(shard)
        weight_map.update({n: shard for n in part})
    total = sum(t.numel() * t.element_size() for t, _ in model.values())
    with open(os.path.join(directory, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f)
    return files


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _torchrun(worker_args, log_dir, timeout=120):
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
    torchrun = shutil.which("torchrun")
    launcher = [torchrun] if torchrun else [sys.executable, "-m", "torch.distributed.run"]
    # --redirects/--tee 1 (stdout to a log file and the console): with Python 3.11, torch 1.13
    # cannot parse their default "0" (iterating an IntFlag skips 0) and torchrun fails at start.
    command = launcher + ["--nnodes=1", f"--nproc_per_node={WORLD}", "--master_addr=127.0.0.1",
                          f"--master_port={_free_port()}", "--redirects=1", "--tee=1", f"--log_dir={log_dir}",
                          os.path.join(os.path.dirname(__file__), "tp_load_worker.py")] + worker_args
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    assert done.returncode == 0, done.stdout.decode(errors="replace")[-6000:]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    root = tmp_path_factory.mktemp("www")
    directory = root / "ckpt"
    directory.mkdir()
    model = _model()
    shards = _write_sharded(str(directory), model)
    return {"root": root, "directory": directory, "model": model, "shards": shards}


@pytest.mark.skipif(not torch.distributed.is_available() or not torch.distributed.is_gloo_available(),
                    reason="torch.distributed with gloo is needed")
def test_torchrun_ranks_read_their_chunks_locally_and_from_nginx(checkpoint, tmp_path):
    if nginx_server.find_nginx() is None:
        pytest.skip("nginx is not installed (scripts/install-deps installs it)")
    if not tp_load_reads_urls:
        pytest.skip("the module was built without libcurl (SAFETENSORS_BUILD_REMOTE)")
    model = checkpoint["model"]
    split_full = sum(t.numel() * t.element_size() for t, dim in model.values() if dim is not None)
    replicated = sum(t.numel() * t.element_size() for t, dim in model.values() if dim is None)
    with nginx_server.NginxServer(checkpoint["root"]) as server:
        spec = {
            "directory": str(checkpoint["directory"]),
            "shards": checkpoint["shards"],
            "url": server.url("ckpt/model.safetensors.index.json"),
            "plan": PLAN,
            "expect": {name: dim for name, (_, dim) in model.items()},
            "gather": {"model.layers.0.self_attn.q_proj.weight": 0, "model.layers.1.self_attn.o_proj.weight": 1},
        }
        (tmp_path / "spec.json").write_text(json.dumps(spec))
        mark = server.access_mark()
        _torchrun([str(tmp_path / "spec.json"), str(tmp_path)], tmp_path / "logs")
        served = [line for line in server.access_since(mark) if line.uri.startswith("/ckpt/")]
    reports = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(WORLD)]
    print(json.dumps(reports, indent=1))
    # Runs of contiguous bytes in a rank's row parts: one per row (the dimensions before the split one).
    row_runs = sum(math.prod(t.shape[:dim % t.dim()]) for t, dim in model.values() if dim not in (None, 0))
    index_size = os.path.getsize(checkpoint["directory"] / "model.safetensors.index.json")
    shards = len(checkpoint["shards"])
    for report in reports:
        for kind in ("local", "remote"):
            stats = report[kind]
            # Counted by the library: a quarter of every split tensor, the replicated ones whole.
            assert stats["split_full_bytes"] == split_full
            assert stats["split_bytes"] * WORLD == split_full
            assert stats["bytes"] == split_full // WORLD + replicated
        # Counted by the kernel: the parts plus the index and the shard headers, nothing more.
        local = report["local"]
        assert local["bytes"] <= local["rchar"] <= local["bytes"] + index_size + shards * 65_536
        # Counted by the HTTP client: each shard's first 100 kB, then only runs not in it, the
        # runs of a row part up to 200 per multi-range request (multipart framing: under 128
        # bytes a run), so a few requests per tensor rather than one per row.
        remote = report["remote"]
        assert remote["http_bytes"] <= remote["bytes"] + index_size + shards * HEAD + row_runs * 128
        assert remote["http_bytes"] >= remote["split_bytes"] - shards * HEAD
        assert remote["http_requests"] <= 2 * len(model)
    # Counted by nginx: exactly what the ranks' clients received from the shards (the index is
    # fetched once per rank besides), about a quarter of the split tensors each, where loading
    # the whole checkpoint on every rank would send 4x all of it.
    assert all(line.status in (200, 206) for line in served)
    from_shards = [line for line in served if line.uri.endswith(".safetensors")]
    assert len(served) - len(from_shards) == WORLD
    assert sum(line.bytes for line in from_shards) == sum(r["remote"]["http_bytes"] for r in reports)
    assert len(from_shards) == sum(r["remote"]["http_requests"] for r in reports)
    per_rank_ceiling = split_full / WORLD + replicated + shards * HEAD + row_runs * 128
    assert sum(line.bytes for line in from_shards) <= WORLD * per_rank_ceiling
    assert WORLD * per_rank_ceiling < 0.5 * WORLD * (split_full + replicated)

def test_errors_name_the_problem(checkpoint):
    directory = str(checkpoint["directory"])
    with pytest.raises(SafetensorError, match=r"rule '\*\.norm\.weight' \(column split\) splits dim 0 .*"
                                              r"256 does not divide evenly over 3 ranks"):
        load_sharded(directory, 0, 3, {"*.norm.weight": "column"})
    with pytest.raises(SafetensorError, match=r"rule 'model\.norm\.weight' \(row split\) needs dim 1, but tensor "
                                              r"'model\.norm\.weight' of shape \[256\] has 1 dimension"):
        load_sharded(directory, 0, 2, {"model.norm.weight": "row"})
    with pytest.raises(SafetensorError, match="unknown split 'diagonal'"):
        load_sharded(directory, 0, 2, {"*": {"split": "diagonal"}})
    with pytest.raises(SafetensorError, match="rank 4 is not in a world of size 4"):
        load_sharded(directory, 4, 4, PLAN)
    with pytest.raises(SafetensorError, match="plan must be a dict or JSON text"):
        load_sharded(directory, 0, 1, ["*"])
    with pytest.raises(SafetensorError, match="remote options are for URLs only"):
        load_sharded(directory, 0, 1, {}, token="x")
    with pytest.raises(TypeError, match="unexpected keyword"):
        load_sharded(directory, 0, 1, {}, tokn="x")


def test_one_rank_of_two_in_process(checkpoint):
    parts, stats = load_sharded(checkpoint["directory"], 1, 2, json.dumps(PLAN), return_stats=True)
    for name, (full, dim) in checkpoint["model"].items():
        want = full if dim is None else torch.chunk(full, 2, dim)[1]
        assert torch.equal(parts[name], want), name
    assert stats["split_bytes"] * 2 == stats["split_full_bytes"]
    # mmap reads the same parts as pread.
    mapped = load_sharded(checkpoint["directory"], 1, 2, PLAN, backend="mmap")
    assert all(torch.equal(mapped[n], parts[n]) for n in parts)


INTERRUPTED_LOAD = """
import os, signal, sys, threading, time
import torch
from safetensors.cxx import load_sharded
def interrupt():
    time.sleep(0.3)
    os.kill(os.getpid(), signal.SIGINT)
threading.Thread(target=interrupt, daemon=True).start()
start = time.perf_counter()
try:
    load_sharded(sys.argv[1], 0, 2, {"big": "column"})
    print("finished", time.perf_counter() - start)
except KeyboardInterrupt:
    print("interrupted", time.perf_counter() - start)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals and sparse files")
def test_ctrl_c_interrupts_a_long_load(tmp_path):
    path = tmp_path / "sparse.safetensors"
    nbytes = 6 << 30  # rank 0 reads 3 GiB of a hole: zeros, no disk, stopped long before the end
    header = b'{"big":{"dtype":"U8","shape":[2,%d],"data_offsets":[0,%d]}}' % (nbytes // 2, nbytes)
    header += b" " * (-(8 + len(header)) % 8)
    with open(path, "wb") as f:
        f.write(len(header).to_bytes(8, "little") + header)
        f.truncate(8 + len(header) + nbytes)
    out = subprocess.run([sys.executable, "-c", INTERRUPTED_LOAD, str(path)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    what, seconds = out.stdout.split()
    assert what == "interrupted", "the load finished before the interrupt: make it bigger"
    assert float(seconds) < 10
