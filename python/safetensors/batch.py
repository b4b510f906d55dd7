# SPDX-License-Identifier: Apache-2.0
"""Fleet jobs on a Dask cluster: validate, convert, checksum or inspect many checkpoints.

    python3 -m safetensors.batch validate --scheduler tcp://10.0.0.5:8786 /mirror --report report.jsonl
    python3 -m safetensors.batch convert --out /converted --to safetensors 'zoo/**/*.bin'

One Dask task per file (a sharded checkpoint's shards are files of their own; `inspect`
reads a SafeTensors checkpoint's index as one row). Each task runs the C++ pipeline with
the GIL released. A bad input is a row of the report, never the end of the job. `convert`
writes each output atomically (a temporary file renamed when complete), removes what a
killed worker left behind, records every input's size, mtime and SHA-256 in a manifest in
--out and skips, on the next run, the outputs that are up to date. docs/batch.md has more.
"""

import argparse
import glob
import json
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import List, Optional

from ._safetensors_cxx import SafetensorError, is_url

COMMANDS = ("validate", "convert", "checksum", "inspect")
# What a directory or glob yields: the files the converters read (an index is a checkpoint for `inspect`).
INPUT_SUFFIXES = (".safetensors", ".pt", ".pth", ".bin", ".ckpt", ".npy", ".npz", ".gguf")
INDEX_SUFFIX = ".safetensors.index.json"
OUTPUT_SUFFIXES = {"safetensors": ".safetensors", "npz": ".npz", "npy": ".npy", "gguf": ".gguf", "sharded": ""}
MANIFEST_NAME = ".safetensors-batch.json"
EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
# Tests only: seconds a convert task sleeps at each progress report, so that a worker can be
# killed while its output is still a temporary file.
_CHUNK_DELAY_ENV = "SAFETENSORS_BATCH_TEST_CHUNK_DELAY"


class UsageError(Exception):
    """A mistake in the command line or the call (exit status 2)."""


@dataclass
class BatchResult:
    """What a batch did: one row per input (the report's objects) and the counts."""

    command: str
    rows: List[dict] = field(default_factory=list)
    seconds: float = 0.0
    workers: int = 0
    dashboard: Optional[str] = None

    def count(self, status):
        return sum(1 for row in self.rows if row["status"] == status)

    @property
    def ok(self):
        return self.count("ok")

    @property
    def skipped(self):
        return self.count("skipped")

    @property
    def errors(self):
        return self.count("error")

    @property
    def files_per_second(self):
        return len(self.rows) / self.seconds if self.seconds > 0 else 0.0

    @property
    def exit_code(self):
        """0 when every input is ok (or skipped), 1 when some are invalid."""
        return EXIT_INVALID if self.errors else EXIT_OK

    def summary(self):
        return (f"{self.command}: {len(self.rows)} inputs, {self.ok} ok, {self.skipped} skipped, "
                f"{self.errors} errors in {self.seconds:.2f} s ({self.files_per_second:.1f} files/s, "
                f"{self.workers} worker{'' if self.workers == 1 else 's'})")


def _is_url(text):
    return is_url(text)  # the library's rule, as the CLI's


# ---------------------------------------------------------------------------------------------
# Inputs: files, directories (recursive), globs, URLs and @manifest.txt, each with the relative
# name its output keeps.


def _wanted(name):
    return not name.startswith(".") and name.lower().endswith(INPUT_SUFFIXES)


def _index_shards(index_path):
    """The shard files an index names (none when it cannot be read: the task says why)."""
    try:
        with open(index_path, encoding="utf-8") as f:
            weight_map = json.load(f).get("weight_map", {})
        directory = os.path.dirname(index_path)
        return {os.path.normpath(os.path.join(directory, shard)) for shard in weight_map.values()}
    except (OSError, ValueError, AttributeError):
        return set()


def _walk(directory, command, skip=None):
    """(path, relative name) of the inputs under `directory`, sorted; for `inspect` a
    SafeTensors index stands for its shards. `skip` (convert's --out) is not entered."""
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and os.path.abspath(os.path.join(root, d)) != skip)
        names = sorted(files)
        shards = set()
        if command == "inspect":
            for name in names:
                if name.endswith(INDEX_SUFFIX):
                    found.append(os.path.join(root, name))
                    shards |= _index_shards(os.path.join(root, name))
        found.extend(os.path.join(root, n) for n in names
                     if _wanted(n) and os.path.normpath(os.path.join(root, n)) not in shards)
    return [(path, os.path.relpath(path, directory)) for path in found]


def _glob_root(pattern):
    """The directory part of `pattern` before its first wildcard: what relative names start from."""
    parts = pattern.split(os.sep)
    fixed = []
    for part in parts[:-1]:
        if glob.has_magic(part):
            break
        fixed.append(part)
    return os.sep.join(fixed) or ("." if not pattern.startswith(os.sep) else os.sep)


def expand_inputs(items, command="validate", skip=None):
    """Every input named by `items` as (input, relative name), in order, each once; the
    directory `skip` (convert's --out, when inside an input directory) is not read."""
    out, seen = [], set()

    def add(path, rel):
        key = path if _is_url(path) else os.path.abspath(path)
        if key not in seen:
            seen.add(key)
            out.append((path if _is_url(path) else os.path.abspath(path), rel))

    def one(item, base):
        if item.startswith("@"):
            manifest = os.path.join(base, item[1:])
            try:
                with open(manifest, encoding="utf-8") as f:
                    lines = [line.strip() for line in f]
            except OSError as e:
                raise UsageError(f"cannot read the manifest {manifest}: {e.strerror}") from e
            for line in lines:
                if line and not line.startswith("#"):
                    one(line, os.path.dirname(manifest))
            return
        if _is_url(item):
            name = item.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] or "input"
            add(item, name)
            return
        path = os.path.join(base, item)
        if glob.has_magic(item):
            matches = sorted(glob.glob(path, recursive=True))
            if not matches:
                raise UsageError(f"no file matches '{item}'")
            root = _glob_root(path)
            for match in matches:
                if os.path.isdir(match):
                    for p, rel in _walk(match, command, skip):
                        add(p, os.path.join(os.path.relpath(match, root), rel))
                elif _wanted(os.path.basename(match)) or match.endswith(INDEX_SUFFIX):
                    add(match, os.path.relpath(match, root))
            return
        if os.path.isdir(path):
            for p, rel in _walk(path, command, skip):
                add(p, rel)
            return
        add(path, os.path.basename(path))  # a missing file is the task's error row

    for item in items:
        one(os.fsdecode(item), "")
    return out


# ---------------------------------------------------------------------------------------------
# Tasks: each runs on a worker, returns its row and raises nothing for a bad input.


def _error_row(code, message):
    return {"status": "error", "code": code, "message": message}


def _from_verdict(verdict, keys):
    if not verdict.pop("ok"):
        return _error_row(verdict["code"], verdict["message"]) | {
            k: verdict[k] for k in ("offset", "tensor") if verdict.get(k) is not None}
    return {"status": "ok", "code": None, "message": None} | {k: verdict[k] for k in keys if k in verdict}


def _validate_task(job, item):
    from ._safetensors_cxx import batch_validate

    verdict = batch_validate(item["input"], job["policy"], job["remote"])
    row = _from_verdict(verdict, ("warnings", "tensors", "bytes"))
    return row


def _inspect_task(job, item):
    from ._safetensors_cxx import batch_inspect

    verdict = batch_inspect(item["input"], job["policy"], job["remote"])
    return _from_verdict(verdict, ("format", "tensors", "parameters", "bytes", "dtypes", "metadata_format", "shards",
                                   "notes"))


def _looks_like_safetensors(path):
    """A length prefix followed by '{': the per-tensor digests apply (the checksum validates the rest)."""
    try:
        with open(path, "rb") as f:
            head = f.read(9)
        return len(head) == 9 and head[8:9] == b"{"
    except OSError:
        return False


def _checksum_task(job, item):
    from ._safetensors_cxx import checksum

    source = item["input"]
    if _is_url(source):
        from ._safetensors_cxx import batch_checksum_url

        per_tensor = source.split("?", 1)[0].endswith(".safetensors")
        digest = batch_checksum_url(source, per_tensor, job["remote"])
        if not digest.pop("ok"):
            return _error_row(digest["code"], digest["message"])
    else:
        digest = checksum(source, _looks_like_safetensors(source), None)
    row = {"status": "ok", "code": None, "message": None, "sha256": digest["sha256"], "bytes": digest["bytes"]}
    if digest["tensors"]:
        row["tensors"] = len(digest["tensors"])
        row["tensor_sha256"] = dict(digest["tensors"])
    return row


def _remove_stale_temporaries(output):
    """Removes what a writer killed mid-file left: the library's `.NAME.tmp-PID-N` beside
    `output` (and inside it, for a sharded output). Only this task writes `output`."""
    removed = []
    target = output.rstrip("/")
    patterns = [os.path.join(glob.escape(os.path.dirname(target)), "." + glob.escape(os.path.basename(target)) +
                             ".tmp-*")]
    if output.endswith("/"):
        patterns.append(os.path.join(glob.escape(target), ".*.tmp-*"))
    for pattern in patterns:
        for stale in glob.glob(pattern):
            try:
                os.unlink(stale)
                removed.append(stale)
            except FileNotFoundError:
                pass
    return removed


def _file_sha256(path):
    from ._safetensors_cxx import checksum

    return checksum(path, False, None)["sha256"]


def _convert_task(job, item):
    from ._safetensors_cxx import convert

    source, output = item["input"], item["output"]
    local = not _is_url(source)
    if local:
        stat = os.stat(source)
        recorded = item.get("recorded")
        if recorded and stat.st_size == recorded["size"] and _file_sha256(source) == recorded["sha256"]:
            # Touched but not changed: the output is up to date.
            return {"status": "skipped", "code": None, "message": "up to date (same digest)", "output": output,
                    "input_size": stat.st_size, "input_mtime_ns": stat.st_mtime_ns, "input_sha256": recorded["sha256"],
                    **{k: recorded.get(k) for k in ("tensors", "parameters", "bytes")}}
    _remove_stale_temporaries(output)
    os.makedirs(os.path.dirname(output.rstrip("/")) or ".", exist_ok=True)
    delay = float(os.environ.get(_CHUNK_DELAY_ENV, "0") or 0)
    progress = (lambda done, total: time.sleep(delay)) if delay > 0 else None
    if local:
        summary = convert([source], output, job["options"], progress)
    else:
        from ._safetensors_cxx import batch_convert_url

        summary = batch_convert_url(source, output, job["options"], job["remote"])
        if not summary.pop("ok"):
            return _error_row(summary["code"], summary["message"])
    row = {"status": "ok", "code": None, "message": None, "output": output, "input_format": summary["input_format"],
           "output_format": summary["output_format"], "tensors": summary["tensors"],
           "parameters": summary["parameters"], "bytes": summary["bytes"]}
    if summary["warnings"]:
        row["warnings"] = list(summary["warnings"])
    if local:
        digest = _file_sha256(source)
        after = os.stat(source)
        if (after.st_size, after.st_mtime_ns) == (stat.st_size, stat.st_mtime_ns):
            row.update(input_size=after.st_size, input_mtime_ns=after.st_mtime_ns, input_sha256=digest)
        else:  # not recorded: the next run converts it again
            row.setdefault("warnings", []).append("the input changed while it was converted")
    return row


_TASKS = {"validate": _validate_task, "inspect": _inspect_task, "checksum": _checksum_task, "convert": _convert_task}


def run_task(job, item):
    """One input's row. SafetensorError and OSError are the input's error; anything else is
    raised, so that Dask retries the task."""
    start = time.perf_counter()
    try:
        row = _TASKS[job["command"]](job, item)
    except SafetensorError as e:
        row = _error_row(getattr(e, "code", None) or "Error", str(e))
    except OSError as e:
        row = _error_row("IoError", str(e))
    row["input"] = item["input"]
    row["seconds"] = round(time.perf_counter() - start, 6)
    return row


# ---------------------------------------------------------------------------------------------
# The client: plan, submit, gather, report.


def _conversion_options(to, dtype, key, shared, strict, compress, only, exclude):
    listify = (lambda v: None if v is None else ([v] if isinstance(v, str) else list(v)))
    return {"to": to, "dtype": dtype, "key": key, "shared": shared, "strict": strict, "compress": compress,
            "only": listify(only), "exclude": listify(exclude)}


def _output_name(rel, to):
    stem = rel
    lower = rel.lower()
    for suffix in INPUT_SUFFIXES:
        if lower.endswith(suffix):
            stem = rel[: -len(suffix)]
            break
    return stem + OUTPUT_SUFFIXES[to] if to != "sharded" else stem + "/"


class _Manifest:
    """--out/.safetensors-batch.json: per output, the input's path, size, mtime and SHA-256,
    the options, and what the conversion wrote. Written atomically; only the client writes it."""

    def __init__(self, out_dir):
        self.path = os.path.join(out_dir, MANIFEST_NAME)
        self.entries = {}
        self.dirty = False
        try:
            with open(self.path, encoding="utf-8") as f:
                self.entries = json.load(f).get("outputs", {})
        except (OSError, ValueError, AttributeError):
            self.entries = {}

    def record(self, rel_output, row, options_key):
        self.entries[rel_output] = {"input": row["input"], "size": row["input_size"], "mtime_ns": row["input_mtime_ns"],
                                    "sha256": row["input_sha256"], "options": options_key,
                                    **{k: row.get(k) for k in ("tensors", "parameters", "bytes")}}
        self.dirty = True

    def save(self):
        if not self.dirty:
            return
        temp = f"{self.path}.tmp-{os.getpid()}"
        with open(temp, "w", encoding="utf-8") as f:
            json.dump({"version": 1, "outputs": self.entries}, f, indent=1, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, self.path)
        self.dirty = False


def _plan_convert(inputs, out_dir, to, options_key, manifest, force):
    """(items to submit, rows decided here): skipped outputs and output-name collisions."""
    items, rows, taken = [], [], {}
    for source, rel in inputs:
        rel_output = _output_name(rel, to)
        output = os.path.join(out_dir, rel_output)
        if rel_output in taken:
            rows.append(_error_row("OutputCollision", f"{source} and {taken[rel_output]} both convert to {output}") |
                        {"input": source, "seconds": 0.0})
            continue
        taken[rel_output] = source
        item = {"input": source, "output": output, "rel_output": rel_output}
        entry = None if force or _is_url(source) else manifest.entries.get(rel_output)
        if entry and entry.get("input") == source and entry.get("options") == options_key and \
                os.path.exists(output.rstrip("/")):
            try:
                stat = os.stat(source)
            except OSError:
                stat = None
            if stat and stat.st_size == entry["size"] and stat.st_mtime_ns == entry["mtime_ns"]:
                rows.append({"input": source, "status": "skipped", "code": None, "message": "up to date",
                             "seconds": 0.0, "output": output, **{k: entry.get(k) for k in ("tensors", "parameters",
                                                                                            "bytes")}})
                continue
            if stat and stat.st_size == entry["size"]:
                item["recorded"] = entry  # the task compares digests
        items.append(item)
    return items, rows


_INDEX_SUFFIXES = (".bin.index.json", ".pt.index.json", ".pth.index.json", INDEX_SUFFIX)


def _sharded_groups(found):
    """{index path: [(shard path, relative name)]} for each index beside the inputs whose every
    shard is an input: a sharded checkpoint converted shard by shard."""
    by_path = {path: rel for path, rel in found if not _is_url(path)}
    groups = {}
    for directory in sorted({os.path.dirname(path) for path in by_path}):
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            if not name.endswith(_INDEX_SUFFIXES):
                continue
            shards = sorted(_index_shards(os.path.join(directory, name)))
            if shards and all(shard in by_path for shard in shards):
                groups[os.path.join(directory, name)] = [(shard, by_path[shard]) for shard in shards]
    return groups


def _write_indexes(found, out_dir, rows):
    """After a convert to SafeTensors: beside the converted shards of each sharded input, its
    index (`NAME.safetensors.index.json`: weight_map from the outputs' headers, total_size),
    written atomically once every shard is ok or up to date. Returns lines for the log."""
    from ._open import safe_open

    status = {row["input"]: row for row in rows}
    lines = []
    for index, shards in _sharded_groups(found).items():
        outputs = [os.path.join(out_dir, _output_name(rel, "safetensors")) for _, rel in shards]
        if any(status.get(shard, {}).get("status") not in ("ok", "skipped") for shard, _ in shards):
            lines.append(f"{index}: not every shard converted: no index written")
            continue
        weight_map = {}
        for output in outputs:
            with safe_open(output, "np") as f:
                weight_map.update((name, os.path.basename(output)) for name in f.keys())
        total = sum(status[shard].get("bytes") or 0 for shard, _ in shards)  # tensor bytes, as total_size counts
        name = os.path.basename(index)
        for suffix in _INDEX_SUFFIXES:
            if name.endswith(suffix):
                name = name[: -len(suffix)] + INDEX_SUFFIX
                break
        target = os.path.join(os.path.dirname(outputs[0]), name)
        temp = f"{target}.tmp-{os.getpid()}"
        with open(temp, "w", encoding="utf-8") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}, f, indent=2)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, target)
    return lines


def _connect(scheduler, workers, threads_per_worker):
    """A Client of the scheduler at `scheduler`, or of a LocalCluster sized to the machine."""
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout=30), None
        except (OSError, TimeoutError) as e:
            raise UsageError(f"cannot reach the scheduler at {scheduler}: {e}") from e
    cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=threads_per_worker or 1,
                           processes=True, host="127.0.0.1", dashboard_address="127.0.0.1:0")
    return Client(cluster), cluster


def _dashboard(client):
    try:
        if "dashboard" in client.scheduler_info().get("services", {}):
            return client.dashboard_link
    except Exception:  # noqa: BLE001 (no dashboard is not an error)
        pass
    return None


def _progress_bar(futures):
    from distributed import progress

    thread = threading.Thread(target=progress, args=(futures,), daemon=True)
    thread.start()
    return thread


def batch(command, inputs, *, out=None, scheduler=None, workers=None, threads_per_worker=None, report=None,
          policy="reference", to=None, dtype=None, key=None, shared="keep", strict=False, compress=False, only=None,
          exclude=None, force=False, retries=2, token=None, ca_file=None, insecure=False, timeout=None,
          progress_bar=None, client=None, log=None):
    """Runs `command` ("validate", "convert", "checksum" or "inspect") on every input (paths,
    directories, globs, URLs, "@manifest.txt") as Dask tasks, on the cluster at `scheduler`
    ("tcp://host:8786"), the given `client`, or a LocalCluster of `workers` processes. `convert`
    writes under `out` (relative names kept, suffix for `to`). `report` names a JSON-lines file
    with one object per input. Returns a BatchResult (rows, counts, exit_code); raises
    UsageError for a mistake in the call."""
    if command not in COMMANDS:
        raise UsageError(f"unknown command '{command}' (expected {', '.join(COMMANDS)})")
    if isinstance(inputs, (str, bytes, os.PathLike)):
        inputs = [inputs]
    if not inputs:
        raise UsageError("no inputs")
    if policy not in ("reference", "strict", "lenient"):
        raise UsageError(f"unknown policy '{policy}' (expected reference, strict or lenient)")
    log = log or (lambda line: print(line, file=sys.stderr))
    job = {"command": command, "policy": policy,
           "remote": {"token": token, "ca_file": None if ca_file is None else os.fsdecode(ca_file),
                      "insecure": insecure, "timeout": timeout}}
    if command == "convert" and out is None:
        raise UsageError("convert needs --out DIR")
    found = expand_inputs(inputs, command, os.path.abspath(os.fsdecode(out)) if out is not None else None)
    if not found:
        raise UsageError("the inputs name no checkpoint files")
    manifest = options_key = None
    decided = []
    if command == "convert":
        to = to or "safetensors"
        if to not in OUTPUT_SUFFIXES:
            raise UsageError(f"unknown output format '{to}' (expected {', '.join(OUTPUT_SUFFIXES)})")
        out = os.path.abspath(os.fsdecode(out))
        os.makedirs(out, exist_ok=True)
        options = _conversion_options(to, dtype, key, shared, strict, compress, only, exclude)
        options_key = json.dumps(options, sort_keys=True)
        # shared="keep" is the default for a batch of mixed formats: given, the library would
        # refuse it for every input that is not PyTorch.
        job["options"] = {**options, "shared": None if shared == "keep" else shared}
        manifest = _Manifest(out)
        items, decided = _plan_convert(found, out, to, options_key, manifest, force)
    else:
        items = [{"input": source} for source, _ in found]

    result = BatchResult(command)
    show_progress = sys.stdout.isatty() if progress_bar is None else progress_bar
    held = []  # error lines wait for the progress bar to finish
    try:
        report_file = open(report, "w", encoding="utf-8") if report else None  # noqa: SIM115 (closed below)
    except OSError as e:
        raise UsageError(f"cannot write the report {report}: {e.strerror}") from e
    start = time.perf_counter()

    def emit(row):
        result.rows.append(row)
        if report_file:
            report_file.write(json.dumps(row, sort_keys=True) + "\n")
            report_file.flush()
        if row["status"] == "error":
            line = f"{row['input']}: {row['code']}: {row['message']}"
            held.append(line) if show_progress else log(line)

    cluster = None
    try:
        for row in decided:
            emit(row)
        if items:
            own_client = client is None
            if own_client:
                client, cluster = _connect(scheduler, workers, threads_per_worker)
            try:
                result.workers = len(client.scheduler_info().get("workers", {}))
                result.dashboard = _dashboard(client)
                if result.dashboard:
                    log(f"dashboard: {result.dashboard}")
                _gather(client, job, items, retries, manifest, emit, options_key, show_progress)
            finally:
                if own_client:
                    client.close()
                    if cluster is not None:
                        cluster.close()
        if manifest:
            for item in items:
                _remove_stale_temporaries(item["output"])
            if to == "safetensors":
                for line in _write_indexes(found, out, result.rows):
                    log(line)
    finally:
        if manifest:
            manifest.save()
        if report_file:
            report_file.close()
    result.seconds = time.perf_counter() - start
    for line in held:
        log(line)
    return result


def _gather(client, job, items, retries, manifest, emit, options_key, show_progress):
    from distributed import as_completed

    # One message for every task (client.map), each keyed by its position.
    stamp = f"{os.getpid()}-{time.time_ns()}"
    keys = [f"safetensors-{job['command']}-{stamp}-{n}" for n in range(len(items))]
    futures = dict(zip(client.map(run_task, [job] * len(items), items, key=keys, retries=retries, pure=False), items))
    bar = _progress_bar(list(futures)) if show_progress else None
    last_save = time.monotonic()
    for future in as_completed(list(futures)):
        item = futures[future]
        if future.status == "finished":
            row = future.result()
        else:
            exception = future.exception()
            row = _error_row(type(exception).__name__, str(exception)) | {"input": item["input"], "seconds": None}
        if "output" in item:
            row.setdefault("output", item["output"])
        if manifest and row["status"] in ("ok", "skipped") and "input_sha256" in row:
            manifest.record(item["rel_output"], row, options_key)
        emit(row)
        if manifest and time.monotonic() - last_save > 2:
            manifest.save()
            last_save = time.monotonic()
    if bar is not None:
        bar.join(timeout=5)  # its last update, before the summary
        print(file=sys.stdout, flush=True)


# ---------------------------------------------------------------------------------------------
# The command line.


def _parser():
    parser = argparse.ArgumentParser(prog="python3 -m safetensors.batch",
                                     description="Validate, convert, checksum or inspect many checkpoints on a "
                                                 "Dask cluster (docs/batch.md).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    helps = {"validate": "check each file against the format rules (the CLI's validate --json verdict)",
             "convert": "convert each file into --out, keeping relative paths",
             "checksum": "SHA-256 of each file and of each SafeTensors tensor",
             "inspect": "a summary row per checkpoint: tensors, parameters per dtype, metadata format, shards"}
    for name in COMMANDS:
        p = sub.add_parser(name, help=helps[name], description=helps[name])
        p.add_argument("inputs", nargs="+", metavar="INPUT",
                       help="files, directories (recursive), globs, URLs and @manifest.txt (one input a line)")
        p.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="an existing cluster's scheduler "
                                                                       "(default: a LocalCluster on this machine)")
        p.add_argument("--workers", type=int, metavar="N", help="LocalCluster worker processes (default: one a core)")
        p.add_argument("--threads-per-worker", type=int, metavar="N", help="LocalCluster threads a worker (default 1)")
        p.add_argument("--report", metavar="FILE.jsonl", help="one JSON object per input")
        p.add_argument("--retries", type=int, default=2, metavar="N", help="retries of a task that failed (default 2)")
        p.add_argument("--policy", default="reference", choices=("reference", "strict", "lenient"),
                       help="validation policy (default reference)")
        p.add_argument("--token", help="bearer token for URLs (default $SAFETENSORS_TOKEN, then $HF_TOKEN)")
        p.add_argument("--ca-file", help="PEM file of CAs to trust for URLs")
        p.add_argument("--insecure", action="store_true", help="no TLS checks for URLs")
        p.add_argument("--timeout", type=float, help="connect and stall timeout for URLs, seconds")
        p.add_argument("--no-progress", action="store_true", help="no progress bar, even on a terminal")
        if name == "convert":
            p.add_argument("--out", required=True, metavar="DIR", help="where outputs go (relative paths kept)")
            p.add_argument("--to", default="safetensors", choices=tuple(OUTPUT_SUFFIXES),
                           help="output format (default safetensors)")
            p.add_argument("--dtype", help="cast floating tensors (F32, F16, BF16, ...)")
            p.add_argument("--key", help="PyTorch: the nested dict holding the tensors")
            p.add_argument("--shared", default="keep", choices=("keep", "dedup"), help="PyTorch: tied storages")
            p.add_argument("--strict", action="store_true", help="PyTorch: refuse skipped objects")
            p.add_argument("--compress", action="store_true", help=".npz output: deflate")
            p.add_argument("--only", action="append", metavar="GLOB", help="tensors to write (repeatable)")
            p.add_argument("--exclude", action="append", metavar="GLOB", help="tensors not to write (repeatable)")
            p.add_argument("--force", action="store_true", help="convert even the outputs that are up to date")
    return parser


def main(argv=None):
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else EXIT_OK
    if not args.command:
        parser.print_usage(sys.stderr)
        return EXIT_USAGE
    options = {k: getattr(args, k) for k in ("out", "to", "dtype", "key", "shared", "strict", "compress", "only",
                                             "exclude", "force") if hasattr(args, k)}
    try:
        result = batch(args.command, args.inputs, scheduler=args.scheduler, workers=args.workers,
                       threads_per_worker=args.threads_per_worker, report=args.report, policy=args.policy,
                       retries=args.retries, token=args.token, ca_file=args.ca_file, insecure=args.insecure,
                       timeout=args.timeout, progress_bar=False if args.no_progress else None, **options)
    except UsageError as e:
        print(f"safetensors.batch: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    print(result.summary(), file=sys.stderr)
    return result.exit_code


if __name__ == "__main__":
    # Through the package's own module, so that the tasks pickle by reference (safetensors.batch.run_task).
    from safetensors.batch import main as _main

    sys.exit(_main())
