// SPDX-License-Identifier: Apache-2.0
// The page: a file picker / drop zone feeding inspector.mjs, which reads through File.slice.
import { api, inspect, preview, summarize } from './inspector.mjs';

// safetensors_c.js (a classic script before this module) defines createSafetensors.
const a = api(await globalThis.createSafetensors());
const $ = (id) => document.getElementById(id);
let current = null; // { file, result, sortKey, ascending }

const read = (file) => async (offset, length) => new Uint8Array(await file.slice(offset, offset + length).arrayBuffer());
const fmt = (n) => n.toLocaleString('en-US');

async function open(file) {
  const result = await inspect(a, read(file), file.size, $('policy').value);
  current = { file, result, sortKey: 'begin', ascending: true };
  const v = result.verdict;
  $('verdict').innerHTML = '';
  const line = document.createElement('p');
  line.className = v.ok ? 'ok' : 'bad';
  line.textContent = v.ok
    ? `${file.name}: ok (${fmt(result.tensors.length)} tensors)`
    : `${file.name}: ${v.code}: ${v.message}${v.offset !== null ? ` (at byte ${fmt(v.offset)}` : ''}` +
      `${v.tensor !== null ? `${v.offset !== null ? ', ' : ' ('}tensor '${v.tensor}'` : ''}${v.offset !== null || v.tensor !== null ? ')' : ''}`;
  $('verdict').append(line);
  for (const w of result.warnings) $('verdict').insertAdjacentHTML('beforeend', '<p class="bad"></p>'), $('verdict').lastChild.textContent = `warning: ${w}`;
  showSummary(result);
  $('tensors').hidden = !v.ok;
  $('values').textContent = '';
  showRows();
}

function showSummary(result) {
  const s = summarize(result.tensors);
  const lines = [];
  if (result.layout) lines.push(`header ${fmt(result.layout.headerLength)} bytes, data at ${fmt(result.layout.dataStart)}`);
  lines.push(`${fmt(s.count)} tensors, ${fmt(s.parameters)} parameters, ${fmt(s.bytes)} bytes`);
  for (const [dtype, row] of Object.entries(s.byDtype)) lines.push(`  ${dtype}: ${fmt(row.tensors)} tensors, ${fmt(row.parameters)} parameters, ${fmt(row.bytes)} bytes`);
  for (const [k, v] of Object.entries(result.metadata)) lines.push(`  ${k} = ${v}`);
  $('summary').innerHTML = '<pre></pre>';
  $('summary').firstChild.textContent = lines.join('\n');
}

function showRows() {
  if (!current) return;
  const needle = $('filter').value;
  const { sortKey, ascending } = current;
  const rows = current.result.tensors.filter((t) => t.name.includes(needle)).sort((x, y) => {
    const [p, q] = sortKey === 'shape' ? [x.shape.join('x'), y.shape.join('x')] : [x[sortKey], y[sortKey]];
    return (p < q ? -1 : p > q ? 1 : 0) * (ascending ? 1 : -1);
  });
  const body = $('rows');
  body.textContent = '';
  for (const t of rows.slice(0, 5000)) {
    const tr = body.insertRow();
    tr.tabIndex = 0;
    for (const cell of [t.name, t.dtype, `[${t.shape.join(', ')}]`, fmt(t.elements), fmt(t.begin)]) tr.insertCell().textContent = cell;
    const show = () => showValues(t);
    tr.addEventListener('click', show);
    tr.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); show(); } });
  }
}

async function showValues(t) {
  const r = await preview(a, read(current.file), current.result.layout, t);
  const out = $('values');
  out.innerHTML = '<h2></h2><pre></pre>';
  out.firstChild.textContent = `${t.name} (${t.dtype} [${t.shape.join(', ')}])`;
  if (r.error) { out.lastChild.textContent = r.error; return; }
  const s = r.stats;
  out.lastChild.textContent = `first ${fmt(r.values.length)} of ${fmt(t.elements)} values: min ${s.min} max ${s.max} ` +
    `mean ${s.mean.toPrecision(6)} std ${s.std.toPrecision(6)} NaN ${s.nan}\n` + Array.from(r.values.slice(0, 64)).join(' ');
}

$('picker').addEventListener('change', () => { if ($('picker').files[0]) open($('picker').files[0]); });
$('policy').addEventListener('change', () => { if (current) open(current.file); });
$('filter').addEventListener('input', showRows);
for (const b of document.querySelectorAll('th button')) {
  b.addEventListener('click', () => {
    if (!current) return;
    current.ascending = current.sortKey === b.dataset.key ? !current.ascending : true;
    current.sortKey = b.dataset.key;
    showRows();
  });
}
const drop = $('drop');
drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => { e.preventDefault(); drop.classList.remove('over'); if (e.dataTransfer.files[0]) open(e.dataTransfer.files[0]); });
