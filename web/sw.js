importScripts("/push-sw.js");

// The app-shell service worker: the app opens from this phone's own copy at once, and offline it
// still opens (main.js then shows the exercise book and says that play needs the connection).
//
// The cache is named after the shell version, a digest of every file of the web app that the server
// writes in place of the placeholder below as it serves this file (dotfight/server/static.py). A
// deploy that changes any file therefore changes this script: the browser installs the new worker,
// which fills a new cache, takes over and drops the old cache; the open app notices the change and
// loads its next screen whole from the new version (never a mix of two versions).
const VERSION = "__SHELL_VERSION__";
const PREFIX = "dotfight-shell-";
const CACHE = PREFIX + VERSION;

// What a start with no connection needs: the shell, the cover, how to play and the offline screen.
// Other screens' modules join the cache the first time the app fetches them.
const SHELL = [
  "/",
  "/app.css",
  "/manifest.webmanifest",
  "/offline.js",
  "/js/main.js",
  "/js/book.js",
  "/js/nav.js",
  "/js/cover.js",
  "/js/start.js",
  "/js/api.js",
  "/js/paper.js",
  "/js/ui.js",
  "/js/words.js",
  "/js/howto.js",
];

// The app's own static files (people.css: the styles pages between two people load on first use);
// everything else (the API, the socket, pictures of pages) is the server's to answer, live.
const STATIC = /^\/(?:app\.css|people\.css|manifest\.webmanifest|offline\.js|js\/[\w-]+\.js|icons\/[\w-]+\.png)$/;
// Screens of the app: all are the same index.html, which reads the address itself.
const SCREEN = /^\/(?:index\.html|p\/[^/]+\/?)?$/;

// On a phone's first install the page that registered this worker says which of its files it has
// just loaded (main.js): the server checked those copies moments ago, so the shell takes them from the
// browser's HTTP cache rather than asking again (a 304 each, half of the cover's responses). An update
// asks the server for everything: the HTTP cache may then hold the version being replaced.
let told = () => {};
const loadedByPage = new Promise((resolve) => { told = resolve; });
self.addEventListener("message", (event) => {
  const data = event.data || {};
  if (data.type === "loaded" && Array.isArray(data.paths)) told(new Set(data.paths));
});
const TOLD_WAIT_MS = 1000;

async function fillShell() {
  const first = !(await caches.keys()).some((name) => name.startsWith(PREFIX));
  const waited = new Promise((resolve) => setTimeout(() => resolve(new Set()), TOLD_WAIT_MS));
  const fresh = first ? await Promise.race([loadedByPage, waited]) : new Set();
  const cache = await caches.open(CACHE);
  await cache.addAll(SHELL.map((path) => new Request(path, { cache: fresh.has(path) ? "force-cache" : "default" })));
}

self.addEventListener("install", (event) => {
  event.waitUntil(fillShell().then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    const names = await caches.keys();
    await Promise.all(names.filter((n) => n.startsWith(PREFIX) && n !== CACHE).map((n) => caches.delete(n)));
    await self.clients.claim();
  })());
});

/** Answers from this version's cache; a miss is fetched and kept (only whole, good answers). */
async function fromShell(request, key = request) {
  const cache = await caches.open(CACHE);
  const kept = await cache.match(key);
  if (kept) return kept;
  const answer = await fetch(request);
  if (answer.ok && answer.type === "basic" && !answer.redirected) await cache.put(key, answer.clone());
  return answer;
}

self.addEventListener("fetch", (event) => {
  const { request } = event;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === "navigate" && SCREEN.test(url.pathname)) {
    event.respondWith(fromShell(request, "/"));
  } else if (STATIC.test(url.pathname)) {
    event.respondWith(fromShell(request));
  }
});
