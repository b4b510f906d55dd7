// SPDX-License-Identifier: Apache-2.0
// The web inspector (web/site, built by scripts/web-build into build-wasm/site) in headless
// Chromium, driven by puppeteer-core (web/test/package.json, installed into build-web-test/ by
// scripts/test-web; Debian's chromium, no browser download). Checks:
// - every file of the conformance corpus, opened together in the page, gets the verdict of
//   `safetensors validate --json` (code, message, offset, tensor, warnings) under each policy;
//   GGUF, .npz, .npy, PyTorch zip and legacy files are listed as `safetensors inspect` describes
//   them (format line, notes, rows), a pickle that would run code refused with its notes;
// - a 2 GB (sparse) file is judged in under 2 s reading under 1 MB (Blob reads counted in the
//   page, apart from the page's own counter), and a tensor view reads only its slice's bytes;
// - a slice's values and an MLX quantized layer's dequantized rows match the CLI (`dump`);
// - shards with their index are one checkpoint, and a wrong index is reported;
// - the tabs work from the keyboard; no request leaves the local server;
// - a file picked while the core still loads is opened once it is ready; no view shows with no
//   file; names with U+0000 and a `__proto__` metadata key are kept; "reading N bytes" is per open;
// - 20,000 tensors filter in under 100 ms a keystroke (only the rows in view are rendered);
// - axe-core finds no serious or critical accessibility problem in any view;
// - the one-file build works from file://, and the served page offline once visited.
// Screenshots of every view (light, dark, phone width) go to OUT/screenshots; timings to
// OUT/browser-timings.json. Prints "browser test ok: ..." or exits 1.
// Usage: node browser_test.mjs SITE_DIR CORPUS_DIR CLI OUT_DIR NODE_MODULES_DIR [CHROMIUM]
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [siteDir, corpus, cli, outDir, nodeModules, chromiumArg] = process.argv.slice(2).map((a, i) => (i < 5 ? path.resolve(a) : a));
const chromium = (chromiumArg ? [chromiumArg] : ['/usr/lib/chromium/chromium', '/usr/bin/chromium']).find((p) => existsSync(p));
if (!chromium) { console.log('browser test skipped: chromium is not installed (scripts/install-deps --web)'); process.exit(0); }
if (!existsSync(path.join(nodeModules, 'puppeteer-core'))) {
  console.log(`browser test skipped: puppeteer-core is not installed in ${nodeModules} (scripts/test-web installs it)`);
  process.exit(0);
}
const puppeteer = createRequire(path.join(path.resolve(nodeModules), 'x.js'))('puppeteer-core');
const failures = [];
const fail = (what) => { failures.push(what); console.error('FAIL', what); };
const shots = path.join(outDir, 'screenshots');
const scratch = path.join(outDir, 'scratch');
rmSync(scratch, { recursive: true, force: true });
mkdirSync(shots, { recursive: true });
mkdirSync(scratch, { recursive: true });

// ---- A static server for the page, on 127.0.0.1 only ----------------------------------------
const types = { '.html': 'text/html', '.mjs': 'text/javascript', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm' };
const server = createServer((req, res) => {
  const name = decodeURIComponent(new URL(req.url, 'http://x').pathname).replace(/^\/+/, '') || 'index.html';
  const file = path.join(siteDir, path.normalize(name));
  if (!file.startsWith(path.resolve(siteDir)) || !existsSync(file)) { res.writeHead(404).end(); return; }
  res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const origin = `http://127.0.0.1:${server.address().port}`;

// ---- Test files ----------------------------------------------------------------------------
const run = (args) => { try { return execFileSync(cli, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString(); } catch (e) { return e.stdout.toString(); } };
/** A SafeTensors file of F32 tensors {name: [shape, values]} written by hand. */
function writeF32(file, tensors, metadata = null) {
  let offset = 0;
  const header = metadata ? { __metadata__: metadata } : {};
  const chunks = [];
  for (const [name, [shape, values]] of Object.entries(tensors)) {
    const bytes = Buffer.from(new Float32Array(values).buffer);
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + bytes.length] };
    offset += bytes.length; chunks.push(bytes);
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const prefix = Buffer.alloc(8); prefix.writeBigUInt64LE(BigInt(json.length));
  writeFileSync(file, Buffer.concat([prefix, Buffer.from(json), ...chunks]));
}
const wave = (n, k) => Array.from({ length: n }, (_, i) => Math.sin(i * k) * 2);
// A small model: two layers, then quantized by the CLI (MLX affine 4-bit, group 64).
const model = path.join(scratch, 'model.safetensors');
writeF32(model, {
  'model.embed.weight': [[16, 64], wave(1024, 0.3)],
  'model.layers.0.attn.weight': [[64, 64], wave(4096, 0.1)],
  'model.layers.0.attn.bias': [[64], wave(64, 0.5)],
  'model.layers.1.attn.weight': [[64, 64], wave(4096, 0.2)],
  'model.layers.1.attn.bias': [[64], wave(64, 0.7)],
  'model.norm.weight': [[64], wave(64, 0.9)],
}, { format: 'pt' });
const quantized = path.join(scratch, 'quantized.safetensors');
execFileSync(cli, ['quantize', '-q', '--only', 'model.layers.*', model, quantized]);
// Shards of the model with their index, and a copy whose index misplaces a tensor.
const shardDir = path.join(scratch, 'shards');
execFileSync(cli, ['shard', '-q', '--max-shard-size', '20KB', model, shardDir]);
const shardFiles = () => ['model.safetensors.index.json', ...JSON.parse(readFileSync(path.join(shardDir, 'model.safetensors.index.json'))).weight_map
  ? [...new Set(Object.values(JSON.parse(readFileSync(path.join(shardDir, 'model.safetensors.index.json'))).weight_map))] : []];
const shards = shardFiles().map((f) => path.join(shardDir, f));
const badDir = path.join(scratch, 'bad-index');
mkdirSync(badDir, { recursive: true });
for (const f of shards) writeFileSync(path.join(badDir, path.basename(f)), readFileSync(f));
const badIndex = JSON.parse(readFileSync(path.join(badDir, 'model.safetensors.index.json')));
const [firstName] = Object.keys(badIndex.weight_map);
const otherShard = Object.values(badIndex.weight_map).find((s) => s !== badIndex.weight_map[firstName]);
badIndex.weight_map[firstName] = otherShard ?? 'missing.safetensors';
writeFileSync(path.join(badDir, 'model.safetensors.index.json'), JSON.stringify(badIndex));
// Other formats: GGUF and .npz by the CLI, a PyTorch-style zip by Python's zipfile.
const gguf = path.join(scratch, 'model.gguf');
const npz = path.join(scratch, 'model.npz');
execFileSync(cli, ['convert', '-q', model, gguf]);
execFileSync(cli, ['convert', '-q', model, npz]);
const pt = path.join(scratch, 'model.pt');
execFileSync('python3', ['-c', 'import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], "w") as z: z.writestr("archive/data.pkl", b"\\x80\\x02}q\\x00.")', pt]);
// A header of 20,000 tensors (1.3 MB of JSON): how long the page takes over a big model's header.
const many = path.join(scratch, 'many-tensors.safetensors');
writeF32(many, Object.fromEntries(Array.from({ length: 20000 }, (_, i) => [`model.layers.${Math.floor(i / 20)}.block.w${i % 20}.weight`, [[2, 2], [i, 1, 2, 3]]])));
// Names with U+0000 (JSON's \u0000) and a `__proto__` metadata key.
const nul = path.join(scratch, 'nul-names.safetensors');
writeF32(nul, { 'mlp\u0000o_proj': [[2], [1, 2]], 'b': [[1], [3]] }, { format: 'pt' });
{
  // writeF32 writes the metadata with JSON.stringify: a __proto__ key needs the text itself.
  const bytes = readFileSync(nul);
  const n = Number(bytes.readBigUInt64LE(0));
  const json = bytes.subarray(8, 8 + n).toString().replace('"__metadata__":{', '"__metadata__":{"__proto__":"kept",');
  const padded = json + ' '.repeat((8 - (json.length % 8)) % 8);
  const prefix = Buffer.alloc(8); prefix.writeBigUInt64LE(BigInt(padded.length));
  writeFileSync(nul, Buffer.concat([prefix, Buffer.from(padded), bytes.subarray(8 + n)]));
}
// A 2 GB file: one U8 tensor of 2^31 - 8 bytes after a real header, sparse on disk.
const big = path.join(scratch, 'two-gigabytes.safetensors');
{
  const elements = 2 ** 31 - 8;
  let json = `{"__metadata__":{"format":"pt"},"big":{"dtype":"U8","shape":[${elements}],"data_offsets":[0,${elements}]}}`;
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const fd = openSync(big, 'w');
  const prefix = Buffer.alloc(8); prefix.writeBigUInt64LE(BigInt(json.length));
  writeSync(fd, prefix, 0, 8, 0);
  writeSync(fd, Buffer.from(json), 0, json.length, 8);
  writeSync(fd, Buffer.from([1, 2, 3, 4]), 0, 4, 8 + json.length);
  ftruncateSync(fd, 8 + json.length + elements);
  closeSync(fd);
}

// ---- Servers of files by URL, on other ports (other origins: CORS applies) ------------------
// One answers Range requests (and under /no-cors/ sends no CORS headers), one ignores Range;
// each request's Range header is kept per file ("range:NAME" / "plain:NAME").
const requestsTo = new Map();
async function dataServer(ranges) {
  const s = createServer((req, res) => {
    res.on('error', () => {}); // the page stops a whole-file answer after its head
    const u = new URL(req.url, 'http://x');
    const cors = !u.pathname.startsWith('/no-cors/');
    const name = decodeURIComponent(u.pathname.replace(/^\/(no-cors\/)?/, ''));
    const headers = cors ? { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'Content-Range, Content-Length' } : {};
    const file = path.join(scratch, name);
    if (!file.startsWith(scratch + path.sep) || !existsSync(file) || name.includes('two-gigabytes')) { res.writeHead(404, headers).end(); return; }
    const key = `${ranges ? 'range' : 'plain'}:${name}`;
    if (!requestsTo.has(key)) requestsTo.set(key, []);
    requestsTo.get(key).push(req.headers.range ?? 'whole');
    const bytes = readFileSync(file);
    const m = ranges && /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    if (m) {
      const begin = Number(m[1]); const end = Math.min(Number(m[2]), bytes.length - 1);
      res.writeHead(206, { ...headers, 'content-range': `bytes ${begin}-${end}/${bytes.length}`, 'content-length': end - begin + 1 }).end(bytes.subarray(begin, end + 1));
      return;
    }
    res.writeHead(200, { ...headers, 'content-length': bytes.length }).end(bytes);
  });
  await new Promise((ok) => s.listen(0, '127.0.0.1', ok));
  return { server: s, origin: `http://127.0.0.1:${s.address().port}` };
}
const withRanges = await dataServer(true);
const withoutRanges = await dataServer(false);

// ---- The browser ---------------------------------------------------------------------------
const browser = await puppeteer.launch({
  executablePath: chromium, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update',
    '--disable-default-apps', '--disable-sync', '--metrics-recording-only', '--no-default-browser-check'],
});
const outside = [];
const page = await browser.newPage();
await page.setRequestInterception(true);
// The first load holds the WebAssembly module back until a file has been picked.
let releaseWasm = null;
const wasmHeld = new Promise((ok) => { releaseWasm = ok; });
page.on('request', async (r) => {
  const url = r.url();
  if (url.endsWith('.wasm') && releaseWasm) await wasmHeld;
  if ([origin, withRanges.origin, withoutRanges.origin].some((o) => url.startsWith(`${o}/`)) || url.startsWith('data:') || url.startsWith('blob:')) {
    r.continue(); return;
  }
  outside.push(url); r.abort();
});
page.on('pageerror', (e) => fail(`page error: ${e.message}`));
let corsRefusalExpected = false; // the browser logs the refusal of a server without CORS headers
page.on('console', (m) => {
  if (m.type() !== 'error' || (corsRefusalExpected && /CORS policy|ERR_FAILED/.test(m.text()))) return;
  fail(`console error: ${m.text()} ${m.location()?.url ?? ''}`);
});
// Counts every byte the page reads from a Blob (a File.slice is a Blob), apart from its own counter.
await page.evaluateOnNewDocument(() => {
  globalThis.blobBytes = 0;
  for (const method of ['arrayBuffer', 'text']) {
    const original = Blob.prototype[method];
    Blob.prototype[method] = function counted(...args) { globalThis.blobBytes += this.size; return original.apply(this, args); };
  }
});
await page.setViewport({ width: 1200, height: 900 });
const axeSource = readFileSync(path.join(nodeModules, 'axe-core', 'axe.min.js'), 'utf8');
/** axe-core over the page as it is (DevTools evaluation: the page's CSP does not apply to it). */
async function accessible(view) {
  if (!(await page.evaluate(() => typeof globalThis.axe === 'object'))) await page.evaluate(axeSource);
  const found = await page.evaluate(async () => (await globalThis.axe.run(document)).violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ')}`));
  for (const v of found) fail(`axe-core, ${view}: ${v}`);
}

await page.goto(`${origin}/index.html`, { waitUntil: 'domcontentloaded' });
// No file yet: the tab list and every panel are hidden (CSS must not override `hidden`).
const shownEarly = await page.$$eval('#views, [role=tabpanel]', (els) => els.filter((e) => getComputedStyle(e).display !== 'none').map((e) => e.id));
if (shownEarly.length) fail(`with no file open, shown: ${shownEarly}`);
await accessible('no file');
// A file picked while the core still loads is opened once it is ready.
await page.$eval('body', (b) => { b.dataset.state = 'busy'; });
await (await page.$('#picker')).uploadFile(model);
const waiting = await page.$eval('#status', (e) => e.textContent);
if (!waiting.includes('once the WebAssembly core is loaded')) fail(`a file picked early: ${waiting}`);
const loadStarted = performance.now();
releaseWasm(); releaseWasm = null;
await page.waitForSelector('body[data-state=ready]', { timeout: 20000 });
const loadMs = performance.now() - loadStarted;
const coreMs = Number(await page.$eval('body', (b) => b.dataset.loadMs));
const early = await page.$$eval('#verdict-list li', (items) => items.map((li) => `${li.dataset.file}: ${li.dataset.code}`));
if (early.join() !== 'model.safetensors: ok') fail(`a file picked early: ${early}`);

/** Opens `files` with the file picker and waits for the verdicts; returns the wall time. */
async function open(files, input = '#picker', resetCounters = true) {
  await page.$eval('body', (b, reset) => {
    b.dataset.state = 'busy';
    if (reset) { globalThis.blobBytes = 0; globalThis.inspectorReads.bytes = 0; }
  }, resetCounters);
  const started = performance.now();
  const handle = await page.$(input);
  await handle.uploadFile(...files);
  await page.waitForSelector('body[data-state=ready]', { timeout: 60000 });
  return performance.now() - started;
}
const verdicts = () => page.$$eval('#verdict-list li', (items) => items.map((li) => ({
  file: li.dataset.file, code: li.dataset.code, message: li.dataset.message, offset: li.dataset.offset, tensor: li.dataset.tensor,
  warnings: li.querySelectorAll('.warn').length,
})));
const flat = (v) => (Array.isArray(v) ? v.flatMap(flat) : [v]);
const shot = (name, options = {}) => page.screenshot({ path: path.join(shots, `${name}.png`), ...options });
async function tab(id) { await page.click(`#tab-${id}`); await page.waitForSelector(`#${id}:not([hidden])`); }
/** Clicks a row of the tensor table. The table renders only the rows in view and re-renders
 *  them (a scroll, the filter's debounce), so a row found may be replaced before the click lands:
 *  it is then found again. */
async function clickRow(selector) {
  for (let attempt = 0; ; ++attempt) {
    try {
      await page.waitForSelector(selector);
      await page.click(selector);
      return;
    } catch (e) {
      if (attempt >= 4 || !/detached|not clickable|No node found/.test(String(e))) throw e;
    }
  }
}

// ---- Every corpus file (and the other formats) under each policy ---------------------------
const rows = readFileSync(path.join(corpus, 'verdicts.tsv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
const files = rows.map(([f]) => path.join(corpus, f));
for (const policy of ['reference', 'strict', 'lenient']) {
  const expected = new Map(run(['validate', '--json', '--policy', policy, ...files]).trim().split('\n').map((l) => JSON.parse(l))
    .map((d) => [path.basename(d.file), d]));
  await page.select('#policy', policy);
  await open(files);
  const got = await verdicts();
  if (got.length !== files.length) fail(`${policy}: ${got.length} verdicts for ${files.length} files`);
  for (const v of got) {
    const want = expected.get(v.file);
    const same = want && (want.ok ? v.code === 'ok' : v.code === want.code && v.message === want.message
      && v.offset === (want.offset === null ? '' : String(want.offset)) && v.tensor === (want.tensor ?? ''))
      && v.warnings === want.warnings.length;
    if (!same) fail(`${v.file} under ${policy}: page ${JSON.stringify(v)}, CLI ${JSON.stringify(want)}`);
  }
  if (policy === 'reference') await shot('verdicts-corpus', { fullPage: false });
}
await page.select('#policy', 'reference');
// ---- GGUF, NumPy and PyTorch files: listed as `safetensors inspect` describes them ----------
// Each is described by the page's one module; its format line, notes and rows are the CLI's.
const fixtures = fileURLToPath(new URL('../fixtures/', import.meta.url));
const describedFiles = [gguf, npz, pt, path.join(fixtures, 'gguf/quantized.gguf'), path.join(fixtures, 'numpy/dtype_f4.npy'),
  path.join(fixtures, 'pytorch/basic.pt'), path.join(fixtures, 'pytorch/legacy.pt'), path.join(fixtures, 'pytorch/evil_os_system.pt')];
const describeStarted = performance.now();
for (const file of describedFiles) {
  let out = ''; let err = '';
  try { out = execFileSync(cli, ['inspect', file], { stdio: ['ignore', 'pipe', 'pipe'] }).toString(); } catch (e) { out = e.stdout.toString(); err = e.stderr.toString(); }
  const cliLines = out.split('\n');
  const cliFormat = cliLines.find((l) => l.startsWith('format:'))?.replace(/^format: +/, '') ?? null;
  const cliNotes = cliLines.filter((l) => l.startsWith('note:')).map((l) => l.replace(/^note: +/, ''));
  const cliRows = cliLines.slice(cliLines.findIndex((l) => l.startsWith('name ')) + 1).filter((l) => l !== '' && cliFormat !== null)
    .map((l) => l.split(/ {2,}/)[0]);
  await open([file]);
  const [v] = await verdicts();
  const page_ = await page.$eval('#verdict-list li', (li) => ({
    format: li.querySelector('.format')?.textContent.replace(/^format: /, '') ?? null,
    notes: [...li.querySelectorAll('.note')].map((n) => n.textContent.replace(/^note: /, '')),
  }));
  const name = path.basename(file);
  if (page_.format !== cliFormat || JSON.stringify(page_.notes) !== JSON.stringify(cliNotes)) {
    fail(`${name}: page ${JSON.stringify(page_)}, the CLI's inspect: ${out}`);
  }
  if (err) {
    // Not listed: the page's verdict is the CLI's error (model.pt, an archive of no tensor:
    // InvalidFormat; evil_os_system.pt, a pickle calling os.system: CodeExecution, with its notes).
    const code = name === 'evil_os_system.pt' ? 'CodeExecution' : 'InvalidFormat';
    if (v.code !== code || !err.includes(`: ${v.message}`) || !(await page.$eval('#views', (e) => e.hidden))) fail(`${name}: refused as ${JSON.stringify(v)}; the CLI: ${err}`);
    if (code === 'CodeExecution') await shot('refused-pickle');
    continue;
  }
  if (v.code !== 'ok') fail(`${name}: ${JSON.stringify(v)}`);
  await tab('tensors');
  const pageRows = await page.$$eval('#rows tr[data-name]', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  const wantRows = cliLines.slice(cliLines.findIndex((l) => l.startsWith('name ')) + 1).filter((l) => l !== '').map((l) => l.split(/ {2,}/));
  // name, dtype, shape, bytes and the last column (offset, descr, notes) as the CLI prints them.
  const got = pageRows.map((c) => [c[0], c[1], c[2], c[4], c[5]].filter((x) => x !== '').join('|'));
  const want = wantRows.map((c) => c.join('|'));
  if (JSON.stringify(got) !== JSON.stringify(want) || cliRows.length !== pageRows.length) fail(`${name}: rows ${JSON.stringify(got)}, the CLI ${JSON.stringify(want)}`);
  if (name === 'quantized.gguf') {
    await shot('described-gguf');
    await accessible('described');
    await tab('summary');
    const dtypes = await page.$$eval('#dtype-table tbody tr', (trs) => trs.map((tr) => tr.cells[0].textContent));
    const cliTypes = cliLines.filter((l) => / params /.test(l)).map((l) => l.trim().split(/ +/)[0]);
    if (JSON.stringify(dtypes) !== JSON.stringify(cliTypes)) fail(`quantized.gguf: dtypes ${dtypes}, the CLI ${cliTypes}`);
    // Its metadata as the CLI prints it ("  general.architecture (STRING): test").
    const meta = await page.$$eval('#summary dl.meta dt', (dts) => dts.map((dt) => `${dt.textContent}: ${dt.nextElementSibling.textContent}`));
    const cliMeta = cliLines.filter((l) => /^ {2}\S.*: /.test(l) && !/ params /.test(l)).map((l) => l.trim());
    if (JSON.stringify(meta) !== JSON.stringify(cliMeta)) fail(`quantized.gguf: metadata ${JSON.stringify(meta)}, the CLI ${JSON.stringify(cliMeta)}`);
    await shot('described-gguf-summary');
  }
}
const describeMs = performance.now() - describeStarted;
// A described tensor whose bytes are plain in its file (a GGUF F32 tensor) gets the tensor view:
// its statistics are what `safetensors stats` prints for it once converted; a quantized one
// (Q8_0) gets one line saying why its values are not shown.
const plainGguf = path.join(fixtures, 'gguf/plain.gguf');
const plainConverted = path.join(scratch, 'plain-gguf.safetensors');
execFileSync(cli, ['convert', '-q', plainGguf, plainConverted]);
const cliStats = JSON.parse(run(['stats', '--json', '-q', plainConverted, 'blk.0.f32'])).tensors[0];
const six = (v) => Number(v.toPrecision(6)).toString();
const wantStats = [['min', six(cliStats.min)], ['max', six(cliStats.max)], ['mean', six(cliStats.mean)], ['std', six(cliStats.std)],
  ['NaN', String(cliStats.nan)], ['+Inf', String(cliStats.pos_inf)], ['-Inf', String(cliStats.neg_inf)], ['zeros', String(cliStats.zeros)]];
await open([plainGguf]);
await tab('tensors');
await page.click('#rows tr[data-name="blk.0.f32"]');
await page.waitForSelector('#tensor-out dl.stats, #tensor-out p.bad');
const ggufStats = await page.$$eval('#tensor-out dl.stats dt', (dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling.textContent]));
const ggufValues = await page.$eval('#tensor-out pre.values', (p) => p.textContent.trim().split(/\s+/).length).catch(() => 0);
if (JSON.stringify(ggufStats) !== JSON.stringify(wantStats) || ggufValues !== 24) {
  fail(`plain.gguf blk.0.f32: statistics ${JSON.stringify(ggufStats)} (${ggufValues} values), the CLI's ${JSON.stringify(wantStats)}`);
}
await shot('described-values');
await open([path.join(fixtures, 'gguf/quantized.gguf')]);
await tab('tensors');
await page.click('#rows tr[data-name="q8"]');
await page.waitForFunction(() => document.querySelector('#tensor-out')?.textContent.startsWith('The values are not shown'));
const notShown = await page.$eval('#tensor-out', (o) => o.textContent);
if (!notShown.startsWith('The values are not shown: quantized type Q8_0;') || !(await page.$eval('#slice-form', (f) => f.hidden))) {
  fail(`quantized.gguf q8: '${notShown}'`);
}

// ---- One file: every view ------------------------------------------------------------------
await open([model]);
const readingOnce = await page.$eval('#status', (e) => e.textContent.replace(/ in [\d.]+ ms/, ''));
const modelCopy = path.join(scratch, 'model-copy.safetensors'); // the picker fires no change for the same file
writeFileSync(modelCopy, readFileSync(model));
await open([modelCopy], '#picker', false);
const readingTwice = await page.$eval('#status', (e) => e.textContent.replace(/ in [\d.]+ ms/, ''));
if (readingOnce !== readingTwice || !/reading [\d.]+ (B|KiB)\.$/.test(readingOnce)) fail(`the bytes read, per open: '${readingOnce}', then '${readingTwice}'`);
await shot('summary');
await accessible('summary');
const parametersFact = await page.$eval('#summary dl.facts', (d) => [...d.querySelectorAll('dt')].find((dt) => dt.textContent === 'parameters').nextElementSibling.textContent);
if (parametersFact !== '9,408 (9.41K)') fail(`parameters: ${parametersFact}`);
await tab('tensors');
await page.type('#filter', 'layers');
await page.waitForFunction(() => document.querySelector('#shown').textContent === '4 of 6 tensors');
const filtered = await page.$$eval('#rows tr[data-name]', (trs) => trs.map((tr) => tr.dataset.name));
if (filtered.length !== 4 || !filtered.every((n) => n.includes('layers'))) fail(`filter 'layers': ${filtered}`);
await page.click('#tensors th button[data-key="elements"]');
await page.click('#tensors th button[data-key="elements"]'); // descending
const sorted = await page.$$eval('#rows tr[data-name]', (trs) => trs.map((tr) => tr.dataset.name));
if (!sorted[0].endsWith('attn.weight')) fail(`sorting by parameters, descending: ${sorted}`);
await page.$eval('#filter', (i) => { i.value = ''; i.dispatchEvent(new Event('input')); });
await page.waitForFunction(() => document.querySelector('#shown').textContent === '6 of 6 tensors');
// Grouped by layer (the default): a row per layer before its tensors; its button folds them.
const groups = await page.$$eval('#rows tr.group', (trs) => trs.map((tr) => `${tr.dataset.layer}: ${tr.cells[1].textContent}`));
// (sorted by parameters, descending: a layer comes where its first tensor does)
if (groups.join() !== 'model.layers.0: 4,160 (4.16K),model.layers.1: 4,160 (4.16K),model.embed: 1,024 (1.02K),model.norm: 64 (64)') fail(`layer groups: ${groups}`);
await page.click('#rows tr.group[data-layer="model.layers.0"] button');
const folded = await page.$$eval('#rows tr[data-name]', (trs) => trs.map((tr) => tr.dataset.name));
const expanded = await page.$eval('#rows tr.group[data-layer="model.layers.0"] button', (b) => b.getAttribute('aria-expanded'));
if (folded.some((n) => n.startsWith('model.layers.0.')) || folded.length !== 4 || expanded !== 'false') fail(`folding model.layers.0: ${folded} (${expanded})`);
await page.keyboard.press('Enter'); // the focused button unfolds it again
if ((await page.$$eval('#rows tr[data-name]', (trs) => trs.length)) !== 6) fail('unfolding model.layers.0 with Enter');
await shot('tensors');
await accessible('tensors');
await tab('tree');
await page.click('#tree details > summary');
await shot('tree');
await accessible('tree');
const treeText = await page.$eval('#tree', (t) => t.textContent);
if (!treeText.includes('model — 9,408 params')) fail(`tree totals: ${treeText.slice(0, 200)}`);
await tab('charts');
const bars = await page.$$eval('#charts svg rect.bar', (r) => r.length);
if (bars !== 1 + 1 + 4 + 4) fail(`charts: ${bars} bars`);
await shot('charts', { fullPage: true });
await accessible('charts');
// Keyboard: from the Charts tab, ArrowLeft reaches Tree; Enter on a table row opens the tensor.
await page.focus('#tab-charts');
await page.keyboard.press('ArrowLeft');
if (await page.$eval('#tab-tree', (t) => t.getAttribute('aria-selected')) !== 'true') fail('ArrowLeft on the tabs');
await tab('tensors');
await page.focus('#rows tr[data-name="model.layers.1.attn.weight"]');
await page.keyboard.press('Enter');
await page.waitForSelector('#tensor-out dl.stats');
await page.$eval('#slice', (i) => { i.value = '2:4, ::-16'; });
await page.$eval('body', () => { globalThis.blobBytes = 0; });
await page.click('#slice-form button[type=submit]');
await page.waitForFunction(() => document.querySelector('#tensor-out p.muted')?.textContent.includes('shape [2, 4]'));
const pageValues = (await page.$eval('#tensor-out pre.values', (p) => p.textContent)).trim().split(/\s+/).map(Number);
const cliValues = JSON.parse(run(['dump', '--json', '--slice', '2:4, ::-16', model, 'model.layers.1.attn.weight'])
  .trim() || 'null');
const want = cliValues ? flat(cliValues.values ?? cliValues.data ?? cliValues) : null;
if (!want || want.length !== 8 || pageValues.some((v, i) => Math.abs(v - want[i]) > 1e-5 * Math.max(1, Math.abs(want[i])))) {
  fail(`slice values: page ${pageValues}, CLI ${JSON.stringify(want)}`);
}
const sliceBytes = await page.evaluate(() => globalThis.blobBytes);
if (sliceBytes > 2 * 64 * 4 * 2) fail(`the slice read ${sliceBytes} bytes`);
await shot('tensor', { fullPage: true });
await accessible('tensor');
await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
await shot('tensor-dark', { fullPage: true });
await tab('summary');
await shot('summary-dark');
await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
await page.setViewport({ width: 390, height: 844 }); // isMobile would reload the page
await tab('tensors');
const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
if (overflow > 0) fail(`phone width: the page is ${overflow} px wider than the window`);
await shot('tensors-phone', { fullPage: true });
await page.setViewport({ width: 1200, height: 900 });

// ---- The dtype table: the CLI's order, shares of the parameters and bytes -------------------
{
  const mixed = path.join(scratch, 'mixed-dtypes.safetensors');
  const spec = { a: ['F32', 4, 4], b: ['BF16', 2, 2], c: ['U8', 4, 1], d: ['F16', 2, 2] };
  let offset = 0;
  const header = {};
  for (const [name, [dtype, n, size]] of Object.entries(spec)) { header[name] = { dtype, shape: [n], data_offsets: [offset, offset + n * size] }; offset += n * size; }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const prefix = Buffer.alloc(8); prefix.writeBigUInt64LE(BigInt(json.length));
  writeFileSync(mixed, Buffer.concat([prefix, Buffer.from(json), Buffer.alloc(offset)]));
  const cliOrder = run(['inspect', mixed]).split('\n').map((l) => /^ {2}([A-Z0-9_]+) /.exec(l)?.[1]).filter(Boolean);
  await open([mixed]);
  const dtypeRows = await page.$$eval('#dtype-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent).join('|')));
  const want = ['U8|1|4 (4)|33.3%|4 B|14.3%', 'F16|1|2 (2)|16.7%|4 B|14.3%', 'BF16|1|2 (2)|16.7%|4 B|14.3%', 'F32|1|4 (4)|33.3%|16 B|57.1%'];
  if (dtypeRows.join() !== want.join() || dtypeRows.map((r) => r.split('|')[0]).join() !== cliOrder.join()) fail(`dtype table: ${dtypeRows} (the CLI's order: ${cliOrder})`);
}

// ---- U+0000 in names, a __proto__ metadata key -------------------------------------------
await open([nul]);
const nulNames = await page.$$eval('#rows tr[data-index]', (trs) => trs.map((tr) => [tr.dataset.name, tr.cells[0].textContent]));
if (!nulNames.some(([n, text]) => n === 'mlp\u0000o_proj' && text === 'mlp\u0000o_proj')) fail(`U+0000 names: ${JSON.stringify(nulNames)}`);
const nulMeta = await page.$eval('#summary dl.meta', (d) => [...d.querySelectorAll('dt')].map((dt) => `${dt.textContent}=${dt.nextElementSibling.textContent}`));
if (nulMeta.join() !== '__proto__=kept,format=pt') fail(`metadata: ${JSON.stringify(nulMeta)}`);

// ---- Every dtype decoded by the C++ codecs, as `safetensors dump` prints it ------------------
for (const [name] of rows.filter(([f]) => /^0(0[7-9]|1\d|2[0-8])-dtype-/.test(f))) {
  const file = path.join(corpus, name);
  await open([file]);
  await tab('tensors');
  await clickRow('#rows tr[data-name="x"]');
  await page.waitForSelector('#tensor-out dl.stats, #tensor-out p.bad');
  const shown = await page.$eval('#tensor-out', (o) => ({ error: o.querySelector('p.bad')?.textContent ?? null,
    values: o.querySelector('pre.values')?.textContent.trim().split(/\s+/) ?? [] }));
  // The CLI's float32 view of the same values: cast (floats; integers stay), then dump.
  const asF32 = path.join(scratch, `f32-${name}`);
  run(['cast', '-q', '--dtype', 'F32', file, asF32]);
  const dumped = JSON.parse(run(['dump', '--json', '--limit', '0', existsSync(asF32) ? asF32 : file, 'x']) || 'null');
  if (dumped?.dtype === 'C64') {
    if (!shown.error?.includes('C64')) fail(`${name}: C64 should be refused, page ${JSON.stringify(shown)}`);
    continue;
  }
  const expected = flat(dumped?.values ?? []);
  const same = expected.length === shown.values.length && expected.every((w, i) => {
    const v = Number(shown.values[i]);
    return w === null ? !Number.isFinite(v) : Math.abs(v - w) <= 1e-5 * Math.max(1, Math.abs(w));
  });
  if (!same) fail(`${name}: page ${shown.values.slice(0, 8)} (${shown.error}), CLI ${expected.slice(0, 8)}`);
}

// ---- MLX: the quantized layer's rows, dequantized by the C++ kernels ----------------------
await open([quantized]);
const mlxSummary = await page.$eval('#summary', (s) => s.textContent);
if (!mlxSummary.includes('MLX quantized layers (2)') || !mlxSummary.includes('affine 4-bit')) fail(`MLX summary: ${mlxSummary.slice(0, 300)}`);
await tab('tensors');
await clickRow('#rows tr[data-name="model.layers.0.attn.weight"]');
await page.waitForSelector('#tensor-out dl.stats');
const mlxLines = (await page.$eval('#tensor-out pre.values', (p) => p.textContent)).trim().split('\n');
const dequantized = path.join(scratch, 'dequantized.safetensors');
execFileSync(cli, ['dequantize', '-q', '--dtype', 'F32', quantized, dequantized]);
const mlxWant = flat(JSON.parse(run(['dump', '--json', '--slice', '0:1', dequantized, 'model.layers.0.attn.weight'])).values ?? []);
const mlxGot = mlxLines[0].split(/\s+/).map(Number);
if (mlxGot.length !== 64 || mlxGot.some((v, i) => Math.abs(v - mlxWant[i]) > 1e-5 * Math.max(1, Math.abs(mlxWant[i])))) {
  fail(`MLX row 0: page ${mlxGot.slice(0, 4)}..., CLI ${mlxWant.slice(0, 4)}...`);
}
await shot('tensor-mlx', { fullPage: true });

// ---- Shards with their index as one checkpoint ---------------------------------------------
await open(shards);
const checkpointLine = await page.$eval('#checkpoint', (p) => p.textContent);
if (!checkpointLine.includes('consistent as one checkpoint')) fail(`shards: ${checkpointLine}`);
const shardTensors = await page.$eval('#summary', (s) => s.textContent);
if (!shardTensors.includes('9,408')) fail('shards: the parameters of all shards together');
await shot('checkpoint');
await open(shards.map((f) => path.join(badDir, path.basename(f))));
const badLine = await page.$eval('#verdict', (p) => p.textContent);
if (!badLine.includes(`tensor '${firstName}'`)) fail(`wrong index not reported: ${badLine}`);

// ---- 20,000 tensors: every view built -----------------------------------------------------
const manyMs = await open([many]);
await tab('tensors');
const manyRows = await page.$$eval('#rows tr[data-index]', (trs) => trs.length);
const manyShown = await page.$eval('#shown', (e) => e.textContent);
if (manyRows > 200 || manyShown !== '20,000 of 20,000 tensors') fail(`20,000 tensors: ${manyRows} rows rendered, '${manyShown}'`);
if (manyMs >= 10000) fail(`20,000 tensors opened in ${manyMs.toFixed(0)} ms`);
// Scrolled to the end, the last tensor is rendered; ArrowUp from it moves to the one before.
await page.$eval('#rows-scroll', (b) => { b.scrollTop = b.scrollHeight; });
await page.waitForSelector('#rows tr[data-name="model.layers.999.block.w19.weight"]');
await page.focus('#rows tr[data-name="model.layers.999.block.w19.weight"]');
await page.keyboard.press('ArrowUp');
const upTo = await page.evaluate(() => document.activeElement.dataset.name);
if (upTo !== 'model.layers.999.block.w18.weight') fail(`ArrowUp at the end of 20,000 rows: ${upTo}`);
// Typing 8 characters into the filter: under 100 ms a keystroke, the table's answer included.
await page.focus('#filter');
const typingStarted = performance.now();
await page.keyboard.type('w19.weig');
await page.waitForFunction(() => document.querySelector('#shown').textContent === '1,000 of 20,000 tensors', { polling: 'mutation' });
const filterKeystrokeMs = (performance.now() - typingStarted) / 8;
const filterPassMs = Number(await page.$eval('body', (b) => b.dataset.filterMs));
if (filterKeystrokeMs >= 100) fail(`filtering 20,000 tensors: ${filterKeystrokeMs.toFixed(1)} ms a keystroke`);
await accessible('20,000 tensors');
await page.$eval('#filter', (i) => { i.value = ''; i.dispatchEvent(new Event('input')); });
await page.waitForFunction(() => document.querySelector('#shown').textContent === '20,000 of 20,000 tensors');

// ---- 2 GB: opened from its header, a tensor from its slice ---------------------------------
const openMs = await open([big]);
const bigRead = await page.evaluate(() => ({ blob: globalThis.blobBytes, page: globalThis.inspectorReads.bytes }));
const [bigVerdict] = await verdicts();
if (bigVerdict.code !== 'ok') fail(`2 GB file: ${JSON.stringify(bigVerdict)}`);
if (openMs >= 2000) fail(`2 GB file opened in ${openMs.toFixed(0)} ms`);
if (bigRead.blob >= 1 << 20 || bigRead.page !== bigRead.blob) fail(`2 GB file: ${JSON.stringify(bigRead)} bytes read`);
await tab('tensors');
await page.$eval('body', () => { globalThis.blobBytes = 0; });
await clickRow('#rows tr[data-name="big"]');
await page.waitForSelector('#tensor-out dl.stats');
const bigSliceBytes = await page.evaluate(() => globalThis.blobBytes);
const firstValues = (await page.$eval('#tensor-out pre.values', (p) => p.textContent)).trim().split(/\s+/).slice(0, 5).map(Number);
if (bigSliceBytes !== 4096 || firstValues.join() !== '1,2,3,4,0') fail(`2 GB tensor view: ${bigSliceBytes} bytes, values ${firstValues}`);
await shot('two-gigabytes', { fullPage: true });

// ---- Files by URL: ?url=, the URL box, a shareable address ---------------------------------
/** Loads the page at `address` (?url=...), waits for its verdicts, returns them. */
async function visitAddress(address) {
  await page.goto(address);
  await page.waitForSelector('body[data-state=ready]', { timeout: 20000 });
  return page.$$eval('#verdict-list li', (items) => items.map((li) => ({ file: li.dataset.file, code: li.dataset.code, message: li.dataset.message })));
}
const pageUrl = (file, fragment = '') => `${origin}/index.html?url=${encodeURIComponent(file)}${fragment}`;
{
  // A file whose header is in the first request's 100,000 bytes: judged in 1 request, its tensor
  // from the same bytes; the fragment restores the filter, the tensor and the tab.
  const address = pageUrl(`${withRanges.origin}/model.safetensors`, '#tab=tensor&tensor=model.layers.1.attn.weight&filter=layers.1');
  const [v] = await visitAddress(address);
  await page.waitForSelector('#tensor-out dl.stats');
  if (v?.code !== 'ok') fail(`by URL: ${JSON.stringify(v)}`);
  const modelRequests = requestsTo.get('range:model.safetensors') ?? [];
  if (modelRequests.join() !== 'bytes=0-99999') fail(`by URL, a small file: requests ${modelRequests}`);
  const remoteStatus = await page.$eval('#status', (e) => e.textContent);
  if (!/reading 37\.3 KiB in 1 request\.$/.test(remoteStatus)) fail(`by URL, the status: ${remoteStatus}`);
  const restored = await page.evaluate(() => ({ filter: document.querySelector('#filter').value, tab: document.querySelector('[role=tab][aria-selected=true]').id,
    title: document.querySelector('#tensor-title').textContent, address: location.href }));
  if (restored.filter !== 'layers.1' || restored.tab !== 'tab-tensor' || restored.title !== 'model.layers.1.attn.weight' || restored.address !== address) {
    fail(`the view from the address: ${JSON.stringify(restored)}`);
  }
  const remoteValues = (await page.$eval('#tensor-out pre.values', (p) => p.textContent)).trim().split(/\s+/).slice(0, 64).map(Number);
  const localValues = flat(JSON.parse(run(['dump', '--json', '--slice', '0:1', model, 'model.layers.1.attn.weight'])).values ?? []);
  if (remoteValues.some((x, i) => Math.abs(x - localValues[i]) > 1e-5 * Math.max(1, Math.abs(localValues[i])))) fail(`by URL, values: ${remoteValues.slice(0, 4)}`);
  await tab('summary');
  const after = await page.evaluate(() => location.hash);
  if (after !== '#tensor=model.layers.1.attn.weight&filter=layers.1') fail(`the address after choosing Summary: ${after}`);
  await shot('by-url');
  await accessible('by URL');

  // A header of 1.3 MB: 2 requests (the head, then the rest of the header), then one for a tensor's 16 bytes.
  const [manyVerdict] = await visitAddress(pageUrl(`${withRanges.origin}/many-tensors.safetensors`));
  const manyRequests = () => requestsTo.get('range:many-tensors.safetensors') ?? [];
  if (manyVerdict?.code !== 'ok' || manyRequests().length !== 2) fail(`by URL, 20,000 tensors: ${JSON.stringify(manyVerdict)}, requests ${manyRequests()}`);
  await tab('tensors');
  await clickRow('#rows tr[data-name="model.layers.0.block.w1.weight"]');
  await page.waitForSelector('#tensor-out dl.stats');
  const [, begin, end] = /^bytes=(\d+)-(\d+)$/.exec(manyRequests()[2] ?? '') ?? [];
  if (manyRequests().length !== 3 || Number(end) - Number(begin) + 1 !== 16) fail(`by URL, a tensor's range: ${manyRequests()}`);

  // A sharded checkpoint by its index, through the URL box.
  await page.$eval('#url', (i, u) => { i.value = u; }, `${withRanges.origin}/shards/model.safetensors.index.json`);
  await page.$eval('body', (b) => { b.dataset.state = 'busy'; });
  await page.click('#url-form button[type=submit]');
  await page.waitForSelector('body[data-state=ready]', { timeout: 20000 });
  const shardLine = await page.$eval('#checkpoint', (p) => p.textContent);
  const shardSummary = await page.$eval('#summary', (p) => p.textContent);
  if (!shardLine.includes(`${shards.length - 1} of ${shards.length - 1} valid, consistent as one checkpoint`) || !shardSummary.includes('9,408')) fail(`by its index URL: ${shardLine}`);

  // A GGUF file by URL: described by the module through the same ranges (this small
  // one: the first request's bytes).
  const [ggufByUrl] = await visitAddress(pageUrl(`${withRanges.origin}/model.gguf`));
  const ggufFormat = await page.$eval('#verdict-list li .format', (e) => e.textContent).catch(() => null);
  const cliGgufFormat = run(['inspect', gguf]).split('\n').find((l) => l.startsWith('format:'))?.replace(/^format: +/, 'format: ');
  const ggufRequests = requestsTo.get('range:model.gguf') ?? [];
  if (ggufByUrl?.code !== 'ok' || ggufFormat !== cliGgufFormat || ggufRequests.length !== 1) {
    fail(`a GGUF file by URL: ${JSON.stringify(ggufByUrl)}, ${ggufFormat} (the CLI: ${cliGgufFormat}), requests ${ggufRequests}`);
  }

  // A server without Range support: a file larger than the first request is refused in words;
  // a smaller one arrived whole and is judged.
  const [noRange] = await visitAddress(pageUrl(`${withoutRanges.origin}/many-tensors.safetensors`));
  if (noRange?.code !== 'IoError' || !noRange.message.includes('the server ignores Range requests')) fail(`without Range: ${JSON.stringify(noRange)}`);
  const [small] = await visitAddress(pageUrl(`${withoutRanges.origin}/model.safetensors`));
  if (small?.code !== 'ok') fail(`without Range, a small file: ${JSON.stringify(small)}`);
  // A server that sends no CORS headers.
  corsRefusalExpected = true;
  const [noCors] = await visitAddress(pageUrl(`${withRanges.origin}/no-cors/model.safetensors`));
  corsRefusalExpected = false;
  if (noCors?.code !== 'IoError' || !noCors.message.includes('CORS')) fail(`without CORS: ${JSON.stringify(noCors)}`);
  await shot('by-url-refused');
}

// The README's picture (docs/img/inspector.png is a copy): a corpus checkpoint's BF16 tensor.
await page.setViewport({ width: 960, height: 720 });
await open([path.join(corpus, '002-weights-bf16.safetensors')]);
await tab('tensors');
await clickRow('#rows tr[data-name="model.layers.0.mlp.up_proj.weight"]');
await page.waitForSelector('#tensor-out dl.stats');
await shot('overview');

// ---- The one-file build from file:// (a saved copy), and the served page offline -----------
/** A fresh tab failing the test on page errors; `files` opened once its core is loaded. */
async function visit(url, files, what) {
  const tabPage = await browser.newPage();
  tabPage.on('pageerror', (e) => fail(`${what}: page error: ${e.message}`));
  tabPage.on('console', (m) => { if (m.type() === 'error') fail(`${what}: console error: ${m.text()}`); });
  await tabPage.goto(url);
  await tabPage.waitForSelector('body[data-state=loaded]', { timeout: 20000 });
  await (await tabPage.$('#picker')).uploadFile(...files);
  await tabPage.waitForSelector('body[data-state=ready]', { timeout: 20000 });
  const got = await tabPage.$$eval('#verdict-list li', (items) => items.map((li) => `${li.dataset.file}: ${li.dataset.code}`));
  if (got.join() !== 'model.safetensors: ok') fail(`${what}: ${got}`);
  return tabPage;
}
const saveLink = await page.$eval('#footer a[download]', (l) => l.getAttribute('href'));
if (saveLink !== 'safetensors-inspector.html') fail(`the footer's link to the one-file page: ${saveLink}`);
// The saved copy carries the format readers too: a GGUF file gets inspect's format line there.
const savedCopy = await visit(pathToFileURL(path.join(siteDir, 'safetensors-inspector.html')).href, [model], 'file://');
await (await savedCopy.$('#picker')).uploadFile(gguf);
await savedCopy.waitForFunction(() => document.body.dataset.state === 'ready' &&
  document.querySelector('#verdict-list li')?.dataset.file?.endsWith('.gguf'), { timeout: 20000 });
const savedGgufFormat = await savedCopy.$eval('#verdict-list li .format', (e) => e.textContent).catch(() => null);
const wantGgufFormat = run(['inspect', gguf]).split('\n').find((l) => l.startsWith('format:'))?.replace(/^format: +/, 'format: ');
if (savedGgufFormat !== wantGgufFormat) fail(`file://: a GGUF file's format line ${savedGgufFormat}, the CLI's ${wantGgufFormat}`);
await savedCopy.close();
const visitor = await visit(`${origin}/index.html`, [model], 'first visit');
await visitor.evaluate(async () => { await navigator.serviceWorker.ready; });
server.closeAllConnections();
await new Promise((ok) => server.close(ok)); // offline from here on
withRanges.server.close(); withoutRanges.server.close();
await visitor.reload();
await visitor.waitForSelector('body[data-state=loaded]', { timeout: 20000 });
await (await visitor.$('#picker')).uploadFile(model);
await visitor.waitForSelector('body[data-state=ready]', { timeout: 20000 });
const offline = await visitor.$$eval('#verdict-list li', (items) => items.map((li) => `${li.dataset.file}: ${li.dataset.code}`));
if (offline.join() !== 'model.safetensors: ok') fail(`offline, once visited: ${offline}`);

await browser.close();
if (outside.length) fail(`requests left the page: ${outside.join(', ')}`);
const timings = { loadMs, coreMs, openTwentyThousandTensorsMs: manyMs, filterKeystrokeMs, filterPassMs, openTwoGigabytesMs: openMs, twoGigabytesBytesRead: bigRead.blob, describeSevenFilesMs: describeMs, chromium: (await import('node:child_process')).execFileSync(chromium, ['--version']).toString().trim() };
writeFileSync(path.join(outDir, 'browser-timings.json'), `${JSON.stringify(timings, null, 2)}\n`);
rmSync(scratch, { recursive: true, force: true });
if (failures.length) process.exit(1);
console.log(`browser test ok: ${rows.length} corpus files x 3 policies; ${describedFiles.length} GGUF, NumPy and PyTorch files described as by the CLI in ${describeMs.toFixed(0)} ms; page loaded in ${loadMs.toFixed(0)} ms ` +
  `(core ${coreMs.toFixed(0)} ms); 20,000 tensors in ${manyMs.toFixed(0)} ms, filtered in ${filterKeystrokeMs.toFixed(1)} ms a keystroke; 2 GB file opened in ${openMs.toFixed(0)} ms reading ${bigRead.blob} bytes; screenshots in ${shots}`);
