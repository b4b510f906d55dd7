# SPDX-License-Identifier: Apache-2.0
"""URLs in safe_open, load_file and safetensors.cxx.open_checkpoint (read by the library's
remote reader with HTTP Range requests), and _safe_open_handle over fsspec's HTTP files,
against nginx on 127.0.0.1 (tests/python/nginx_server.py: plain HTTP, a /private/ location
that needs a bearer token, and TLS with a self-signed certificate)."""

import json
import os
import shutil
import tempfile
import warnings

import numpy as np
import pytest

import safetensors.cxx
from safetensors import SafetensorError, _safe_open_handle, safe_open
from safetensors.numpy import load_file, save_file
from safetensors._safetensors_cxx import Reader

from nginx_server import TOKEN, NginxServer, find_nginx


@pytest.fixture(scope="module")
def server():
    """nginx serving a temporary folder (with a /private/ folder that needs TOKEN), plain HTTP and TLS."""
    if find_nginx() is None:
        pytest.skip("nginx is not installed (scripts/install-deps installs it): remote tests skipped")
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed: cannot make the TLS test certificate")
    if not Reader.remote_supported:
        pytest.skip("this build reads no URLs (the library was built without libcurl)")
    directory = tempfile.mkdtemp(prefix="st-pyremote-")
    os.makedirs(os.path.join(directory, "private"))
    try:
        with NginxServer(directory) as s:
            yield s
    finally:
        shutil.rmtree(directory, ignore_errors=True)


ARRAYS = {
    "big": np.arange(256 * 1024, dtype=np.float32).reshape(512, 512),  # 1 MiB
    "small": np.arange(10, dtype=np.int64),
    "matrix": np.arange(64, dtype=np.float16).reshape(8, 8),
}


@pytest.fixture(scope="module")
def model(server):
    """model.safetensors in the server's root (and a copy under /private/), its size."""
    path = os.path.join(server.root, "model.safetensors")
    save_file(ARRAYS, path, metadata={"origin": "py-remote"})
    shutil.copy(path, os.path.join(server.root, "private", "model.safetensors"))
    return os.path.getsize(path)


def test_safe_open_url_reads_header_then_only_the_tensor_asked_for(server, model):
    mark = server.access_mark()
    with safe_open(server.url("model.safetensors"), framework="np") as f:
        assert f.keys() == sorted(ARRAYS)
        assert f.metadata() == {"origin": "py-remote"}
        opened = server.access_since(mark)
        for name in ("small", "matrix"):
            np.testing.assert_array_equal(f.get_tensor(name), ARRAYS[name])
    # One speculative Range request for the header (100 kB: it may hold small tensors too).
    assert len(opened) == 1 and opened[0][3].startswith("bytes=0-") and opened[0][2] == 206
    every = server.access_since(mark)
    assert all(r[2] == 206 and r[3].startswith("bytes=") for r in every)
    # The 1 MiB tensor nobody asked for never crossed the wire.
    assert sum(r[4] for r in every) <= opened[0][4] + ARRAYS["small"].nbytes + ARRAYS["matrix"].nbytes
    assert sum(r[4] for r in every) < model // 4


def test_url_tensors_and_slices_equal_the_local_file(server, model):
    local = load_file(os.path.join(server.root, "model.safetensors"))
    remote = load_file(server.url("model.safetensors"))
    assert list(remote) == list(local)
    for name in local:
        np.testing.assert_array_equal(remote[name], local[name])
    with safe_open(server.url("model.safetensors"), framework="np") as f:
        mark = server.access_mark()
        rows = f.get_slice("big")[2:4]
        np.testing.assert_array_equal(rows, ARRAYS["big"][2:4])
        np.testing.assert_array_equal(f.get_slice("matrix")[:, 1::3], ARRAYS["matrix"][:, 1::3])
    fetched = sum(r[4] for r in server.access_since(mark))
    assert fetched <= 2 * 2048 + ARRAYS["matrix"].nbytes  # two rows of 2 KiB, not the 1 MiB tensor


def test_torch_load_file_of_a_url(server, model):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file as torch_load_file

    loaded = torch_load_file(server.url("model.safetensors"))
    assert torch.equal(loaded["big"], torch.from_numpy(ARRAYS["big"]))
    assert loaded["matrix"].dtype == torch.float16


def test_missing_url_names_the_url_and_status(server, model):
    url = server.url("absent.safetensors")
    with pytest.raises(SafetensorError) as e:
        safe_open(url, framework="np")
    assert url in str(e.value) and "404" in str(e.value) and e.value.code == "IoError"


def test_token_is_sent_and_never_shown(server, model, monkeypatch):
    monkeypatch.delenv("SAFETENSORS_TOKEN", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    url = server.url("private/model.safetensors")
    with pytest.raises(SafetensorError) as e:
        safe_open(url, framework="np")
    assert "401" in str(e.value)
    with pytest.raises(SafetensorError) as e:
        safe_open(url, framework="np", token="wrong-" + TOKEN)
    assert TOKEN not in str(e.value) and TOKEN not in repr(e.value.args)
    mark = server.access_mark()
    with safe_open(url, framework="np", token=TOKEN) as f:
        np.testing.assert_array_equal(f.get_tensor("small"), ARRAYS["small"])
    assert {r[5] for r in server.access_since(mark)} == {"bearer"}
    # As the CLI: $SAFETENSORS_TOKEN when no token is given.
    monkeypatch.setenv("SAFETENSORS_TOKEN", TOKEN)
    with safe_open(url, framework="np") as f:
        assert f.keys() == sorted(ARRAYS)


def test_tls_self_signed_needs_ca_file_or_insecure(server, model):
    url = server.tls_url("model.safetensors")
    with pytest.raises(SafetensorError) as e:
        safe_open(url, framework="np")
    assert url in str(e.value)
    with safe_open(url, framework="np", ca_file=server.cert) as f:
        np.testing.assert_array_equal(f.get_tensor("big"), ARRAYS["big"])
    with pytest.warns(UserWarning, match="not verified"):
        with safe_open(url, framework="np", insecure=True) as f:
            assert f.keys() == sorted(ARRAYS)


def test_relative_redirect_with_a_body_stays_on_the_origin_with_the_token(server, model):
    # /moved/F answers 302 with `Location: /private/F` (relative) and an HTML body: the
    # Location is resolved against the URL and the token goes along (the same origin).
    mark = server.access_mark()
    with safe_open(server.url("moved/model.safetensors"), framework="np", token=TOKEN) as f:
        np.testing.assert_array_equal(f.get_tensor("matrix"), ARRAYS["matrix"])
    lines = server.access_since(mark)
    assert lines[0].status == 302 and lines[0].uri == "/moved/model.safetensors"
    assert all(r.uri == "/private/model.safetensors" and r.status == 206 and r.auth == "bearer" for r in lines[1:])


def test_a_server_that_never_answers_times_out(server):
    # A listening socket nobody serves: the connection is made, no byte ever comes; `timeout`
    # bounds the wait (as the C++ fault tests' stalled server) with a clean error naming the URL.
    import socket
    import time

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/model.safetensors"
        start = time.monotonic()
        with pytest.raises(SafetensorError, match="(?i)timeout|timed out") as e:
            safe_open(url, framework="np", timeout=0.5)
        assert url in str(e.value)
        assert time.monotonic() - start < 10


def test_a_server_taking_one_range_per_request_gets_the_span_of_a_strided_slice(server):
    # nginx `max_ranges 1` answers a multi-range request with the whole file (200). Gaps that
    # cost less than a request travel: column 2 of a 4 MiB tensor is one span, not a request per
    # row; the folder's limit is remembered, so another file there sends no multi-range request.
    tall = np.arange(1024 * 1024, dtype=np.float32).reshape(1024, 1024)
    for name in ("tall.safetensors", "tall2.safetensors"):
        save_file({"tall": tall}, os.path.join(server.root, name))
    mark = server.access_mark()
    with safe_open(server.url("onerange/tall.safetensors"), framework="np") as f:
        np.testing.assert_array_equal(f.get_slice("tall")[..., 2], tall[..., 2])
    first = server.access_since(mark)
    assert len(first) <= 1 + 2 * 6, first  # the head, then per group of 200 runs a refused try and its span
    mark = server.access_mark()
    with safe_open(server.url("onerange/tall2.safetensors"), framework="np") as f:
        np.testing.assert_array_equal(f.get_slice("tall")[..., 2], tall[..., 2])
    again = server.access_since(mark)
    assert len(again) == 2 and all("," not in r.range for r in again), again  # the head and one span
    assert all(r.status == 206 for r in again)


SHARDS = {"model-00001-of-00002.safetensors": {"a": np.full(100, 1, np.float32)},
          "model-00002-of-00002.safetensors": {"b": np.full(50, 2, np.int32), "c": np.zeros((2, 3), np.uint8)}}


def write_sharded(directory):
    """SHARDS and their model.safetensors.index.json in `directory`."""
    os.makedirs(directory, exist_ok=True)
    weight_map = {}
    for shard, arrays in SHARDS.items():
        save_file(arrays, os.path.join(directory, shard))
        weight_map.update({name: shard for name in arrays})
    with open(os.path.join(directory, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 100 * 4 + 50 * 4 + 6}, "weight_map": weight_map}, f)


@pytest.fixture(scope="module")
def sharded(server):
    """A sharded checkpoint in the server's sharded/ folder; its local directory."""
    directory = os.path.join(server.root, "sharded")
    write_sharded(directory)
    return directory


def test_redirect_to_another_origin_keeps_the_token_behind(server, model):
    # /cdn/F answers 302 to https://127.0.0.1:TLS_PORT/F, another origin, as hubs redirect to
    # CDNs: the file is read there, over TLS checked with ca_file, without the token.
    mark = server.access_mark()
    with safe_open(server.url("cdn/model.safetensors"), framework="np", token=TOKEN, ca_file=server.cert) as f:
        assert f.keys() == sorted(ARRAYS)
        np.testing.assert_array_equal(f.get_tensor("big"), ARRAYS["big"])
    lines = server.access_since(mark)
    redirects = [r for r in lines if r.status == 302]
    served = [r for r in lines if r.status == 206]
    assert redirects and all(r.uri == "/cdn/model.safetensors" and r.auth == "bearer" for r in redirects)
    assert served and all(r.uri == "/model.safetensors" and r.auth == "-" for r in served)
    # The other origin's certificate is checked as any other.
    with pytest.raises(SafetensorError, match="certificate|SSL"):
        safe_open(server.url("cdn/model.safetensors"), framework="np", token=TOKEN)


def test_open_checkpoint_url_of_a_sharded_index(server, model, sharded):
    shards = SHARDS
    with safetensors.cxx.open_checkpoint(server.url("sharded/model.safetensors.index.json")) as ck:
        assert ck.keys() == ["a", "b", "c"]
        np.testing.assert_array_equal(ck.get_tensor("b"), shards["model-00002-of-00002.safetensors"]["b"])
        np.testing.assert_array_equal(ck.get_slice("a")[10:20], np.full(10, 1, np.float32))
    with safetensors.cxx.open_checkpoint(server.url("sharded/")) as ck:  # a base URL finds the index
        assert ck.keys() == ["a", "b", "c"]
    with safetensors.cxx.open_checkpoint(server.url("private/model.safetensors"), token=TOKEN) as ck:
        assert ck.keys() == sorted(ARRAYS)


def test_safe_open_of_an_index_or_a_directory_opens_the_checkpoint(server, sharded):
    # An index or a checkpoint directory, local or by URL, is one checkpoint, as open_checkpoint
    # opens it: keys over every shard, tensors, slices and the index's metadata (issue 38 item 4).
    index = os.path.join(sharded, "model.safetensors.index.json")
    for name in (index, sharded, "file://" + index, server.url("sharded/model.safetensors.index.json"),
                 server.url("sharded/")):
        with safe_open(name, framework="np") as f:
            assert f.keys() == ["a", "b", "c"], name
            assert f.metadata() == {"total_size": "606"}, name
            np.testing.assert_array_equal(f.get_tensor("b"), SHARDS["model-00002-of-00002.safetensors"]["b"])
            np.testing.assert_array_equal(f.get_slice("a")[10:20], np.full(10, 1, np.float32))
    loaded = load_file(server.url("sharded/model.safetensors.index.json"))
    assert sorted(loaded) == ["a", "b", "c"]
    np.testing.assert_array_equal(loaded["c"], np.zeros((2, 3), np.uint8))


def test_hub_repository_urls_find_the_index_or_the_single_file(server, model):
    # The hub layout BASE/ORG/REPO/resolve/REV/: a repository URL (resolve or the browser's tree
    # form, with or without the final '/') finds model.safetensors.index.json, else
    # model.safetensors, as hub tools do (issue 38 item 6).
    write_sharded(os.path.join(server.root, "hub", "org", "sharded", "resolve", "main"))
    single = os.path.join(server.root, "hub", "org", "single", "resolve", "v1.0")
    os.makedirs(single)
    shutil.copy(os.path.join(server.root, "model.safetensors"), single)
    for repo, keys in (("sharded", ["a", "b", "c"]), ("single", sorted(ARRAYS))):
        rev = "main" if repo == "sharded" else "v1.0"
        for form in ("resolve/{}/", "resolve/{}", "tree/{}", "tree/{}/"):
            url = server.url(f"hub/org/{repo}/" + form.format(rev))
            with safe_open(url, framework="np") as f:
                assert f.keys() == keys, url
            with safetensors.cxx.open_checkpoint(url) as ck:
                assert ck.keys() == keys, url
    mark = server.access_mark()
    with safe_open(server.url("hub/org/single/tree/v1.0"), framework="np") as f:
        np.testing.assert_array_equal(f.get_tensor("matrix"), ARRAYS["matrix"])
    uris = [r.uri for r in server.access_since(mark)]
    assert uris[0] == "/hub/org/single/resolve/v1.0/model.safetensors.index.json"  # 404: not sharded
    assert set(uris[1:]) == {"/hub/org/single/resolve/v1.0/model.safetensors"}
    with pytest.raises(SafetensorError, match="404"):
        safe_open(server.url("hub/org/missing/resolve/main"), framework="np")


def test_file_url_opens_the_local_file(server, model):
    path = os.path.join(server.root, "model.safetensors")
    with safe_open("file://" + path, framework="np") as f:
        np.testing.assert_array_equal(f.get_tensor("matrix"), ARRAYS["matrix"])


def test_remote_options_are_checked(server, model):
    with pytest.raises(SafetensorError, match="timeout"):
        safe_open(server.url("model.safetensors"), framework="np", timeout=0)
    with pytest.raises(TypeError, match="token"):
        safe_open(server.url("model.safetensors"), framework="np", token=123)


def _load_sharded(url, **options):
    pytest.importorskip("torch")
    from safetensors.cxx import load_sharded

    return sorted(load_sharded(url, 0, 1, {}, **options))


# Every entry point that takes remote options: one parser (python/src/remote_options.h), one behaviour.
OPENERS = {
    "safe_open": lambda url, **o: safe_open(url, framework="np", **o).keys(),
    "open_checkpoint": lambda url, **o: safetensors.cxx.open_checkpoint(url, **o).keys(),
    "load_sharded": _load_sharded,
    "Reader.open_location": lambda url, **o: Reader.open_location(url, "mmap", "reference", o).keys(),
    "Reader.open_checkpoint_location":
    lambda url, **o: Reader.open_checkpoint_location(url, "mmap", "reference", o).keys(),
}


@pytest.mark.parametrize("opener", sorted(OPENERS))
def test_token_defaults_to_the_environment_everywhere(server, model, monkeypatch, opener):
    open_url = OPENERS[opener]
    url = server.url("private/model.safetensors")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("SAFETENSORS_TOKEN", TOKEN)
    assert open_url(url) == sorted(ARRAYS)
    monkeypatch.delenv("SAFETENSORS_TOKEN")
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert open_url(url) == sorted(ARRAYS)
    monkeypatch.setenv("SAFETENSORS_TOKEN", "wrong-" + TOKEN)  # the first of the two wins
    with pytest.raises(SafetensorError, match="401"):
        open_url(url)
    # An explicit token, even an empty one, is used instead of the environment's.
    assert open_url(url, token=TOKEN) == sorted(ARRAYS)
    monkeypatch.setenv("SAFETENSORS_TOKEN", TOKEN)
    with pytest.raises(SafetensorError, match="401"):
        open_url(url, token="")


@pytest.mark.parametrize("opener", sorted(OPENERS))
def test_remote_options_fail_alike_everywhere(server, model, opener):
    open_url = OPENERS[opener]
    url = server.url("model.safetensors")
    for timeout in (0, -1.5, "10", True):
        with pytest.raises(SafetensorError, match="timeout must be a positive number of seconds"):
            open_url(url, timeout=timeout)
    with pytest.raises(TypeError, match="token must be a str, not int"):
        open_url(url, token=123)
    assert open_url(url, timeout=30, token=None, ca_file=None) == sorted(ARRAYS)


@pytest.mark.parametrize("opener", ["load_sharded", "Reader.open_location", "Reader.open_checkpoint_location"])
def test_connections_option(server, model, opener):
    open_url = OPENERS[opener]
    url = server.url("model.safetensors")
    for bad in (0, 65, 2.0, True):
        with pytest.raises(SafetensorError, match="connections must be an int from 1 to 64"):
            open_url(url, connections=bad)
    assert open_url(url, connections=2) == sorted(ARRAYS)


def test_unknown_remote_option_is_an_error(server, model):
    with pytest.raises(SafetensorError, match="unknown remote option 'tokn'"):
        Reader.open_location(server.url("model.safetensors"), "mmap", "reference", {"tokn": TOKEN})
    with pytest.raises(TypeError, match="unexpected keyword arguments"):
        _load_sharded(server.url("model.safetensors"), tokn=TOKEN)


def test_safe_open_handle_over_fsspec_http_reads_only_what_it_needs(server, model):
    fsspec = pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp", reason="fsspec's HTTP filesystem needs aiohttp (Debian python3-aiohttp)")
    fs = fsspec.filesystem("http")
    mark = server.access_mark()
    # No read-ahead cache: every read is a Range request of exactly the bytes asked for.
    with fs.open(server.url("model.safetensors"), "rb", cache_type="none") as f:
        with _safe_open_handle(f, framework="np") as g:
            assert g.keys() == sorted(ARRAYS)
            np.testing.assert_array_equal(g.get_tensor("small"), ARRAYS["small"])
            np.testing.assert_array_equal(g.get_slice("big")[5], ARRAYS["big"][5])
    gets = [r for r in server.access_since(mark) if r[0] == "GET"]
    assert gets and all(r[2] == 206 for r in gets)
    assert sum(r[4] for r in gets) < 16 * 1024  # the header, 80 bytes and one 2 KiB row of a 1 MiB file


def test_the_library_decides_what_a_name_is(tmp_path):
    # A URL of a scheme nothing reads is refused as such by the location door (location.h),
    # not looked up as a local file; a file:// URL needs no remote library.
    with pytest.raises(SafetensorError, match="reads no s3:// URLs"):
        safe_open("s3://bucket/model.safetensors", framework="np")
    path = str(tmp_path / "local.safetensors")
    save_file({"small": ARRAYS["small"]}, path)
    with safe_open("file://" + path.replace("%", "%25"), framework="np") as f:
        assert f.keys() == ["small"]
