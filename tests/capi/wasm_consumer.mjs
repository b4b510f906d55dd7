// SPDX-License-Identifier: Apache-2.0
// The C API compiled to WebAssembly (scripts/web-build), run by Node: every file of the
// conformance corpus gets its expected verdict (verdicts.tsv) from memory, and from its header
// alone as a browser reads it (the 8-byte prefix, then the 8 + N header bytes: File.slice).
// A valid file's tensors are decoded to float32. Prints "wasm consumer ok: N files".
// Usage: node --no-experimental-fetch wasm_consumer.mjs BUILD_WASM_DIR CORPUS_DIR
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const [buildDir, corpus] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const createSafetensors = require(path.resolve(buildDir, 'safetensors_c.js'));
const m = await createSafetensors();

const statusName = (s) => m.UTF8ToString(m._safetensors_status_name(s));
const withBytes = (bytes, fn) => {
  const p = m._malloc(Math.max(bytes.length, 1));
  m.HEAPU8.set(bytes, p);
  try { return fn(p); } finally { m._free(p); }
};
const out = m._malloc(8);
const readU32 = (p) => m.getValue(p, 'i32') >>> 0;

/** The verdict of opening `bytes` as a whole file; reads every tensor as float32 when valid. */
function bufferVerdict(bytes) {
  return withBytes(bytes, (p) => {
    const status = m._safetensors_open_buffer(p, bytes.length, 0, out);
    if (status !== 0) return statusName(status);
    const file = readU32(out);
    m._safetensors_tensor_count(file, out);
    const count = readU32(out);
    let result = 'ok';
    for (let i = 0; i < count && result === 'ok'; ++i) {
      m._safetensors_tensor_element_count(file, i, out);
      const elements = Number(m.getValue(out, 'i64'));
      m._safetensors_tensor_dtype(file, i, out);
      if (m.getValue(out, 'i32') === 18 || elements > 1e6) continue; // C64 has no f32 decoding
      const floats = m._malloc(Math.max(elements * 4, 4));
      const s = m._safetensors_tensor_read_f32(file, i, floats, elements);
      if (s !== 0) result = `read_f32 failed: ${statusName(s)} ${m.UTF8ToString(m._safetensors_last_error_message())}`;
      m._free(floats);
    }
    m._safetensors_close(file);
    return result;
  });
}

/** The verdict from the header alone: the first 8 bytes, then the first 8 + N. */
function headerVerdict(bytes) {
  const size = BigInt(bytes.length);
  const prefix = bytes.subarray(0, 8);
  let n = 0n;
  const status = withBytes(prefix, (p) => m._safetensors_header_length(p, prefix.length, size, 0, out));
  if (status !== 0) return statusName(status);
  n = m.getValue(out, 'i64');
  const head = bytes.subarray(0, 8 + Number(n));
  return withBytes(head, (p) => {
    const s = m._safetensors_open_header(p, head.length, size, 0, out);
    if (s !== 0) return statusName(s);
    m._safetensors_close(readU32(out));
    return 'ok';
  });
}

const rows = readFileSync(path.join(corpus, 'verdicts.tsv'), 'utf8').trim().split('\n').slice(1)
  .map((line) => line.split('\t'));
const failures = [];
for (const [file, , expected] of rows) {
  const bytes = new Uint8Array(readFileSync(path.join(corpus, file)));
  const whole = bufferVerdict(bytes);
  const header = headerVerdict(bytes);
  if (whole !== expected) failures.push(`${file}: buffer ${whole}, expected ${expected}`);
  if (header !== expected) failures.push(`${file}: header ${header}, expected ${expected}`);
}
for (const f of failures) console.error('FAIL', f);
if (failures.length > 0) process.exit(1);
console.log(`wasm consumer ok: ${rows.length} files (safetensors ${m.UTF8ToString(m._safetensors_version())})`);
