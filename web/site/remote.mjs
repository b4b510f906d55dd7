// SPDX-License-Identifier: Apache-2.0
// Files by URL for the inspector, read by HTTP Range requests as the CLI's remote reader reads
// them (src/remote/http_source.cpp): the first request asks for a speculative head of 100,000
// bytes, which holds the header of most files (judged in one request, two at most); later reads
// ask for exactly their bytes. What a browser refuses (CORS) or a server lacks (Range) is said
// in words. No DOM here.

/** The first request's bytes: the CLI's default_speculative_header_bytes. */
export const HEAD_BYTES = 100000;
/** An index (`*.index.json`) larger than this is refused. */
export const MAX_INDEX_BYTES = 64 << 20;

export class RemoteError extends Error {}

const CORS_WORDS = 'the browser refused it or the server cannot be reached. A server on another site must allow this page '
  + 'to read it (CORS: Access-Control-Allow-Origin, and Access-Control-Expose-Headers: Content-Range)';

/** `fetch` with the failure worded: a network or CORS refusal looks the same to a page. */
async function request(url, init, fetchImpl) {
  try {
    return await fetchImpl(url, { credentials: 'omit', cache: 'no-store', ...init });
  } catch (e) {
    if (e?.name === 'AbortError') throw e;
    throw new RemoteError(`cannot read ${url}: ${CORS_WORDS}`);
  }
}

/** The file size of a Content-Range value ("bytes 0-99/1234"; "bytes * / 0" for an empty file, without the spaces), else null. */
function contentRangeTotal(value) {
  const m = /^bytes (?:\d+-\d+|\*)\/(\d+)$/i.exec(value?.trim() ?? '');
  return m ? Number(m[1]) : null;
}

/** At most `limit` + 1 bytes of a response's body; the transfer is stopped there. */
async function bodyUpTo(response, limit, controller) {
  const chunks = [];
  let received = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    received += value.length;
    if (received > limit) { controller.abort(); break; }
  }
  const out = new Uint8Array(received);
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.length; }
  return out;
}

/**
 * Opens the file at `url`: { name, size, url, read(offset, length), stats: {requests, bytes} },
 * or throws a RemoteError saying why not (CORS, no Range support, an HTTP status).
 */
export async function openUrl(url, { fetch: fetchImpl = globalThis.fetch.bind(globalThis), headBytes = HEAD_BYTES } = {}) {
  const stats = { requests: 0, bytes: 0 };
  const last = new URL(url).pathname.split('/').pop();
  let name = last || url;
  try { name = decodeURIComponent(name); } catch { /* shown as it is */ }
  const controller = new AbortController();
  stats.requests += 1;
  const first = await request(url, { headers: { Range: `bytes=0-${headBytes - 1}` }, signal: controller.signal }, fetchImpl);
  let size;
  let head;
  if (first.status === 206) {
    size = contentRangeTotal(first.headers.get('content-range'));
    if (size === null) {
      throw new RemoteError(`${url}: the partial response (206) gives no file size in Content-Range (a server on another site `
        + 'must also name it in Access-Control-Expose-Headers)');
    }
    head = new Uint8Array(await first.arrayBuffer());
  } else if (first.status === 200) {
    // The server ignores Range: a file that fits in the head arrived whole; a larger one would
    // be downloaded whole for every read, so the transfer stops after the head (as the CLI).
    const length = first.headers.get('content-length');
    try {
      head = await bodyUpTo(first, headBytes, controller);
    } catch (e) {
      if (e?.name !== 'AbortError') throw new RemoteError(`cannot read ${url}: ${e.message}`);
      head = new Uint8Array(headBytes + 1);
    }
    if (head.length > headBytes) {
      throw new RemoteError(`${url}: the server ignores Range requests (it answered 200 with the whole file`
        + `${length ? ` of ${Number(length).toLocaleString('en-US')} bytes` : ''}); reading by URL needs Range support, `
        + `so the transfer was stopped after ${head.length.toLocaleString('en-US')} bytes`);
    }
    size = head.length;
  } else if (first.status === 416 && contentRangeTotal(first.headers.get('content-range')) === 0) {
    size = 0; head = new Uint8Array(0); // an empty file satisfies no range
  } else {
    throw new RemoteError(`${url}: HTTP ${first.status}${first.statusText ? ` ${first.statusText}` : ''} for bytes 0-${headBytes - 1}`);
  }
  stats.bytes += head.length;
  const read = async (offset, length) => {
    const end = Math.min(offset + length, size);
    if (end <= head.length) return head.subarray(offset, end);
    stats.requests += 1;
    const r = await request(url, { headers: { Range: `bytes=${offset}-${end - 1}` } }, fetchImpl);
    if (r.status !== 206 || contentRangeTotal(r.headers.get('content-range')) !== size) {
      throw new RemoteError(`${url}: bytes ${offset}-${end - 1}: the server answered HTTP ${r.status}, not the range of `
        + `the file of ${size} bytes it was opened as (did it change?)`);
    }
    const bytes = new Uint8Array(await r.arrayBuffer());
    if (bytes.length !== end - offset) throw new RemoteError(`${url}: bytes ${offset}-${end - 1}: ${bytes.length} bytes received`);
    stats.bytes += bytes.length;
    return bytes;
  };
  return { name, size, url, read, stats };
}

/** A checkpoint index's text by URL (a whole GET: it is small), or a RemoteError. */
export async function fetchIndex(url, { fetch: fetchImpl = globalThis.fetch.bind(globalThis) } = {}) {
  const r = await request(url, {}, fetchImpl);
  if (!r.ok) throw new RemoteError(`${url}: HTTP ${r.status}${r.statusText ? ` ${r.statusText}` : ''}`);
  const length = Number(r.headers.get('content-length') ?? 0);
  if (length > MAX_INDEX_BYTES) throw new RemoteError(`${url}: an index of ${length} bytes (the limit is ${MAX_INDEX_BYTES})`);
  return r.text();
}

/** The shards an index names, as URLs beside it, in order of first mention. */
export function shardUrls(indexText, indexUrl) {
  const map = JSON.parse(indexText)?.weight_map;
  if (typeof map !== 'object' || map === null) throw new RemoteError(`${indexUrl}: not a checkpoint index: no "weight_map" object`);
  const origin = new URL(indexUrl).origin;
  return [...new Set(Object.values(map))].map((shard) => {
    const url = new URL(String(shard), indexUrl);
    if (url.origin !== origin) throw new RemoteError(`${indexUrl}: shard ${shard} is on another site: refused`);
    return url.href;
  });
}
