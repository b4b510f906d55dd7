// SPDX-License-Identifier: Apache-2.0
// Builds the inspector as one self-contained HTML file that works opened from file:// (a saved
// copy), where a browser blocks module scripts and fetches: the style, the emscripten loader and
// the page's two modules (joined into one inline module) are inlined, and the WebAssembly module
// travels base64-encoded in a data block that app.mjs hands to the loader as `wasmBinary`. The
// Content-Security-Policy allows exactly these inline scripts and style, by their SHA-256.
// Usage: node standalone.mjs SITE_SOURCE_DIR SAFETENSORS_C_JS SAFETENSORS_C_WASM OUT_HTML
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const [siteDir, loaderFile, wasmFile, outFile] = process.argv.slice(2);
const read = (name) => readFileSync(path.join(siteDir, name), 'utf8');
const hash = (text) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
// A closing tag inside inlined text would end its element early.
const inline = (text, tag) => {
  if (text.toLowerCase().includes(`</${tag}`)) throw new Error(`standalone.mjs: the inlined text holds </${tag}`);
  return text;
};

// app.mjs and the modules it imports (inspector.mjs, remote.mjs: they import nothing) as one
// module: app's imports go, the modules' exports become plain declarations (their names do not
// clash: the browser test runs this build).
const importLine = /^import \{[^}]*\} from '\.\/([a-z]+\.mjs)';\n/gm;
const appSource = read('app.mjs');
const modules = [...appSource.matchAll(importLine)].map((m) => m[1]);
if (!modules.includes('inspector.mjs')) throw new Error('standalone.mjs: app.mjs no longer imports inspector.mjs as expected');
const app = [...modules.map((m) => read(m).replace(/^export /gm, '')), appSource.replace(importLine, '')].join('\n');
const loader = readFileSync(loaderFile, 'utf8');
const style = read('style.css');
const wasm = readFileSync(wasmFile).toString('base64');

let html = read('index.html');
const replace = (pattern, text) => {
  if (!pattern.test(html)) throw new Error(`standalone.mjs: index.html has no ${pattern}`);
  html = html.replace(pattern, () => text);
};
replace(/<link rel="stylesheet" href="style.css">/, `<style>${inline(style, 'style')}</style>`);
replace(/<script src="safetensors_c.js"><\/script>/,
  `<script type="application/octet-stream" id="wasm-base64">${wasm}</script>\n  <script>${inline(loader, 'script')}</script>`);
replace(/<script type="module" src="app.mjs"><\/script>/, `<script type="module">${inline(app, 'script')}</script>`);
replace(/<meta http-equiv="Content-Security-Policy"\s+content="[^"]*">/,
  `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src ${hash(loader)} ${hash(app)} 'wasm-unsafe-eval'; ` +
  `style-src ${hash(style)}; img-src data:; connect-src https: http:">`);
writeFileSync(`${outFile}.tmp`, html);
renameSync(`${outFile}.tmp`, outFile); // never a half-written page
