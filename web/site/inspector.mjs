// SPDX-License-Identifier: Apache-2.0
// The inspector's logic, shared by the page (index.html) and its Node test: a SafeTensors file is
// judged by the C++ core compiled to WebAssembly (scripts/web-build), reading only what it needs
// through `read(offset, length)` (File.slice in a browser): the 8-byte length prefix, then the
// 8 + N header bytes, and a tensor's bytes only when it is opened.

const DTYPE_NAMES = ['BOOL', 'F4', 'F6_E2M3', 'F6_E3M2', 'U8', 'I8', 'F8_E5M2', 'F8_E4M3', 'F8_E8M0',
  'F8_E4M3FNUZ', 'F8_E5M2FNUZ', 'I16', 'U16', 'F16', 'BF16', 'I32', 'U32', 'F32', 'C64', 'F64', 'I64', 'U64'];
export const POLICIES = { reference: 0, strict: 1, lenient: 2 };
const C64 = 18;

/** Wraps the emscripten module `m` (createSafetensors()). */
export function api(m) {
  const scratch = m._malloc(16);
  const u32 = (p) => m.getValue(p, 'i32') >>> 0;
  const u64 = (p) => BigInt(u32(p)) | (BigInt(u32(p + 4)) << 32n); // little-endian halves
  const text = (p) => (p === 0 ? null : m.UTF8ToString(p));
  const lastError = (status) => {
    const hasOffset = m._safetensors_last_error_offset(scratch);
    return {
      ok: false,
      code: text(m._safetensors_status_name(status)),
      message: text(m._safetensors_last_error_message()),
      offset: hasOffset ? Number(u64(scratch)) : null,
      tensor: text(m._safetensors_last_error_tensor()),
    };
  };
  const withBytes = (bytes, fn) => {
    const p = m._malloc(Math.max(bytes.length, 1));
    m.HEAPU8.set(bytes, p);
    try { return fn(p); } finally { m._free(p); }
  };
  return { m, scratch, u32, u64, text, lastError, withBytes };
}

/**
 * Judges a file of `size` bytes read through `read(offset, length) -> Promise<Uint8Array>` under
 * `policy` ("reference", "strict" or "lenient"), as `safetensors validate` does. Returns
 * { verdict: {ok, code, message, offset, tensor}, tensors, metadata, layout, warnings }.
 */
export async function inspect(a, read, size, policy = 'reference') {
  const { m, scratch } = a;
  const options = (() => { m._safetensors_options_new(scratch); return a.u32(scratch); })();
  try {
    m._safetensors_options_set_policy(options, POLICIES[policy] ?? 0);
    const fileSize = BigInt(size);
    const prefix = await read(0, Math.min(8, size));
    let status = a.withBytes(prefix, (p) => m._safetensors_header_length(p, prefix.length, fileSize, options, scratch));
    if (status !== 0) return { verdict: a.lastError(status), tensors: [], metadata: {}, layout: null, warnings: [] };
    const n = Number(a.u64(scratch));
    const head = await read(0, 8 + n);
    status = a.withBytes(head, (p) => m._safetensors_open_header(p, head.length, fileSize, options, scratch));
    if (status !== 0) return { verdict: a.lastError(status), tensors: [], metadata: {}, layout: null, warnings: [] };
    const file = a.u32(scratch);
    try {
      return { verdict: { ok: true, code: 'ok', message: null, offset: null, tensor: null }, ...describe(a, file) };
    } finally {
      m._safetensors_close(file);
    }
  } finally {
    m._safetensors_options_free(options);
  }
}

/** Everything a header-only handle tells: tensors, metadata, layout, warnings. */
function describe(a, file) {
  const { m, scratch } = a;
  m._safetensors_file_layout(file, scratch, scratch + 8, 0, 0);
  const layout = { headerLength: Number(a.u64(scratch)), dataStart: Number(a.u64(scratch + 8)) };
  m._safetensors_tensor_count(file, scratch);
  const tensors = [];
  for (let i = 0, count = a.u32(scratch); i < count; ++i) {
    m._safetensors_tensor_name(file, i, scratch, scratch + 4);
    const name = new TextDecoder().decode(m.HEAPU8.subarray(a.u32(scratch), a.u32(scratch) + a.u32(scratch + 4)));
    m._safetensors_tensor_dtype(file, i, scratch);
    const dtype = m.getValue(scratch, 'i32');
    m._safetensors_tensor_shape(file, i, scratch, scratch + 4);
    const dims = a.u32(scratch);
    const shape = [];
    for (let d = 0, rank = a.u32(scratch + 4); d < rank; ++d) shape.push(Number(a.u64(dims + 8 * d)));
    m._safetensors_tensor_offsets(file, i, scratch, scratch + 8);
    const begin = Number(a.u64(scratch));
    const end = Number(a.u64(scratch + 8));
    const elements = shape.reduce((x, y) => x * y, 1);
    tensors.push({ index: i, name, dtype: DTYPE_NAMES[dtype], dtypeId: dtype, shape, begin, end, elements });
  }
  const metadata = {};
  m._safetensors_metadata_count(file, scratch);
  for (let i = 0, count = a.u32(scratch); i < count; ++i) {
    m._safetensors_metadata_at(file, i, scratch, 0, scratch + 4, 0);
    metadata[a.text(a.u32(scratch))] = a.text(a.u32(scratch + 4));
  }
  const warnings = [];
  m._safetensors_warning_count(file, scratch);
  for (let i = 0, count = a.u32(scratch); i < count; ++i) {
    m._safetensors_warning_at(file, i, scratch, 0, 0);
    warnings.push(a.text(a.u32(scratch)));
  }
  return { tensors, metadata, layout, warnings };
}

/** Parameters and bytes per dtype, and the largest name-prefix groups (before the last dot). */
export function summarize(tensors) {
  const byDtype = {};
  for (const t of tensors) {
    const row = (byDtype[t.dtype] ??= { tensors: 0, parameters: 0, bytes: 0 });
    row.tensors += 1;
    row.parameters += t.elements;
    row.bytes += t.end - t.begin;
  }
  const parameters = tensors.reduce((s, t) => s + t.elements, 0);
  const bytes = tensors.reduce((s, t) => s + (t.end - t.begin), 0);
  return { count: tensors.length, parameters, bytes, byDtype };
}

/**
 * The first `limit` values of tensor `t` as float32, decoded by the C++ codecs, reading only their
 * bytes. Returns { values: Float32Array, stats: {min, max, mean, std, nan} } or { error }.
 */
export async function preview(a, read, layout, t, limit = 4096) {
  const { m } = a;
  if (t.dtypeId === C64) return { error: 'C64 values are (real, imaginary) pairs: not decoded' };
  let count = Math.min(t.elements, limit);
  const bits = m._safetensors_dtype_bits(t.dtypeId);
  if (bits % 8 !== 0 && count < t.elements) count -= count % 4; // F4 / F6 elements in whole bytes
  const length = Math.ceil((count * bits) / 8);
  const bytes = await read(layout.dataStart + t.begin, length);
  const out = m._malloc(Math.max(count * 4, 4));
  try {
    const status = a.withBytes(bytes, (p) => m._safetensors_decode_f32(t.dtypeId, p, bytes.length, out, count));
    if (status !== 0) return { error: a.lastError(status).message };
    const values = new Float32Array(m.HEAPF32.buffer, out, count).slice();
    return { values, stats: stats(values) };
  } finally {
    m._free(out);
  }
}

function stats(values) {
  let min = Infinity; let max = -Infinity; let sum = 0; let sq = 0; let nan = 0; let n = 0;
  for (const v of values) {
    if (Number.isNaN(v)) { nan += 1; continue; }
    min = Math.min(min, v); max = Math.max(max, v); sum += v; sq += v * v; n += 1;
  }
  const mean = n ? sum / n : NaN;
  return { min, max, mean, std: n ? Math.sqrt(Math.max(sq / n - mean * mean, 0)) : NaN, nan };
}
