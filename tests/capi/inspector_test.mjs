// SPDX-License-Identifier: Apache-2.0
// The web inspector's logic (web/site/inspector.mjs) in Node over the WebAssembly build: every
// corpus file gets the CLI's verdict (`safetensors validate --json`: code, offset, tensor) under
// each policy, reading only the header; a 2 GB (sparse) file is judged reading under 1 MB in
// under 2 s; a tensor's slice reads only its own bytes and decodes them with the C++ codecs; GGUF,
// NumPy and PyTorch files are described (the same module) in the words of `safetensors inspect`.
// (tests/capi/browser_test.mjs runs the same in Chromium, through the page.)
// Usage: node --no-experimental-fetch inspector_test.mjs BUILD_WASM_DIR CORPUS_DIR CLI SCRATCH
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readSync, readFileSync, rmSync, ftruncateSync, writeFileSync, writeSync, fstatSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [buildDir, corpus, cli, scratch] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const { api, describedResult, describeFile, inspect, plainTensor, sliceValues, summarize } = await import(path.join(here, '../../web/site/inspector.mjs'));
const require = createRequire(import.meta.url);
const a = api(await require(path.resolve(buildDir, 'safetensors_c.js'))());
const failures = [];

/** A File.slice stand-in over a file descriptor that counts the bytes it hands out. */
function reader(file) {
  const fd = openSync(file, 'r');
  const counter = { bytes: 0, size: fstatSync(fd).size, close: () => closeSync(fd) };
  counter.read = async (offset, length) => {
    const end = Math.min(offset + length, counter.size);
    const out = new Uint8Array(Math.max(end - offset, 0));
    if (out.length > 0) readSync(fd, out, 0, out.length, offset);
    counter.bytes += out.length;
    return out;
  };
  return counter;
}

const rows = readFileSync(path.join(corpus, 'verdicts.tsv'), 'utf8').trim().split('\n').slice(1)
  .map((line) => line.split('\t'));
for (const policy of ['reference', 'strict', 'lenient']) {
  let out = '';
  try {
    out = execFileSync(cli, ['validate', '--json', '--policy', policy, ...rows.map(([f]) => path.join(corpus, f))]);
  } catch (e) { out = e.stdout; } // exit 1: some files are invalid
  const expected = new Map(out.toString().trim().split('\n').map((l) => JSON.parse(l)).map((d) => [d.file, d]));
  for (const [name] of rows) {
    const file = path.join(corpus, name);
    const r = reader(file);
    const { verdict } = await inspect(a, r.read, r.size, policy);
    r.close();
    const want = expected.get(file);
    const code = want.ok ? 'ok' : want.code;
    if (verdict.code !== code || verdict.offset !== want.offset || verdict.tensor !== want.tensor ||
        (!want.ok && verdict.message !== want.message)) {
      failures.push(`${name} under ${policy}: ${JSON.stringify(verdict)}, the CLI ${JSON.stringify(want)}`);
    }
  }
}

// U+0000 inside names: the error's tensor, a tensor's name and a metadata key keep what follows it.
{
  const header = (json) => {
    const bytes = Buffer.alloc(8 + Buffer.byteLength(json) + 3);
    bytes.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
    bytes.write(json, 8);
    return new Uint8Array(bytes);
  };
  const read = (bytes) => async (offset, length) => bytes.subarray(offset, Math.min(offset + length, bytes.length));
  const overlap = header('{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},' +
    '"mlp\\u0000o_proj":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}');
  const bad = (await inspect(a, read(overlap), overlap.length, 'reference')).verdict;
  if (bad.code !== 'InvalidOffset' || bad.tensor !== 'mlp\u0000o_proj') failures.push(`NUL name in an error: ${JSON.stringify(bad)}`);
  const good = header('{"__metadata__":{"k\\u0000ey":"v\\u0000al"},"mlp\\u0000o_proj":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}}');
  const ok = await inspect(a, read(good), good.length, 'reference');
  if (!ok.verdict.ok || ok.tensors[0]?.name !== 'mlp\u0000o_proj' || ok.metadata.get('k\u0000ey') !== 'v\u0000al') {
    failures.push(`NUL names: ${JSON.stringify(ok.verdict)} ${JSON.stringify(ok.tensors.map((t) => t.name))} ${JSON.stringify([...ok.metadata])}`);
  }
  // A `__proto__` metadata key is kept as any other (metadata is a Map, not a plain object).
  const proto = header('{"__metadata__":{"__proto__":"x","format":"pt"},"t":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}}');
  const kept = await inspect(a, read(proto), proto.length, 'reference');
  if (kept.metadata.get('__proto__') !== 'x' || kept.metadata.size !== 2) failures.push(`__proto__ metadata: ${JSON.stringify([...kept.metadata])}`);
}

// JSON errors in the CLI's words: WebAssembly's simdjson kernel (the fallback) words an unclosed
// string or an unescaped control character otherwise than the native kernels do, unless the core
// words them itself (json_error_words).
{
  mkdirSync(scratch, { recursive: true });
  const texts = ['{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}', '{"a":{"dtype":"U8,"shape":[1],"data_offsets":[0,1]}}',
    '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b}', '{"a":{"dtype":"U8\u0001","shape":[1],"data_offsets":[0,1]}}',
    '{"a":{"dtype":"U\\\u0001","shape":[1],"data_offsets":[0,1]}}', '{"a":{"dtype":t"U8","shape":[1],"data_offsets":[0,1]}}',
    '{"__metadata__":{"k":"v\\"},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', '{"a":{"dtype":"U8","shape":[1-],"data_offsets":[0,1]}}'];
  const files = texts.map((text, i) => {
    const file = path.join(scratch, `json-words-${i}.safetensors`);
    const json = Buffer.from(text);
    const bytes = Buffer.alloc(8 + json.length + 1);
    bytes.writeBigUInt64LE(BigInt(json.length));
    json.copy(bytes, 8);
    writeFileSync(file, bytes);
    return file;
  });
  let out = '';
  try { out = execFileSync(cli, ['validate', '--json', ...files]); } catch (e) { out = e.stdout; }
  const expected = out.toString().trim().split('\n').map((l) => JSON.parse(l));
  for (const [i, file] of files.entries()) {
    const r = reader(file);
    const { verdict } = await inspect(a, r.read, r.size, 'reference');
    r.close();
    if (verdict.message !== expected[i]?.message) failures.push(`JSON words of ${JSON.stringify(texts[i])}: ${verdict.message}, the CLI ${expected[i]?.message}`);
  }
}

// A 2 GB file: one U8 tensor of 2^31 - 8 bytes after a real header, sparse on disk.
mkdirSync(scratch, { recursive: true });
const big = path.join(scratch, 'two-gigabytes.safetensors');
const elements = 2 ** 31 - 8;
let json = `{"__metadata__":{"format":"pt"},"big":{"dtype":"U8","shape":[${elements}],"data_offsets":[0,${elements}]}}`;
json += ' '.repeat((8 - (json.length % 8)) % 8);
const fd = openSync(big, 'w');
const prefix = Buffer.alloc(8);
prefix.writeBigUInt64LE(BigInt(json.length));
writeSync(fd, prefix, 0, 8, 0);
writeSync(fd, Buffer.from(json), 0, json.length, 8);
writeSync(fd, Buffer.from([1, 2, 3, 4]), 0, 4, 8 + json.length);
ftruncateSync(fd, 8 + json.length + elements);
closeSync(fd);
const r = reader(big);
const started = performance.now();
const judged = await inspect(a, r.read, r.size, 'reference');
const openMs = performance.now() - started;
const headerBytes = r.bytes;
const shown = await sliceValues(a, r.read, judged, judged.tensors[0], '0:4096');
r.close();
const summary = summarize(judged.tensors);
if (!judged.verdict.ok || judged.tensors.length !== 1 || judged.metadata.get('format') !== 'pt') {
  failures.push(`2 GB file: ${JSON.stringify(judged.verdict)} ${judged.tensors.length} tensors`);
}
if (summary.parameters !== elements || summary.byDtype.U8.bytes !== elements) failures.push('2 GB file: summary');
if (headerBytes >= 1 << 20) failures.push(`2 GB file: ${headerBytes} bytes read to judge it`);
if (openMs >= 2000) failures.push(`2 GB file: judged in ${openMs.toFixed(0)} ms`);
if (r.bytes - headerBytes !== 4096 || shown.values?.[3] !== 4 || shown.stats?.max !== 4) {
  failures.push(`2 GB file preview: ${r.bytes - headerBytes} bytes, ${shown.error ?? shown.values?.slice(0, 4)}`);
}

// GGUF, NumPy and PyTorch files, described by the same module as `safetensors inspect`
// describes them: its format line, metadata, notes and table rows, word for word; a pickle that
// would run code refused with the CLI's error.
const fixtures = path.join(here, '../fixtures');
const described = ['gguf/quantized.gguf', 'numpy/stored.npz', 'numpy/deflated.npz', 'numpy/dtype_f4.npy', 'pytorch/basic.pt',
  'pytorch/legacy.pt', 'pytorch/evil_os_system.pt'];
/** The lines `safetensors inspect` prints for description `d` (tools/cli/tensor_table.cpp), but the summary's. */
function inspectLines(d) {
  if (d.refusal) return d.notes.map((n) => `note:        ${n}`);
  const lines = [`format:      ${d.format}`, ...d.metadata.map(([k, v]) => `  ${k}: ${v}`), ...d.notes.map((n) => `note:        ${n}`)];
  const width = Math.min(80, Math.max(4, ...d.tensors.map((t) => t.name.length)));
  const commas = (n) => n.toLocaleString('en-US');
  const row = (cells) => `${cells[0].padEnd(width)}  ${cells[1].padEnd(11)}  ${cells[2].padEnd(20)}  ${cells[3].padStart(14)}  ${cells[4]}`.trimEnd();
  if (d.tensors.length) lines.push(row(['name', 'dtype', 'shape', 'bytes', d.extraTitle]));
  for (const t of d.tensors) lines.push(row([t.name, t.type, `[${t.shape.join(', ')}]`, commas(t.bytes), t.extra]));
  return lines;
}
for (const name of described) {
  const file = path.join(fixtures, name);
  let out = ''; let err = '';
  try { out = execFileSync(cli, ['inspect', file], { stdio: ['ignore', 'pipe', 'pipe'] }).toString(); } catch (e) { out = e.stdout.toString(); err = e.stderr.toString(); }
  const r = reader(file);
  const d = await describeFile(a, r.read, r.size, path.basename(file));
  r.close();
  if (!d.ok) { failures.push(`${name}: not described: ${d.code}: ${d.message}`); continue; }
  const cliLines = out.split('\n');
  let at = 0;
  for (const line of inspectLines(d)) {
    const found = cliLines.indexOf(line, at);
    if (found < 0) { failures.push(`${name}: the CLI's inspect has no line ${JSON.stringify(line)} (after line ${at}):\n${out}`); break; }
    at = found + 1;
  }
  const tableRows = cliLines.slice(cliLines.findIndex((l) => l.startsWith('name ')) + 1).filter((l) => l !== '');
  if (!d.refusal && tableRows.length !== d.tensors.length) failures.push(`${name}: ${d.tensors.length} rows, the CLI ${tableRows.length}`);
  const verdict = describedResult(d, r.size).verdict;
  if (d.refusal && (verdict.code !== 'CodeExecution' || !err.includes(verdict.message))) {
    failures.push(`${name}: refused as ${JSON.stringify(verdict)}, the CLI: ${err}`);
  }
  if (!d.refusal && !verdict.ok) failures.push(`${name}: ${JSON.stringify(verdict)}`);
}

// A described tensor whose bytes are plain in its file is sliced, decoded and summarized as a
// SafeTensors tensor (plainTensor): its statistics are those `safetensors stats` prints for the
// tensor converted; every other tensor of these files says why not.
let plainTensors = 0;
for (const name of ['gguf/plain.gguf', 'gguf/quantized.gguf', 'numpy/stored.npz', 'numpy/dtype_f4.npy', 'pytorch/basic.pt']) {
  const file = path.join(fixtures, name);
  const converted = path.join(scratch, `plain-${path.basename(file)}.safetensors`);
  const r = reader(file);
  const d = await describeFile(a, r.read, r.size, path.basename(file));
  const convertible = d.tensors.some((t) => t.data);
  rmSync(converted, { force: true });
  if (convertible) execFileSync(cli, ['convert', '-q', file, converted], { stdio: 'ignore' });
  const cliStats = convertible ? JSON.parse(execFileSync(cli, ['stats', '--json', '-q', converted]).toString()).tensors : [];
  for (const t of d.tensors) {
    if (!t.data) {
      if (!t.noData) failures.push(`${name} ${t.name}: neither plain nor said why`);
      continue;
    }
    ++plainTensors;
    const view = plainTensor(t, r.read);
    const shown = await sliceValues(a, view.read, view.result, view.tensor, '');
    const want = cliStats.find((c) => c.name === t.name);
    const close = (x, y) => (x === null ? !Number.isFinite(y) : Math.abs(x - y) <= 1e-6 * Math.max(1, Math.abs(x)));
    if (shown.error || !want || shown.stats.count !== want.count || !['min', 'max', 'mean', 'std'].every((k) => close(want[k], shown.stats[k]))) {
      failures.push(`${name} ${t.name}: ${JSON.stringify(shown.error ?? shown.stats)}, the CLI's stats ${JSON.stringify(want)}`);
    }
  }
  r.close();
}
if (plainTensors < 10) failures.push(`${plainTensors} plain described tensors`);

for (const f of failures) console.error('FAIL', f);
if (failures.length > 0) process.exit(1);
console.log(`inspector ok: ${rows.length} files x 3 policies; 2 GB file judged reading ${headerBytes} bytes in ` +
  `${openMs.toFixed(1)} ms; ${described.length} GGUF, NumPy and PyTorch files described as the CLI describes them; ` +
  `${plainTensors} of their tensors plain, with the CLI's statistics`);
