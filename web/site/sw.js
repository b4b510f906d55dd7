// SPDX-License-Identifier: Apache-2.0
// The inspector's service worker: the page works offline once visited. Its files are kept in a
// cache at install; a request goes to the network first (a newer page is always taken) and to
// the cache when the network fails. Only the page's own files: files being inspected are read
// through File.slice and never pass here.
const CACHE = 'safetensors-inspector';
const FILES = ['./', 'index.html', 'app.mjs', 'inspector.mjs', 'remote.mjs', 'style.css', 'safetensors_c.js', 'safetensors_c.wasm'];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(FILES)).then(() => self.skipWaiting()));
});
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    try {
      const response = await fetch(request);
      if (response.ok && response.status === 200) await cache.put(request, response.clone());
      return response;
    } catch (error) {
      const kept = await cache.match(request, { ignoreSearch: true });
      if (kept) return kept;
      throw error;
    }
  })());
});
