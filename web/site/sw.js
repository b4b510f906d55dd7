// SPDX-License-Identifier: Apache-2.0
// The inspector's service worker: the page works offline once visited. Its own files are kept in
// a cache at install; a request for one goes to the network first (a newer page is always taken)
// and to the cache when the network fails. Nothing else passes through the cache: files being
// inspected are read through File.slice or from their own site, and a page address with ?url=
// is kept as the page itself (one entry, however many addresses are opened).
const CACHE = 'safetensors-inspector';
const FILES = ['index.html', 'app.mjs', 'inspector.mjs', 'remote.mjs', 'style.css', 'safetensors_c.js',
  'safetensors_c.wasm'];

const scope = () => new URL(self.registration.scope);
/** The cache key of a request for one of the page's files, else null. */
function keyOf(request) {
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== self.location.origin) return null;
  if (request.mode === 'navigate' && url.pathname === scope().pathname) return new URL('index.html', scope()).href;
  const file = FILES.find((f) => new URL(f, scope()).pathname === url.pathname);
  return file ? new URL(file, scope()).href : null;
}

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(FILES)).then(() => self.skipWaiting()));
});
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (event) => {
  const key = keyOf(event.request);
  if (key === null) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    try {
      const response = await fetch(event.request);
      if (response.status === 200) await cache.put(key, response.clone());
      return response;
    } catch (error) {
      const kept = await cache.match(key);
      if (kept) return kept;
      throw error;
    }
  })());
});
