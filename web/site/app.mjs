// SPDX-License-Identifier: Apache-2.0
// The page: file picker, folder picker and drop zone feeding inspector.mjs, which reads the
// files through File.slice only. Views: verdict, summary, tensor table, tree, charts, tensor.
import {
  api, combine, compactCount, defaultSpec, DESCRIBED_FORMATS, describedResult, describeFile, DTYPE_NAMES, histogram, inspect,
  layerOf, mlxRows, plainTensor, sliceValues, summarize, tree,
} from './inspector.mjs';
import { fetchIndex, openUrl, RemoteError, shardUrls } from './remote.mjs';

const $ = (id) => document.getElementById(id);
const fmt = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : String(n));
const el = (tag, props = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') e.className = v; else if (k.startsWith('on')) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
};
const svg = (tag, attrs = {}, ...children) => {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c instanceof Node ? c : String(c));
  return e;
};
const bytesText = (n) => {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0; let v = n;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
  return i === 0 ? `${n} B` : `${v.toFixed(1)} ${units[i]}`;
};
const isIndex = (name) => name.endsWith('.index.json');

// What the page has read (the browser test checks it too): bytes through File.slice.
const reads = { bytes: 0, calls: 0 };
globalThis.inspectorReads = reads;
const reader = (file) => async (offset, length) => {
  const end = Math.min(offset + length, file.size);
  const bytes = new Uint8Array(await file.slice(offset, end).arrayBuffer());
  reads.bytes += bytes.length; reads.calls += 1;
  return bytes;
};

let a = null;
let state = null; // { files, entries: [{name, file, result}], combined, summary, policy, sortKey, ascending, selected }
let generation = 0; // a newer openFiles (another drop, a policy change) makes an older one stop

let pending = null; // what was asked for while the core loads: opened once it is ready

/** Local files as sources: a name, a size, `read` through File.slice and `text` (an index). */
const fileSource = (file) => ({ name: file.name, size: file.size, read: reader(file), text: () => file.text() });

async function openFiles(files) {
  if (files.length === 0) return;
  if (!a) {
    pending = () => openFiles(files);
    $('status').textContent = `${files.length} file${files.length === 1 ? '' : 's'} will be read once the WebAssembly core is loaded…`;
    return;
  }
  const list = [...files];
  const indexFile = list.find((f) => isIndex(f.name));
  const index = indexFile && indexFile.size <= (64 << 20) ? { name: indexFile.name, size: indexFile.size, text: () => indexFile.text() } : null;
  await openSources(list.filter((f) => !isIndex(f.name) && f.name !== 'config.json' && !f.name.startsWith('.')).map(fileSource),
    index, () => openFiles(files));
}

/** A file, or a checkpoint by its `*.index.json`, by URL (remote.mjs: HTTP Range requests). */
async function openAddress(url) {
  if (!a) {
    pending = () => openAddress(url);
    $('status').textContent = `${url} will be read once the WebAssembly core is loaded…`;
    return;
  }
  $('status').textContent = `Reading ${url}…`;
  const failed = (name, e) => ({ name, size: 0, error: e instanceof RemoteError ? e.message : `${url}: ${e.message}` });
  const open = (u) => openUrl(u).then((remote) => ({ ...remote, read: counted(remote.read) }), (e) => failed(u.split('/').pop(), e));
  let sources; let index = null;
  if (isIndex(new URL(url).pathname)) {
    try {
      const text = await fetchIndex(url);
      index = { name: decodeURIComponent(new URL(url).pathname.split('/').pop()), size: text.length, text: async () => text };
      sources = await Promise.all(shardUrls(text, url).map(open));
    } catch (e) {
      sources = [failed(decodeURIComponent(new URL(url).pathname.split('/').pop()), e)];
      index = null;
    }
  } else {
    sources = [await open(url)];
  }
  await openSources(sources, index, () => openAddress(url), url);
}

/** A remote reader whose bytes count in the page's total (the status line, the tests). */
const counted = (read) => async (offset, length) => {
  const bytes = await read(offset, length);
  reads.bytes += bytes.length; reads.calls += 1;
  return bytes;
};

/**
 * A GGUF, NumPy or PyTorch file as `safetensors inspect` describes it, as inspect()'s result: the
 * one module (`a`) has the format table's describers beside the core (docs/web.md).
 */
async function described(src) {
  return describedResult(await describeFile(a, src.read, src.size, src.name), src.size);
}

/**
 * Judges `sources` ({name, size, read} or {name, error}) as one checkpoint, with its `index`
 * ({name, text()}) when there is one; `again` reopens them (a policy change); `address` is the
 * URL they came from (the page's address then links to the view).
 */
async function openSources(sources, index, again, address = null) {
  const mine = ++generation;
  const started = performance.now();
  const readBefore = reads.bytes;
  $('status').textContent = `Reading ${sources.length} file${sources.length === 1 ? '' : 's'}…`;
  const policy = $('policy').value;
  const list = [...sources].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  const entries = [];
  for (const src of list) {
    let result;
    try {
      if (src.error) throw new RemoteError(src.error);
      result = await inspect(a, src.read, src.size, policy);
      if (!result.verdict.ok && DESCRIBED_FORMATS.has(result.format)) {
        const format = result.format;
        try {
          result = await described(src);
        } catch (e) {
          result.verdict.message += ` (not described: ${e.message})`;
        }
        result.sniffed = format;
      }
    } catch (e) {
      result = { verdict: { ok: false, code: 'IoError', message: e.message, offset: null, tensor: null }, tensors: [], metadata: new Map(), warnings: [], mlx: [] };
    }
    entries.push({ name: src.name, size: src.size, read: src.read, stats: src.stats, result });
    if (mine !== generation) return;
  }
  const indexText = index ? await index.text() : null;
  if (mine !== generation) return;
  if (indexText !== null && !address) reads.bytes += index.size;
  const combined = combine(entries, indexText, index?.name);
  const summary = summarize(combined.tensors);
  state = { again, address, entries, combined, summary, policy, sortKey: 'begin', ascending: true, selected: null, indexName: index?.name ?? null, sorted: null, matched: [], view: [], collapsed: new Set(), window: null, rowHeight: undefined };
  showVerdicts();
  const any = combined.tensors.length > 0 || entries.some((e) => e.result.verdict.ok);
  $('views').hidden = !any;
  if (any) {
    showSummary(); showRows(); showTree(); showCharts(); resetTensor();
    selectTab($('tab-summary'), false);
  } else {
    for (const id of ['summary', 'tensors', 'tree', 'charts', 'tensor']) $(id).hidden = true;
  }
  const ms = performance.now() - started;
  // By URL: what came over the network (the first request's head included), and in how many requests.
  const requests = entries.reduce((n, e) => n + (e.stats?.requests ?? 0), 0);
  const bytes = address ? entries.reduce((n, e) => n + (e.stats?.bytes ?? 0), 0) + (indexText?.length ?? 0) : reads.bytes - readBefore;
  $('status').textContent = `Judged ${entries.length} file${entries.length === 1 ? '' : 's'} in ${ms.toFixed(0)} ms, reading ${bytesText(bytes)}` +
    `${address ? ` in ${fmt(requests + (indexText === null ? 0 : 1))} request${requests === 1 && indexText === null ? '' : 's'}` : ''}.`;
  document.body.dataset.openMs = ms.toFixed(1);
  document.body.dataset.state = 'ready';
  updateAddress();
}

// ---- The page's address: a link to the view of a file opened by URL -------------------------
// ?url=FILE#tab=tensors&tensor=NAME&filter=TEXT (local files cannot be linked: no address then).

function updateAddress() {
  if (!state?.address) return;
  const view = new URLSearchParams();
  const tab = document.querySelector('[role=tab][aria-selected=true]')?.id.replace(/^tab-/, '');
  if (tab && tab !== 'summary') view.set('tab', tab);
  if (state.selected) view.set('tensor', state.selected.t.name);
  if ($('filter').value) view.set('filter', $('filter').value);
  const fragment = view.toString();
  history.replaceState(null, '', `?url=${encodeURIComponent(state.address)}${fragment ? `#${fragment}` : ''}`);
}

/** Opens ?url= and restores the view its fragment names. */
async function openFromAddress() {
  const url = new URLSearchParams(location.search).get('url');
  if (!url) return;
  const view = new URLSearchParams(location.hash.slice(1));
  $('url').value = url;
  await openAddress(url);
  if (!state?.address) return;
  if (view.get('filter')) { $('filter').value = view.get('filter'); showRows(); }
  const tensor = view.get('tensor') && state.combined.tensors.find((t) => t.name === view.get('tensor'));
  if (tensor) openTensor(tensor);
  const tab = view.get('tab') && $(`tab-${view.get('tab')}`);
  if (tab?.getAttribute('role') === 'tab') selectTab(tab, false);
  updateAddress();
}

function verdictLine(name, v) {
  if (v.ok) return `${name}: ok`;
  const where = [];
  if (v.offset !== null) where.push(`at byte ${fmt(v.offset)}`);
  if (v.tensor !== null) where.push(`tensor '${v.tensor}'`);
  return `${name}: ${v.code}: ${v.message}${where.length ? ` (${where.join(', ')})` : ''}`;
}

function showVerdicts() {
  const box = $('verdict');
  box.textContent = '';
  const list = el('ul', { class: 'verdicts', id: 'verdict-list' });
  for (const e of state.entries) {
    const v = e.result.verdict;
    const li = el('li', { class: v.ok ? 'ok' : 'bad' }, verdictLine(e.name, v));
    li.dataset.file = e.name;
    li.dataset.code = v.code;
    li.dataset.message = v.message ?? '';
    li.dataset.offset = v.offset ?? '';
    li.dataset.tensor = v.tensor ?? '';
    const d = e.result.described;
    if (d?.ok) {
      li.classList.add('described');
      if (d.format) li.append(el('div', { class: 'format' }, `format: ${d.format}`));
      for (const note of d.notes) li.append(el('div', { class: v.ok ? 'note' : 'bad note' }, `note: ${note}`));
    }
    for (const w of e.result.warnings) li.append(el('div', { class: 'warn' }, `warning: ${w}`));
    if (e.result.mlx?.error) li.append(el('div', { class: 'warn' }, `MLX layers: ${e.result.mlx.error.message}`));
    list.append(li);
  }
  box.append(list);
  if (state.entries.length > 1 || state.indexName) {
    const ok = state.entries.filter((e) => e.result.verdict.ok).length;
    const head = `${state.indexName ? `Checkpoint (${state.indexName})` : 'Files'}: ${ok} of ${state.entries.length} valid`;
    box.append(el('p', { class: state.combined.problems.length ? 'bad' : 'ok', id: 'checkpoint' },
      state.combined.problems.length ? `${head}; ${state.combined.problems.length} problem(s) as one checkpoint:` : `${head}, consistent as one checkpoint.`));
    if (state.combined.problems.length) {
      const ul = el('ul', { class: 'problems' });
      for (const p of state.combined.problems.slice(0, 200)) ul.append(el('li', { class: 'bad' }, p));
      box.append(ul);
    }
  }
}

function table(rows, header) {
  const t = el('table', { class: 'compact' });
  t.append(el('thead', {}, el('tr', {}, ...header.map((h, i) => el('th', { class: i > 0 ? 'num' : '' }, h)))));
  const body = el('tbody');
  for (const r of rows) body.append(el('tr', {}, ...r.map((c, i) => el('td', { class: i > 0 ? 'num' : '' }, c))));
  t.append(body);
  return t;
}

function showSummary() {
  const { summary: s, entries } = state;
  const box = $('summary');
  box.textContent = '';
  const dl = el('dl', { class: 'facts' });
  const fact = (k, v) => dl.append(el('dt', {}, k), el('dd', {}, v));
  const valid = entries.filter((e) => e.result.verdict.ok);
  const size = entries.reduce((n, e) => n + e.size, 0);
  fact(entries.length === 1 ? 'file' : 'files', entries.length === 1 ? entries[0].name : `${entries.length} (${valid.length} valid)`);
  fact('size', `${bytesText(size)} (${fmt(size)} bytes)`);
  if (valid.length === 1 && valid[0].result.described) fact('format', valid[0].result.described.format);
  if (valid.length === 1 && valid[0].result.layout) {
    const l = valid[0].result.layout;
    fact('header', `${fmt(l.headerLength)} bytes, data starts at byte ${fmt(l.dataStart)}`);
  }
  fact('tensors', fmt(s.count));
  fact('parameters', `${fmt(s.parameters)} (${compactCount(s.parameters)})`);
  fact('data', `${bytesText(s.bytes)} (${fmt(s.bytes)} bytes)`);
  // A described file's rows carry no data offsets the page could check (its table shows the format's own column).
  const describedOnly = valid.length > 0 && valid.every((e) => e.result.described);
  if (!describedOnly) fact('alignment', s.count === 0 ? '—' : s.elementAligned
    ? `every tensor aligned to its element size (all data at least ${s.minAlign}-byte aligned)`
    : `some tensors are not aligned to their element size (smallest alignment ${s.minAlign})`);
  box.append(dl);
  box.append(el('h2', {}, 'Per dtype'));
  const share = (part, whole) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '—');
  const dtypes = table(Object.entries(s.byDtype).map(([d, r]) => [d, fmt(r.tensors), `${fmt(r.parameters)} (${compactCount(r.parameters)})`,
    share(r.parameters, s.parameters), bytesText(r.bytes), share(r.bytes, s.bytes)]),
  ['dtype', 'tensors', 'parameters', 'of all', 'bytes', 'of all']);
  dtypes.id = 'dtype-table';
  box.append(dtypes);
  const layers = valid.flatMap((e) => e.result.mlx?.layers ?? []);
  if (layers.length) {
    box.append(el('h2', {}, `MLX quantized layers (${layers.length})`));
    box.append(table(layers.slice(0, 500).map((l) => [l.path, `${l.mode} ${l.bits}-bit`, `g${l.groupSize}${l.ambiguous ? ' (guessed)' : ''}`,
      `${fmt(l.rows)} × ${fmt(l.cols)}`]), ['layer', 'mode', 'group', 'logical shape']));
  }
  for (const e of valid) {
    const meta = [...e.result.metadata];
    if (meta.length === 0) continue;
    box.append(el('h2', {}, valid.length === 1 ? 'Metadata' : `Metadata of ${e.name}`));
    const m = el('dl', { class: 'facts meta' });
    for (const [k, v] of meta) m.append(el('dt', {}, k), el('dd', {}, v.length > 2000 ? `${v.slice(0, 2000)}… (${fmt(v.length)} characters)` : v));
    box.append(m);
  }
}

// ---- Tensor table -------------------------------------------------------------------------
// Only the rows in view are in the DOM (a header of 20,000 tensors stays fast to filter and
// scroll): spacer rows stand for the others, sized by the rendered rows' mean height.

const FILTER_DELAY_MS = 80; // typing waits this long after the last keystroke before filtering
const OVERSCAN = 12; // rows rendered above and below the visible ones

function matcher(text) {
  const m = /^\/(.+)\/([a-z]*)$/.exec(text);
  if (m) {
    try { const re = new RegExp(m[1], m[2]); return (name) => re.test(name); } catch { /* plain text below */ }
  }
  return (name) => name.includes(text);
}

/** The tensors in the table's order (cached until the sort changes). */
function sortedTensors() {
  if (state.sorted) return state.sorted;
  const { sortKey, ascending } = state;
  const key = (t) => (sortKey === 'shape' ? t.shape.length * 1e15 + t.shape.reduce((x, y) => x * y, 1) : sortKey === 'begin' ? [t.shard ?? '', t.begin] : t[sortKey]);
  const cmp = (p, q) => (Array.isArray(p) ? (p[0] < q[0] ? -1 : p[0] > q[0] ? 1 : p[1] - q[1]) : p < q ? -1 : p > q ? 1 : 0);
  state.sorted = [...state.combined.tensors].sort((x, y) => cmp(key(x), key(y)) * (ascending ? 1 : -1));
  return state.sorted;
}

/**
 * The table's rows: the matching tensors, or with "Group by layer" each layer's row (its totals,
 * a button that folds it) before its tensors, layers in the order of their first tensor.
 */
function buildView() {
  const tensors = state.matched;
  if (!$('group').checked) return tensors;
  const groups = new Map();
  for (const t of tensors) {
    const layer = (t.layer ??= layerOf(t.name));
    let g = groups.get(layer);
    if (!g) groups.set(layer, (g = { kind: 'group', layer, tensors: [], parameters: 0, bytes: 0 }));
    g.tensors.push(t); g.parameters += t.elements; g.bytes += t.bytes;
  }
  const view = [];
  for (const g of groups.values()) {
    view.push(g);
    if (!state.collapsed.has(g.layer)) for (const t of g.tensors) view.push(t);
  }
  return view;
}

function showRows() {
  const started = performance.now();
  const text = $('filter').value;
  const match = matcher(text);
  state.matched = text === '' ? sortedTensors() : sortedTensors().filter((t) => match(t.name));
  state.view = buildView();
  state.window = null;
  $('rows-scroll').scrollTop = 0;
  renderRows();
  const total = state.combined.tensors.length;
  $('shown').textContent = `${fmt(state.matched.length)} of ${fmt(total)} tensors`;
  for (const th of document.querySelectorAll('#tensors th')) {
    const b = th.querySelector('button');
    th.setAttribute('aria-sort', b.dataset.key === state.sortKey ? (state.ascending ? 'ascending' : 'descending') : 'none');
  }
  document.body.dataset.filterMs = (performance.now() - started).toFixed(1);
  updateAddress();
}

const spacer = (height) => {
  const tr = el('tr', { class: 'spacer', 'aria-hidden': 'true' }, el('td', { colspan: '6' }));
  tr.style.height = `${height}px`;
  return tr;
};

/** Renders the rows in view of the scroll box; keeps the focused row focused. */
function renderRows() {
  const box = $('rows-scroll');
  const body = $('rows');
  const rows = state.view;
  const height = state.rowHeight ?? 28;
  const first = Math.max(0, Math.floor(box.scrollTop / height) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((box.scrollTop + Math.max(box.clientHeight, 600)) / height) + OVERSCAN);
  if (state.window && state.window[0] === first && state.window[1] === last) return;
  state.window = [first, last];
  const focused = document.activeElement?.closest?.('#rows tr')?.dataset.index;
  const multi = state.entries.length > 1;
  const fragment = document.createDocumentFragment();
  if (first > 0) fragment.append(spacer(first * height));
  for (let i = first; i < last; ++i) {
    const t = rows[i];
    if (t.kind === 'group') { fragment.append(groupRow(t, i)); continue; }
    const tr = document.createElement('tr');
    tr.tabIndex = 0;
    tr.dataset.name = t.name;
    tr.dataset.index = i;
    const where = t.described ? t.extra : fmt(t.begin); // a described file's last column: offset, descr, notes
    const offset = multi ? `${t.shard} @ ${where}` : where;
    [t.name, t.dtype, `[${t.shape.join(', ')}]`, fmt(t.elements), fmt(t.bytes), offset].forEach((c, j) => {
      const td = tr.insertCell(); td.textContent = c; if (j >= 3) td.className = j === 5 ? 'num wide' : 'num';
    });
    fragment.append(tr);
  }
  if (last < rows.length) fragment.append(spacer((rows.length - last) * height));
  body.replaceChildren(fragment);
  const drawn = last - first;
  if (drawn > 0 && state.rowHeight === undefined) {
    const drawnRows = body.querySelectorAll('tr[data-index]');
    const measured = (drawnRows[drawnRows.length - 1].getBoundingClientRect().bottom - drawnRows[0].getBoundingClientRect().top) / drawnRows.length;
    if (measured > 0) { state.rowHeight = measured; state.window = null; renderRows(); return; }
  }
  if (focused !== undefined) focusable(body.querySelector(`tr[data-index="${focused}"]`))?.focus({ preventScroll: true });
}

/** A layer's row: a button folding its tensors, their count, parameters and bytes. */
function groupRow(g, i) {
  const tr = document.createElement('tr');
  tr.className = 'group';
  tr.dataset.index = i;
  tr.dataset.layer = g.layer;
  const open = !state.collapsed.has(g.layer);
  const head = tr.insertCell();
  head.colSpan = 3;
  head.append(el('button', { type: 'button', class: 'group-toggle', 'aria-expanded': String(open) }, g.layer),
    el('span', { class: 'muted' }, ` ${fmt(g.tensors.length)} tensor${g.tensors.length === 1 ? '' : 's'}`));
  for (const [text, cls] of [[`${fmt(g.parameters)} (${compactCount(g.parameters)})`, 'num'], [bytesText(g.bytes), 'num'], ['', 'num wide']]) {
    const td = tr.insertCell(); td.textContent = text; td.className = cls;
  }
  return tr;
}

/** What takes focus in a row: a layer's button, or a tensor's row itself. */
const focusable = (tr) => (tr?.classList.contains('group') ? tr.querySelector('button') : tr);

function toggleGroup(layer) {
  if (state.collapsed.has(layer)) state.collapsed.delete(layer); else state.collapsed.add(layer);
  state.view = buildView();
  state.window = null;
  renderRows();
  $('rows').querySelector(`tr.group[data-layer="${CSS.escape(layer)}"] button`)?.focus({ preventScroll: true });
}

/** Focuses row `i` of the view, scrolling it into the box first when it is not rendered. */
function focusRow(i) {
  if (i < 0 || i >= state.view.length) return;
  const box = $('rows-scroll');
  let tr = $('rows').querySelector(`tr[data-index="${i}"]`);
  if (!tr) {
    box.scrollTop = i * (state.rowHeight ?? 28) - box.clientHeight / 2;
    renderRows();
    tr = $('rows').querySelector(`tr[data-index="${i}"]`);
  }
  focusable(tr)?.focus({ preventScroll: true });
  tr?.scrollIntoView({ block: 'nearest' });
}

// ---- Tree ----------------------------------------------------------------------------------

function showTree() {
  const box = $('tree');
  box.textContent = '';
  const root = tree(state.combined.tensors);
  box.append(el('p', { class: 'muted' }, `${fmt(root.parameters)} parameters in ${fmt(root.tensors)} tensors, by name prefix.`));
  box.append(treeList(root));
}

/** One level of the tree; a node's children are built when it is first opened. */
function treeList(node) {
  const ul = el('ul', { class: 'tree' });
  const children = [...node.children.values()];
  for (const c of children.slice(0, 5000)) {
    const label = `${c.name} — ${fmt(c.parameters)} params${c.tensors > 1 ? `, ${fmt(c.tensors)} tensors` : ''}`;
    if (c.children.size === 0) {
      const b = el('button', { class: 'leaf', onclick: () => openTensor(c.tensor) }, label, el('span', { class: 'muted' }, ` ${c.tensor.dtype} [${c.tensor.shape.join(', ')}]`));
      ul.append(el('li', {}, b));
    } else {
      const d = el('details', {}, el('summary', {}, label));
      d.addEventListener('toggle', () => { if (d.open && d.children.length === 1) d.append(treeList(c)); });
      ul.append(el('li', {}, d));
    }
  }
  if (children.length > 5000) ul.append(el('li', { class: 'muted' }, `… ${fmt(children.length - 5000)} more`));
  return ul;
}

// ---- Charts --------------------------------------------------------------------------------

/** A horizontal bar chart of `items` [{label, value}] as inline SVG. */
function barChart(title, items, format) {
  const row = 18; const labelWidth = 190; const width = 640; const barWidth = width - labelWidth - 110;
  const max = Math.max(1, ...items.map((i) => i.value));
  const chart = svg('svg', { viewBox: `0 0 ${width} ${items.length * row + 6}`, role: 'img', 'aria-label': title, class: 'chart' });
  chart.append(svg('title', {}, title));
  items.forEach((item, i) => {
    const y = i * row + 3;
    const w = Math.max(1, (item.value / max) * barWidth);
    chart.append(svg('text', { x: labelWidth - 6, y: y + 12, 'text-anchor': 'end', class: 'label' }, item.label.length > 30 ? `…${item.label.slice(-29)}` : item.label));
    chart.append(svg('rect', { x: labelWidth, y: y + 2, width: w, height: row - 5, class: 'bar' }, svg('title', {}, `${item.label}: ${format(item.value)}`)));
    chart.append(svg('text', { x: labelWidth + w + 4, y: y + 12, class: 'value' }, format(item.value)));
  });
  return el('figure', {}, el('figcaption', {}, title), chart);
}

function showCharts() {
  const box = $('charts');
  box.textContent = '';
  const s = state.summary;
  const dtypes = Object.entries(s.byDtype);
  box.append(barChart('Parameters per dtype', dtypes.map(([d, r]) => ({ label: d, value: r.parameters })), fmt));
  box.append(barChart('Bytes per dtype', dtypes.map(([d, r]) => ({ label: d, value: r.bytes })), bytesText));
  const layers = s.byLayer.slice(0, 200);
  const note = s.byLayer.length > 200 ? ` (first 200 of ${fmt(s.byLayer.length)})` : '';
  box.append(barChart(`Parameters per layer${note}`, layers.map((l) => ({ label: l.layer, value: l.parameters })), fmt));
  box.append(barChart(`Bytes per layer${note}`, layers.map((l) => ({ label: l.layer, value: l.bytes })), bytesText));
}

// ---- One tensor ----------------------------------------------------------------------------

function resetTensor() {
  state.selected = null;
  $('slice-form').hidden = true;
  $('tensor-hint').hidden = false;
  $('tensor-out').textContent = '';
}

function layerOfWeight(t) {
  return t.entry.result.mlx?.layers?.find((l) => l.weight?.name === t.name) ?? null;
}

function openTensor(t) {
  const layer = layerOfWeight(t);
  state.selected = { t, layer };
  $('tensor-hint').hidden = true;
  $('slice-form').hidden = false;
  $('tensor-title').textContent = t.name;
  const where = state.entries.length > 1 ? `${t.shard}, ` : '';
  if (t.described) {
    // A row of a described file (GGUF, NumPy, PyTorch): what `inspect` lists, and its values when
    // its bytes are plain in the file (t.data); otherwise one line saying why they are not shown.
    const d = t.entry.result.described;
    $('tensor-info').textContent = `${where}${t.dtype} [${t.shape.join(', ')}], ${fmt(t.elements)} values, ${fmt(t.bytes)} bytes` +
      `${t.extra ? `; ${d.extraTitle}: ${t.extra}` : ''}.`;
    selectTab($('tab-tensor'), true);
    if (!t.data) {
      $('slice-form').hidden = true;
      $('tensor-out').textContent = `The values are not shown: ${t.noData}; \`safetensors convert\` turns this file into SafeTensors.`;
      return;
    }
    $('slice-label').textContent = 'Slice (numpy)';
    $('slice').value = defaultSpec(t.shape, 4096, a.m._safetensors_dtype_bits(DTYPE_NAMES.indexOf(t.data.dtype)));
    showValues();
    return;
  }
  $('tensor-info').textContent = layer
    ? `${where}MLX ${layer.mode} ${layer.bits}-bit, group ${layer.groupSize}: U32 [${t.shape.join(', ')}] holds ${fmt(layer.rows)} × ${fmt(layer.cols)} values, dequantized with ${layer.scales.name}${layer.biases ? ` and ${layer.biases.name}` : ''}.`
    : `${where}${t.dtype} [${t.shape.join(', ')}], ${fmt(t.elements)} values, bytes ${fmt(t.begin)}–${fmt(t.end)} of the data.`;
  $('slice-label').textContent = layer ? 'Rows (start:stop)' : 'Slice (numpy)';
  $('slice').value = layer ? `0:${Math.max(1, Math.min(layer.rows, Math.floor(4096 / Math.max(layer.cols, 1))))}` : defaultSpec(t.shape, 4096, a.m._safetensors_dtype_bits(t.dtypeId));
  selectTab($('tab-tensor'), true);
  showValues();
}

async function showValues() {
  const { t, layer } = state.selected;
  const out = $('tensor-out');
  out.textContent = 'Reading…';
  const read = t.entry.read;
  const before = reads.bytes;
  const plain = t.described ? plainTensor(t, read) : null;
  const r = layer
    ? await mlxRows(a, read, t.entry.result, layer, $('slice').value, state.policy)
    : plain ? await sliceValues(a, plain.read, plain.result, plain.tensor, $('slice').value, 'reference')
      : await sliceValues(a, read, t.entry.result, t, $('slice').value, state.policy);
  out.textContent = '';
  if (r.error) { out.append(el('p', { class: 'bad' }, r.error.message)); return; }
  const s = r.stats;
  const num = (v) => (Number.isFinite(v) ? Number(v.toPrecision(6)).toString() : String(v));
  out.append(el('p', { class: 'muted' }, `shape [${r.shape.join(', ')}], ${fmt(r.values.length)} values, ${fmt(reads.bytes - before)} bytes read; ` +
    'the statistics and histogram are of these values (an empty slice box: the whole tensor).'));
  const dl = el('dl', { class: 'facts stats' });
  for (const [k, v] of [['min', num(s.min)], ['max', num(s.max)], ['mean', num(s.mean)], ['std', num(s.std)],
    ['NaN', fmt(s.nan)], ['+Inf', fmt(s.posInf)], ['-Inf', fmt(s.negInf)], ['zeros', fmt(s.zeros)]]) dl.append(el('dt', {}, k), el('dd', {}, v));
  out.append(dl);
  out.append(histogramChart(histogram(r.values, s)));
  out.append(el('pre', { class: 'values' }, valuesText(r.values, r.shape, num)));
}

function histogramChart(h) {
  const width = 640; const height = 140;
  const max = Math.max(1, ...h.counts);
  const bw = width / h.counts.length;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height + 18}`, role: 'img', 'aria-label': 'Histogram of the finite values', class: 'chart' });
  h.counts.forEach((c, i) => {
    const bh = (c / max) * height;
    const lo = h.min + ((h.max - h.min) * i) / h.counts.length;
    chart.append(svg('rect', { x: i * bw + 0.5, y: height - bh, width: Math.max(bw - 1, 1), height: bh, class: 'bar' }, svg('title', {}, `≥ ${lo.toPrecision(4)}: ${c}`)));
  });
  chart.append(svg('text', { x: 0, y: height + 14, class: 'value' }, Number.isFinite(h.min) ? h.min.toPrecision(4) : ''));
  chart.append(svg('text', { x: width, y: height + 14, 'text-anchor': 'end', class: 'value' }, Number.isFinite(h.max) ? h.max.toPrecision(4) : ''));
  return el('figure', {}, el('figcaption', {}, 'Histogram (finite values)'), chart);
}

/** numpy-like text of the first values: rows of the last axis, at most 2000 values. */
function valuesText(values, shape, num) {
  const limit = 2000;
  const last = shape.length ? Math.max(shape[shape.length - 1], 1) : 1;
  const lines = [];
  for (let i = 0; i < Math.min(values.length, limit); i += last) {
    lines.push(Array.from(values.subarray(i, Math.min(i + last, values.length, limit)), num).join(' '));
  }
  if (values.length > limit) lines.push(`… ${fmt(values.length - limit)} more`);
  return lines.join('\n');
}

// ---- Tabs, events --------------------------------------------------------------------------

function selectTab(tab, focus) {
  for (const t of document.querySelectorAll('[role=tab]')) {
    const on = t === tab;
    t.setAttribute('aria-selected', on ? 'true' : 'false');
    t.tabIndex = on ? 0 : -1;
    $(t.getAttribute('aria-controls')).hidden = !on;
  }
  // The table's rows are measured once they can be: when their panel shows.
  if (tab.id === 'tab-tensors' && state?.view && state.rowHeight === undefined) { state.window = null; renderRows(); }
  if (focus) tab.focus();
  updateAddress();
}

const tabs = [...document.querySelectorAll('[role=tab]')];
for (const t of tabs) {
  t.addEventListener('click', () => selectTab(t, false));
  t.addEventListener('keydown', (e) => {
    const i = tabs.indexOf(t);
    const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
    if (next === undefined) return;
    e.preventDefault();
    selectTab(tabs[(next + tabs.length) % tabs.length], true);
  });
}
$('slice-form').addEventListener('submit', (e) => { e.preventDefault(); showValues(); });
$('picker').addEventListener('change', () => openFiles($('picker').files));
$('folder').addEventListener('change', () => openFiles($('folder').files));
$('policy').addEventListener('change', () => { if (state) state.again(); });
$('url-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const url = $('url').value.trim();
  if (url) openAddress(new URL(url, location.href).href);
});
let filterTimer = 0;
$('filter').addEventListener('input', () => {
  clearTimeout(filterTimer);
  filterTimer = setTimeout(() => { if (state) showRows(); }, FILTER_DELAY_MS);
});
$('rows-scroll').addEventListener('scroll', () => { if (state?.view) renderRows(); }, { passive: true });
$('group').addEventListener('change', () => { if (state) showRows(); });
$('rows').addEventListener('click', (e) => {
  const tr = e.target.closest('tr[data-index]');
  if (!tr) return;
  const item = state.view[Number(tr.dataset.index)];
  if (item.kind === 'group') { if (e.target.closest('button')) toggleGroup(item.layer); return; }
  openTensor(item);
});
$('rows').addEventListener('keydown', (e) => {
  const tr = e.target.closest('tr[data-index]');
  if (!tr) return;
  const i = Number(tr.dataset.index);
  if ((e.key === 'Enter' || e.key === ' ') && state.view[i].kind !== 'group') { e.preventDefault(); openTensor(state.view[i]); }
  if (e.key === 'ArrowDown') { e.preventDefault(); focusRow(i + 1); }
  if (e.key === 'ArrowUp') { e.preventDefault(); focusRow(i - 1); }
});
for (const b of document.querySelectorAll('#tensors th button')) {
  b.addEventListener('click', () => {
    if (!state) return;
    state.ascending = state.sortKey === b.dataset.key ? !state.ascending : true;
    state.sortKey = b.dataset.key;
    state.sorted = null;
    showRows();
  });
}

/** The files of a drop, folders walked (webkitGetAsEntry). */
async function droppedFiles(dataTransfer) {
  const entries = [...dataTransfer.items].map((i) => i.webkitGetAsEntry?.()).filter(Boolean);
  if (entries.length === 0) return [...dataTransfer.files];
  const files = [];
  const walk = async (entry) => {
    if (entry.isFile) { files.push(await new Promise((ok, fail) => entry.file(ok, fail))); return; }
    const r = entry.createReader();
    for (;;) {
      const batch = await new Promise((ok, fail) => r.readEntries(ok, fail));
      if (batch.length === 0) break;
      for (const e of batch) await walk(e);
    }
  };
  for (const e of entries) await walk(e);
  return files;
}
const drop = $('drop');
drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', async (e) => { e.preventDefault(); drop.classList.remove('over'); openFiles(await droppedFiles(e.dataTransfer)); });
// Dropping anywhere else must not make the browser navigate away to the file.
window.addEventListener('dragover', (e) => e.preventDefault());
window.addEventListener('drop', (e) => e.preventDefault());

// safetensors_c.js (a classic script before this module) defines createSafetensors. The one-file
// build (web/tools/standalone.mjs, for file://) carries the module base64-encoded in #wasm-base64.
const loadStarted = performance.now();
const inlined = document.getElementById('wasm-base64');
const wasmBinary = inlined ? Uint8Array.from(atob(inlined.textContent), (c) => c.charCodeAt(0)) : undefined;
a = api(await globalThis.createSafetensors(wasmBinary ? { wasmBinary } : {}));
const loadMs = performance.now() - loadStarted;
document.body.dataset.loadMs = loadMs.toFixed(1);
document.body.dataset.state = 'loaded';
$('status').textContent = `Ready (core loaded in ${loadMs.toFixed(0)} ms).`;
$('footer').textContent = `safetensors-cxx ${a.version}, WebAssembly. Files never leave this page.`;
if (pending) pending(); else openFromAddress();
// Served, the page offers itself as one file (web/tools/standalone.mjs) for a copy that works from file://.
if (!inlined) {
  $('footer').append(' ', el('a', { href: 'safetensors-inspector.html', download: 'safetensors-inspector.html' }, 'Save the inspector as one file'),
    ' (it works opened from disk).');
}
// Served over HTTP(S), a service worker (sw.js) keeps the page's files: it works offline once visited.
if (!inlined && 'serviceWorker' in navigator && window.isSecureContext) {
  navigator.serviceWorker.register('sw.js').catch((e) => console.warn(`no offline copy: ${e.message}`));
}
