// SPDX-License-Identifier: Apache-2.0
// The inspector's logic, shared by the page (app.mjs) and its tests: files are judged by the
// safetensors-cxx core compiled to WebAssembly (scripts/web-build) through its C API, reading
// only what is needed through `read(offset, length) -> Promise<Uint8Array>` (File.slice in a
// browser): the first 512 bytes (length prefix and format sniffing), then the 8 + N header
// bytes, and a tensor's (or a slice's) bytes only when it is opened. No DOM here.

export const DTYPE_NAMES = ['BOOL', 'F4', 'F6_E2M3', 'F6_E3M2', 'U8', 'I8', 'F8_E5M2', 'F8_E4M3', 'F8_E8M0',
  'F8_E4M3FNUZ', 'F8_E5M2FNUZ', 'I16', 'U16', 'F16', 'BF16', 'I32', 'U32', 'F32', 'C64', 'F64', 'I64', 'U64'];
export const POLICIES = { reference: 0, strict: 1, lenient: 2 };
export const MLX_MODES = ['affine', 'mxfp4', 'mxfp8', 'nvfp4'];
const C64 = 18;
const SIZE_MAX_32 = 0xffffffff; // size_t is 32 bits in WebAssembly
const SNIFF_BYTES = 512;
/** Slices larger than this many values are refused (decoded floats live in the page's memory). */
export const MAX_SLICE_VALUES = 1 << 24;

/** Wraps the emscripten module `m` (await createSafetensors()). */
export function api(m) {
  const scratch = m._malloc(128); // out-parameters (safetensors_stats is the largest, 72 bytes)
  // Views are re-read from the module each time: memory growth replaces them. Out-parameters
  // are 4-byte aligned (uint64_t ones 8-byte aligned); no BigInt on this path, it is per tensor.
  const u32 = (p) => m.HEAPU32[p >>> 2];
  const u64 = (p) => m.HEAPU32[p >>> 2] + m.HEAPU32[(p >>> 2) + 1] * 4294967296; // exact below 2^53
  const f64 = (p) => m.getValue(p, 'double');
  const text = (p) => (p === 0 ? null : m.UTF8ToString(p));
  // Strings that may hold U+0000 (tensor names, and messages naming them) are read by length.
  const decoder = new TextDecoder();
  const bytesText = (p, length) => (p === 0 ? null : decoder.decode(m.HEAPU8.subarray(p, p + length)));
  const lastError = (status) => {
    const hasOffset = m._safetensors_last_error_offset(scratch);
    return {
      ok: false,
      code: text(m._safetensors_status_name(status)),
      message: bytesText(m._safetensors_last_error_message(), m._safetensors_last_error_message_length()),
      offset: hasOffset ? u64(scratch) : null,
      tensor: bytesText(m._safetensors_last_error_tensor(), m._safetensors_last_error_tensor_length()),
    };
  };
  /** Copies `bytes` into the module's memory for the duration of `fn(pointer)`. */
  const withBytes = (bytes, fn) => {
    const p = m._malloc(Math.max(bytes.length, 1));
    m.HEAPU8.set(bytes, p);
    try { return fn(p); } finally { m._free(p); }
  };
  const version = text(m._safetensors_version());
  return { m, scratch, u32, u64, f64, text, bytesText, lastError, withBytes, version };
}

function newOptions(a, policy) {
  a.m._safetensors_options_new(a.scratch);
  const options = a.u32(a.scratch);
  a.m._safetensors_options_set_policy(options, POLICIES[policy] ?? 0);
  return options;
}

/** The format's name from a file's first bytes (safetensors_sniff_format). */
export function sniff(a, prefix) {
  return a.text(a.withBytes(prefix, (p) => a.m._safetensors_sniff_format(p, prefix.length)));
}

/**
 * Judges a file of `size` bytes read through `read` under `policy` ("reference", "strict" or
 * "lenient") as `safetensors validate` does. Returns { verdict: {ok, code, message, offset,
 * tensor}, format, tensors, metadata, layout, warnings, mlx, head } where `head` holds the
 * header bytes a later view reopens (header-only: the data is never read here).
 */
export async function inspect(a, read, size, policy = 'reference') {
  const { m, scratch } = a;
  const empty = { tensors: [], metadata: new Map(), layout: null, warnings: [], mlx: [], head: null };
  const options = newOptions(a, policy);
  try {
    const prefix = await read(0, Math.min(SNIFF_BYTES, size));
    const format = sniff(a, prefix);
    const fileSize = BigInt(size);
    // The whole prefix, not only the length: the core words a framing error from it ("this is
    // a GGUF file, not SafeTensors", "file is truncated: ...") as it does for the CLI.
    let status = a.withBytes(prefix, (p) => m._safetensors_header_length(p, prefix.length, fileSize, options, scratch));
    if (status !== 0) return { ...empty, format, verdict: a.lastError(status) };
    const n = a.u64(scratch);
    const head = 8 + n <= prefix.length ? prefix.slice(0, 8 + n) : await read(0, 8 + n);
    status = a.withBytes(head, (p) => m._safetensors_open_header(p, head.length, fileSize, options, scratch));
    if (status !== 0) return { ...empty, format, verdict: a.lastError(status) };
    const file = a.u32(scratch);
    try {
      const verdict = { ok: true, code: 'ok', message: null, offset: null, tensor: null };
      return { verdict, format, ...describe(a, file, size), head };
    } finally {
      m._safetensors_close(file);
    }
  } finally {
    m._safetensors_options_free(options);
  }
}

/** Runs `fn(handle)` on a header-only handle reopened from a result's `head`. */
function withHeader(a, result, policy, fn) {
  const { m, scratch } = a;
  const options = newOptions(a, policy);
  try {
    return a.withBytes(result.head, (p) => {
      const status = m._safetensors_open_header(p, result.head.length, BigInt(result.size), options, scratch);
      if (status !== 0) throw new Error(a.lastError(status).message);
      const file = a.u32(scratch);
      try { return fn(file); } finally { m._safetensors_close(file); }
    });
  } finally {
    m._safetensors_options_free(options);
  }
}

/** The largest power of two dividing `x` (capped at 4096; 4096 for 0). */
function alignmentOf(x) {
  let align = 1;
  while (align < 4096 && x % (align * 2) === 0) align *= 2;
  return align;
}

/** Everything a header-only handle tells: tensors, metadata, layout, warnings, MLX layers. */
function describe(a, file, size) {
  const { m, scratch } = a;
  m._safetensors_file_layout(file, scratch, scratch + 8, scratch + 16, 0);
  const layout = { headerLength: a.u64(scratch), dataStart: a.u64(scratch + 8), dataSize: a.u64(scratch + 16), fileSize: size };
  m._safetensors_tensor_count(file, scratch);
  const tensors = [];
  const decoder = new TextDecoder();
  for (let i = 0, count = a.u32(scratch); i < count; ++i) {
    m._safetensors_tensor_name(file, i, scratch, scratch + 4);
    const name = decoder.decode(m.HEAPU8.subarray(a.u32(scratch), a.u32(scratch) + a.u32(scratch + 4)));
    m._safetensors_tensor_dtype(file, i, scratch);
    const dtypeId = m.getValue(scratch, 'i32');
    m._safetensors_tensor_shape(file, i, scratch, scratch + 4);
    const dims = a.u32(scratch);
    const shape = [];
    for (let d = 0, rank = a.u32(scratch + 4); d < rank; ++d) shape.push(a.u64(dims + 8 * d));
    m._safetensors_tensor_offsets(file, i, scratch, scratch + 8);
    const begin = a.u64(scratch);
    const end = a.u64(scratch + 8);
    const elements = shape.reduce((x, y) => x * y, 1); // safetensors_tensor_element_count's, one call fewer
    const align = alignmentOf(layout.dataStart + begin);
    tensors.push({ index: i, name, dtype: DTYPE_NAMES[dtypeId], dtypeId, shape, begin, end, bytes: end - begin, elements, align });
  }
  const metadata = new Map(); // a plain object would drop a `__proto__` key
  m._safetensors_metadata_count(file, scratch);
  for (let i = 0, count = a.u32(scratch); i < count; ++i) {
    m._safetensors_metadata_at(file, i, scratch, scratch + 4, scratch + 8, scratch + 12);
    metadata.set(a.bytesText(a.u32(scratch), a.u32(scratch + 4)), a.bytesText(a.u32(scratch + 8), a.u32(scratch + 12)));
  }
  const warnings = [];
  m._safetensors_warning_count(file, scratch);
  for (let i = 0, count = a.u32(scratch); i < count; ++i) {
    m._safetensors_warning_at(file, i, scratch, scratch + 4, scratch + 8);
    const hasOffset = m.getValue(scratch + 4, 'i32');
    warnings.push(`${a.text(a.u32(scratch))}${hasOffset ? ` (at byte ${a.u64(scratch + 8)})` : ''}`);
  }
  return { tensors, metadata, layout, warnings, mlx: mlxLayers(a, file, tensors), size };
}

/** The MLX quantized layers (safetensors_mlx_describe); an explanation instead when they do not fit. */
function mlxLayers(a, file, tensors) {
  const { m, scratch } = a;
  const status = m._safetensors_mlx_describe(file, scratch);
  if (status !== 0) return { error: a.lastError(status), layers: [] };
  const handle = a.u32(scratch);
  const layers = [];
  try {
    m._safetensors_mlx_layer_count(handle, scratch);
    const info = m._malloc(64);
    try {
      for (let i = 0, count = a.u32(scratch); i < count; ++i) {
        m._safetensors_mlx_layer_at(handle, i, info);
        // struct safetensors_mlx_layer in wasm32: 4-byte pointers and size_t, 8-aligned uint64_t.
        const biases = a.u32(info + 12);
        layers.push({
          index: i, path: a.text(a.u32(info)), weight: tensors[a.u32(info + 4)], scales: tensors[a.u32(info + 8)],
          biases: biases === SIZE_MAX_32 ? null : tensors[biases], mode: MLX_MODES[m.getValue(info + 16, 'i32')],
          bits: a.u32(info + 20), groupSize: a.u32(info + 24), scaleDtype: DTYPE_NAMES[m.getValue(info + 28, 'i32')],
          rows: a.u64(info + 32), cols: a.u64(info + 40), ambiguous: m.getValue(info + 48, 'i32') !== 0,
        });
      }
    } finally { m._free(info); }
  } finally { m._safetensors_mlx_free(handle); }
  return { error: null, layers };
}

/** The layer a tensor belongs to: its name up to the first numeric part ("model.layers.3"), else its module. */
export function layerOf(name) {
  const parts = name.split('.');
  const i = parts.findIndex((p) => /^\d+$/.test(p));
  if (i >= 0) return parts.slice(0, i + 1).join('.');
  return parts.length > 1 ? parts.slice(0, -1).join('.') : name;
}

/** `inspect`'s summary: counts, parameters and bytes per dtype and per layer, alignment. */
export function summarize(tensors) {
  const byDtype = {};
  const byLayer = new Map();
  let parameters = 0; let bytes = 0; let minAlign = 4096; let elementAligned = true;
  for (const t of tensors) {
    const row = (byDtype[t.dtype] ??= { tensors: 0, parameters: 0, bytes: 0 });
    row.tensors += 1; row.parameters += t.elements; row.bytes += t.bytes;
    const layer = layerOf(t.name);
    const l = byLayer.get(layer) ?? { layer, tensors: 0, parameters: 0, bytes: 0 };
    l.tensors += 1; l.parameters += t.elements; l.bytes += t.bytes;
    byLayer.set(layer, l);
    parameters += t.elements; bytes += t.bytes;
    if (t.bytes > 0) {
      minAlign = Math.min(minAlign, t.align);
      const elementBytes = Math.max(1, Math.ceil(t.bytes / Math.max(t.elements, 1)));
      if (t.align < Math.min(elementBytes, 8)) elementAligned = false;
    }
  }
  // The dtypes in the CLI's order (`safetensors inspect`: the dtype enumeration's; for a described
  // file, GGUF's "Q8_0" among them, the names' byte order, as its type totals are printed).
  const described = tensors.length > 0 && tensors.every((t) => t.described);
  const order = described ? ([x], [y]) => (x < y ? -1 : x > y ? 1 : 0) : ([x], [y]) => DTYPE_NAMES.indexOf(x) - DTYPE_NAMES.indexOf(y);
  const ordered = Object.fromEntries(Object.entries(byDtype).sort(order));
  return { count: tensors.length, parameters, bytes, byDtype: ordered, byLayer: [...byLayer.values()], minAlign, elementAligned };
}

/** A count as the Hub shows a model's size, three significant digits: 9408 -> "9.41K", 7241732096 -> "7.24B". */
export function compactCount(n) {
  const units = ['', 'K', 'M', 'B', 'T'];
  let i = 0; let v = n;
  while (i < units.length - 1 && Number(v.toPrecision(3)) >= 1000) { v /= 1000; i += 1; }
  return i === 0 ? String(n) : `${Number(v.toPrecision(3))}${units[i]}`;
}

/** A tree of the names split at dots, with parameter and byte totals per node. */
export function tree(tensors) {
  const root = { name: '', path: '', children: new Map(), parameters: 0, bytes: 0, tensors: 0, tensor: null };
  for (const t of tensors) {
    let node = root;
    node.parameters += t.elements; node.bytes += t.bytes; node.tensors += 1;
    for (const part of t.name.split('.')) {
      let child = node.children.get(part);
      if (!child) {
        const path = node.path ? `${node.path}.${part}` : part;
        node.children.set(part, (child = { name: part, path, children: new Map(), parameters: 0, bytes: 0, tensors: 0, tensor: null }));
      }
      child.parameters += t.elements; child.bytes += t.bytes; child.tensors += 1;
      node = child;
    }
    node.tensor = t;
  }
  return root;
}

/**
 * A slice spec that shows at most `limit` values: leading axes at 0, then a range. For F4 / F6
 * (`bits` not a multiple of 8) the range ends on a whole byte where it can: a slice must.
 */
export function defaultSpec(shape, limit = 4096, bits = 8) {
  let keep = 1; let d = shape.length;
  while (d > 0 && keep * shape[d - 1] <= limit) keep *= shape[--d];
  if (d === 0) return '';
  let rows = Math.max(1, Math.floor(limit / keep));
  if (bits % 8 !== 0) while (rows > 1 && (rows * keep) % 4 !== 0) rows -= 1;
  const parts = [];
  for (let i = 0; i < d - 1; ++i) parts.push('0');
  parts.push(`0:${rows}`);
  return parts.join(', ');
}

/**
 * Values of a numpy-style slice `spec` of tensor `t` of `result`, planned by the core on the
 * header, read range by range through `read`, decoded to float32 by the C++ codecs. Returns
 * { values: Float32Array, shape, stats, bytesRead } or { error }.
 */
export async function sliceValues(a, read, result, t, spec, policy = 'reference') {
  const { m, scratch } = a;
  if (t.dtypeId === C64) return { error: { message: 'C64 values are (real, imaginary) pairs: not decoded to one float each' } };
  let plan;
  try {
    plan = withHeader(a, result, policy, (file) => {
      const status = a.withBytes(new TextEncoder().encode(`${spec}\0`), (p) => m._safetensors_slice_new(file, t.index, p, scratch));
      if (status !== 0) return { error: a.lastError(status) };
      const slice = a.u32(scratch);
      try {
        m._safetensors_slice_shape(slice, scratch, scratch + 4);
        const shape = [];
        for (let d = 0, dims = a.u32(scratch), rank = a.u32(scratch + 4); d < rank; ++d) shape.push(a.u64(dims + 8 * d));
        m._safetensors_slice_element_count(slice, scratch);
        const count = a.u64(scratch);
        m._safetensors_slice_range_count(slice, scratch);
        const rangeCount = a.u32(scratch);
        if (count > MAX_SLICE_VALUES) return { error: { message: `${count.toLocaleString('en-US')} values: narrow the slice to at most ${MAX_SLICE_VALUES.toLocaleString('en-US')}` } };
        const ranges = [];
        for (let i = 0; i < rangeCount; ++i) {
          m._safetensors_slice_range_at(slice, i, scratch, scratch + 8);
          ranges.push([a.u64(scratch), a.u64(scratch + 8)]);
        }
        return { shape, count, ranges };
      } finally { m._safetensors_slice_free(slice); }
    });
  } catch (e) { return { error: { message: e.message } }; }
  if (plan.error) return { error: plan.error };
  const bytes = await gather(read, plan.ranges);
  return decode(a, t.dtypeId, bytes, plan.count, plan.shape);
}

/**
 * A described tensor whose bytes are plain (t.data: { offset, length, dtype }) as a one-tensor
 * SafeTensors file: its header made here, its data read from the described file's range, so
 * sliceValues slices, decodes and summarizes it as it does a SafeTensors tensor.
 */
export function plainTensor(t, read) {
  const json = JSON.stringify({ t: { dtype: t.data.dtype, shape: t.shape, data_offsets: [0, t.data.length] } });
  const text = json.padEnd(Math.ceil(json.length / 8) * 8);
  const head = new Uint8Array(8 + text.length);
  new DataView(head.buffer).setBigUint64(0, BigInt(text.length), true);
  head.set(new TextEncoder().encode(text), 8);
  return {
    result: { head, size: head.length + t.data.length },
    tensor: { index: 0, dtypeId: DTYPE_NAMES.indexOf(t.data.dtype) },
    read: (offset, length) => read(t.data.offset + offset - head.length, length),
  };
}

/** The ranges' bytes back to back: one read of their span when it is at most twice their size, else one read each. */
async function gather(read, ranges) {
  const total = ranges.reduce((s, [, n]) => s + n, 0);
  const out = new Uint8Array(total);
  if (ranges.length === 0) return out;
  const lo = Math.min(...ranges.map(([o]) => o));
  const hi = Math.max(...ranges.map(([o, n]) => o + n));
  if (hi - lo <= 2 * total + 4096) {
    const span = await read(lo, hi - lo);
    let at = 0;
    for (const [o, n] of ranges) { out.set(span.subarray(o - lo, o - lo + n), at); at += n; }
  } else {
    let at = 0;
    for (const [o, n] of ranges) { out.set(await read(o, n), at); at += n; }
  }
  return out;
}

function decode(a, dtypeId, bytes, count, shape) {
  const { m } = a;
  const out = m._malloc(Math.max(count * 4, 4));
  try {
    const status = a.withBytes(bytes, (p) => m._safetensors_decode_f32(dtypeId, p, bytes.length, out, count));
    if (status !== 0) return { error: a.lastError(status) };
    return finish(a, out, count, shape, bytes.length);
  } finally { m._free(out); }
}

/** Copies `count` floats at `p` out of the module and adds their statistics (safetensors_stats_f32). */
function finish(a, p, count, shape, bytesRead) {
  const { m, scratch } = a;
  const values = new Float32Array(m.HEAPF32.buffer, p, count).slice();
  m._safetensors_stats_f32(p, count, scratch);
  const stats = { count: a.u64(scratch), nan: a.u64(scratch + 8), posInf: a.u64(scratch + 16), negInf: a.u64(scratch + 24),
    zeros: a.u64(scratch + 32), min: a.f64(scratch + 40), max: a.f64(scratch + 48), mean: a.f64(scratch + 56),
    std: a.f64(scratch + 64) };
  return { values, shape, stats, bytesRead };
}

/**
 * Rows `spec` ("a:b" or "r" over the layer's rows, its weight's leading axes flattened) of an MLX
 * quantized layer, dequantized by the C++ kernels from the three tensors' bytes of those rows.
 */
export async function mlxRows(a, read, result, layer, spec, policy = 'reference') {
  const { m, scratch } = a;
  const match = /^\s*(-?\d*)\s*(?::\s*(-?\d*)\s*)?$/.exec(spec);
  if (!match) return { error: { message: `rows '${spec}': give "start:stop" or one row` } };
  const at = (text, fallback) => {
    if (text === undefined || text === '') return fallback;
    const v = Number(text);
    return Math.min(Math.max(v < 0 ? layer.rows + v : v, 0), layer.rows);
  };
  const first = at(match[1], 0);
  const stop = match[2] === undefined && match[1] !== '' ? first + 1 : at(match[2], layer.rows);
  const rows = Math.max(stop - first, 0);
  if (rows * layer.cols > MAX_SLICE_VALUES) return { error: { message: `${rows} rows of ${layer.cols} values: narrow the rows` } };
  const part = async (t) => {
    if (!t) return new Uint8Array(0);
    const perRow = t.bytes / layer.rows;
    return read(result.layout.dataStart + t.begin + first * perRow, rows * perRow);
  };
  const [w, s, b] = [await part(layer.weight), await part(layer.scales), await part(layer.biases)];
  let handle;
  try {
    handle = withHeader(a, result, policy, (file) => {
      const status = m._safetensors_mlx_describe(file, scratch);
      if (status !== 0) throw new Error(a.lastError(status).message);
      return a.u32(scratch);
    });
  } catch (e) { return { error: { message: e.message } }; }
  const count = rows * layer.cols;
  const out = m._malloc(Math.max(count * 4, 4));
  const [pw, ps, pb] = [w, s, b].map((bytes) => { const p = m._malloc(Math.max(bytes.length, 1)); m.HEAPU8.set(bytes, p); return p; });
  try {
    const status = m._safetensors_mlx_dequantize_f32(handle, layer.index, BigInt(first), BigInt(rows), pw, w.length,
      ps, s.length, b.length ? pb : 0, b.length, out, count);
    if (status !== 0) return { error: a.lastError(status) };
    return { ...finish(a, out, count, [rows, layer.cols], w.length + s.length + b.length), first };
  } finally {
    [pw, ps, pb, out].forEach((p) => m._free(p));
    m._safetensors_mlx_free(handle);
  }
}

/** A value histogram over the finite values: `bins` counts between min and max. */
export function histogram(values, stats, bins = 40) {
  const counts = new Array(bins).fill(0);
  const { min, max } = stats;
  if (!Number.isFinite(min) || !Number.isFinite(max)) return { counts, min, max };
  const width = max > min ? (max - min) / bins : 1;
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    counts[Math.min(bins - 1, Math.floor((v - min) / width))] += 1;
  }
  return { counts, min, max };
}

/**
 * Several files as one checkpoint: the valid shards' tensors together, and what does not fit:
 * a name in two shards; with an index (`{"weight_map": {tensor: shard}}` text), a tensor the
 * index names but its shard lacks or that the index places elsewhere, and a missing shard.
 */
export function combine(entries, indexText = null, indexName = 'model.safetensors.index.json') {
  const problems = [];
  const seen = new Map();
  const tensors = [];
  for (const e of entries) {
    if (!e.result?.verdict.ok) continue;
    for (const t of e.result.tensors) {
      if (seen.has(t.name)) problems.push(`tensor '${t.name}' is in both ${seen.get(t.name)} and ${e.name}`);
      else seen.set(t.name, e.name);
      t.shard = e.name; // the entry's own tensors, marked with their file: no copies of big headers
      t.entry = e;
      tensors.push(t);
    }
  }
  let index = null;
  if (indexText !== null) {
    try {
      index = JSON.parse(indexText);
      if (typeof index?.weight_map !== 'object' || index.weight_map === null) throw new Error('no "weight_map" object');
    } catch (err) {
      problems.push(`${indexName}: not a checkpoint index: ${err.message}`);
      index = null;
    }
  }
  if (index) {
    const byName = new Map(entries.map((e) => [e.name, e]));
    const missingShards = new Set();
    for (const [name, shard] of Object.entries(index.weight_map)) {
      if (!byName.has(shard)) { missingShards.add(shard); continue; }
      const where = seen.get(name);
      if (where === undefined) problems.push(`${indexName}: tensor '${name}' is not in ${shard}`);
      else if (where !== shard) problems.push(`${indexName}: tensor '${name}' is in ${where}, the index says ${shard}`);
    }
    for (const shard of missingShards) problems.push(`${indexName}: shard ${shard} was not opened`);
    for (const [name, shard] of seen) {
      if (!(name in index.weight_map)) problems.push(`${indexName}: tensor '${name}' of ${shard} is not in the index`);
    }
  }
  return { tensors, problems, index };
}

// ---- Other formats: GGUF, NumPy, PyTorch, described by the format table -----------------------
// The page's module (safetensors_c.js: the core with the formats' readers) describes a file as
// `safetensors inspect` does (safetensors_describe: the same rows, the same words). Its readers
// read synchronously, by pread, minizip's fread and, for a legacy PyTorch pickle, mmap;
// File.slice answers asynchronously. So the file is a node of the module's file system whose
// reads are served from the byte ranges fetched so far: a read of a range not yet fetched fails
// (EIO) and is noted, describing stops, the range is fetched (growing each round) and the
// description starts again. A few rounds: never the whole file, except a legacy pickle (mapped
// whole by its reader, as for the CLI).

/** The formats the module describes besides SafeTensors (safetensors_sniff_format's names). */
export const DESCRIBED_FORMATS = new Set(['GGUF', 'PyTorch (zip)', 'pickle', 'NumPy .npz', 'NumPy .npy']);
/** The most rounds (a read of a range not yet fetched ends one). */
export const MAX_DESCRIBE_ROUNDS = 4096;
/** The most bytes read whole for a mapping (a legacy pickle); larger: refused. */
export const MAX_MAPPED_BYTES = 256 * 1024 * 1024;
const FIRST_FETCH = 64 * 1024;
const LARGEST_FETCH = 16 * 1024 * 1024;
const JUMP_FETCH = 4096;
const EIO = 29; // WASI's errno numbers, emscripten's
const ENOMEM = 48;

/** The byte ranges of one file fetched so far, merged, and the first range a read missed. */
class FetchedRanges {
  constructor(size) { this.size = size; this.spans = []; this.missing = null; this.tooLarge = null; }
  /** The bytes [start, end), or null (noting the range as missing). */
  get(start, end) {
    for (const s of this.spans) {
      if (s.start <= start && end <= s.start + s.bytes.length) return s.bytes.subarray(start - s.start, end - s.start);
    }
    this.missing ??= { start, end };
    return null;
  }
  add(start, bytes) {
    let lo = start; let hi = start + bytes.length; let pieces = [{ start, bytes }];
    const kept = [];
    for (const s of this.spans) {
      if (s.start + s.bytes.length < lo || s.start > hi) { kept.push(s); continue; }
      pieces.push(s); lo = Math.min(lo, s.start); hi = Math.max(hi, s.start + s.bytes.length);
    }
    const merged = new Uint8Array(hi - lo);
    for (const p of pieces.sort((x, y) => x.bytes.length - y.bytes.length)) merged.set(p.bytes, p.start - lo);
    pieces = null;
    kept.push({ start: lo, bytes: merged });
    this.spans = kept.sort((x, y) => x.start - y.start);
  }
}

/** Makes `path` in the module's file system a file of `ranges.size` bytes read from `ranges`. */
function rangeFile(m, path, ranges) {
  const slash = path.lastIndexOf('/');
  const node = m.FS.createFile(path.slice(0, slash), path.slice(slash + 1), {}, true, false);
  node.contents = null;
  node.usedBytes = ranges.size; // what stat reports (MEMFS's getattr)
  const read = (stream, buffer, offset, length, position) => {
    const end = Math.min(ranges.size, position + length);
    if (position >= end) return 0;
    const bytes = ranges.get(position, end);
    if (!bytes) throw new m.FS.ErrnoError(EIO);
    buffer.set(bytes, offset);
    return bytes.length;
  };
  const mmap = (stream, address, length, position) => {
    if (length > MAX_MAPPED_BYTES) { ranges.tooLarge = length; throw new m.FS.ErrnoError(ENOMEM); }
    const bytes = ranges.get(position, Math.min(ranges.size, position + length));
    if (!bytes) throw new m.FS.ErrnoError(EIO);
    const ptr = m._malloc(Math.max(length, 1)); // freed by munmap (emscripten's builtin free)
    if (!ptr) throw new m.FS.ErrnoError(ENOMEM);
    m.HEAPU8.fill(0, ptr, ptr + length);
    m.HEAPU8.set(bytes, ptr);
    return { ptr, allocated: true };
  };
  node.stream_ops = { ...node.stream_ops, read, mmap, msync: () => 0 };
  return node;
}

let describeCount = 0;

/**
 * Describes a file of `size` bytes named `name` read through `read`, with the module's
 * api `fa`: { ok: true, id, format, extraTitle, tensors, metadata, notes, refusal, rounds } where
 * tensors are { name, type, shape, bytes, elements, extra, data, noData } in file order (data: where
 * plain bytes lie, { offset, length, dtype }, else null and noData says why) and refusal is null or
 * { code, message } (a pickle that would run code); or { ok: false, code, message, ... } when it
 * is not described (the format's error, as the CLI's).
 */
export async function describeFile(fa, read, size, name) {
  const { m, scratch } = fa;
  const ranges = new FetchedRanges(size);
  // The first and the last bytes at once: a zip's central directory is at its end.
  ranges.add(0, await read(0, Math.min(size, FIRST_FETCH)));
  if (size > FIRST_FETCH) ranges.add(size - FIRST_FETCH, await read(size - FIRST_FETCH, FIRST_FETCH));
  const folder = `/describe-${++describeCount}`;
  m.FS.mkdir(folder);
  const path = `${folder}/${name.replaceAll('/', '_') || 'file'}`;
  rangeFile(m, path, ranges);
  let fetch = FIRST_FETCH / 2;
  try {
    for (let round = 1; round <= MAX_DESCRIBE_ROUNDS; ++round) {
      ranges.missing = null;
      const pathBytes = new TextEncoder().encode(`${path}\0`);
      const status = fa.withBytes(pathBytes, (p) => m._safetensors_describe(p, scratch));
      if (status === 0) {
        const d = fa.u32(scratch);
        try { return { ...readDescription(fa, d, path, name), rounds: round }; } finally { m._safetensors_description_free(d); }
      }
      if (ranges.tooLarge !== null) {
        return { ok: false, code: 'LimitExceeded', message: `the browser reads a legacy PyTorch pickle whole, at most ${MAX_MAPPED_BYTES} bytes; this one has ${ranges.tooLarge} (safetensors inspect reads it)`, offset: null, tensor: null };
      }
      if (!ranges.missing) {
        const e = fa.lastError(status);
        return { ...e, message: e.message?.replaceAll(path, name) ?? null };
      }
      // The missing range and more after it: a reader reading on (a GGUF's metadata, a pickle)
      // gets twice as much each round; one jumping (a zip's record headers) a page.
      const start = ranges.missing.start;
      fetch = ranges.spans.some((s) => s.start + s.bytes.length === start) ? Math.min(LARGEST_FETCH, fetch * 2) : JUMP_FETCH;
      const end = Math.min(size, Math.max(ranges.missing.end, start + fetch));
      ranges.add(start, await read(start, end - start));
    }
    return { ok: false, code: 'IoError', message: `described in no more than ${MAX_DESCRIBE_ROUNDS} rounds of reads`, offset: null, tensor: null };
  } finally {
    m.FS.unlink(path);
    m.FS.rmdir(folder);
  }
}

/** The description `d` of the file at `path`, messages naming it `name` as the page does. */
function readDescription(fa, d, path, name) {
  const { m, scratch } = fa;
  m._safetensors_description_format(d, scratch, scratch + 4, scratch + 8);
  const out = { ok: true, id: fa.text(fa.u32(scratch)), format: fa.text(fa.u32(scratch + 4)), extraTitle: fa.text(fa.u32(scratch + 8)), tensors: [], metadata: [], notes: [] };
  for (let i = 0, count = m._safetensors_description_tensor_count(d); i < count; ++i) {
    // name, dtype, dims, rank, bytes, elements, extra: seven out-parameters, the 64-bit ones 8-aligned
    m._safetensors_description_tensor(d, i, scratch, scratch + 4, scratch + 8, scratch + 12, scratch + 16, scratch + 24, scratch + 32);
    const dims = fa.u32(scratch + 8);
    const shape = [];
    for (let k = 0, rank = fa.u32(scratch + 12); k < rank; ++k) shape.push(fa.u64(dims + 8 * k));
    const row = { name: fa.text(fa.u32(scratch)), type: fa.text(fa.u32(scratch + 4)), shape, bytes: fa.u64(scratch + 16), elements: fa.u64(scratch + 24), extra: fa.text(fa.u32(scratch + 32)), data: null, noData: null };
    // Where its bytes lie when they are SafeTensors bytes as stored (offset, length, dtype), else why not.
    const status = m._safetensors_description_tensor_data(d, i, scratch, scratch + 8, scratch + 16);
    if (status === 0) row.data = { offset: fa.u64(scratch), length: fa.u64(scratch + 8), dtype: fa.text(fa.u32(scratch + 16)) };
    else row.noData = fa.lastError(status).message;
    out.tensors.push(row);
  }
  for (let i = 0, count = m._safetensors_description_metadata_count(d); i < count; ++i) {
    m._safetensors_description_metadata(d, i, scratch, scratch + 4);
    out.metadata.push([fa.text(fa.u32(scratch)), fa.text(fa.u32(scratch + 4))]);
  }
  for (let i = 0, count = m._safetensors_description_note_count(d); i < count; ++i) {
    m._safetensors_description_note(d, i, scratch);
    out.notes.push(fa.text(fa.u32(scratch)));
  }
  // The refusal's one line is "PATH: MESSAGE (at byte N)" (error::to_string): the page shows the
  // message and the offset apart, as for any verdict, and the CLI prints the message.
  const status = m._safetensors_description_refusal(d, scratch);
  out.refusal = null;
  if (status !== 0) {
    const line = fa.text(fa.u32(scratch)).replace(`${path}: `, '').replaceAll(path, name);
    const where = / \(at byte (\d+)\)$/.exec(line);
    out.refusal = { code: fa.text(m._safetensors_status_name(status)), message: where ? line.slice(0, where.index) : line, offset: where ? Number(where[1]) : null };
  }
  return out;
}

/**
 * A described file as inspect()'s result, for the page's views: its rows as tensors (their
 * format's type, "Q8_0", as the dtype; the table's last column as `extra`), the description
 * itself as `described`. A pickle that would run code is not valid: its verdict is the refusal.
 */
export function describedResult(d, size) {
  const empty = { tensors: [], metadata: new Map(), layout: null, warnings: [], mlx: [], head: null, size };
  if (!d.ok) return { ...empty, verdict: d };
  const verdict = d.refusal
    ? { ok: false, code: d.refusal.code, message: d.refusal.message, offset: d.refusal.offset, tensor: null }
    : { ok: true, code: 'ok', message: null, offset: null, tensor: null };
  const tensors = d.tensors.map((t, index) => ({
    index, name: t.name, dtype: t.type, dtypeId: DTYPE_NAMES.indexOf(t.type), shape: t.shape, begin: index, end: index,
    bytes: t.bytes, elements: t.elements, align: 4096, extra: t.extra, described: true, data: t.data, noData: t.noData,
  }));
  return { ...empty, verdict, format: d.format, described: d, tensors, metadata: new Map(d.metadata) };
}
