// The app's entry: picks the screen for the URL (cover, exercise book, how to play, a page, or a
// page's replay), keeps a seat token that arrived in a link's fragment, and exposes a tiny hook for
// the browser tests.

import * as book from "./book.js";
import { ownPop, pagePath, setRouter } from "./nav.js";
import { closeTopSheet } from "./ui.js";

let current = null;

/** Reads a link's fragment (#seat=…&side=…&view=…) and keeps the seat in the book, off the URL bar. */
function takeSeat(id, frag) {
  const token = frag.get("seat");
  if (!token) return {};
  const side = ["blue", "red"].includes(frag.get("side")) ? frag.get("side") : null;
  const known = book.entry(id);
  if (known && known.token !== token) book.forget(id);
  book.remember({ id, token, side: side || (known && known.token === token ? known.side : undefined) });
  // The token stays on the device (the book), not in the address bar where it could be shared by accident.
  const view = frag.get("view");
  history.replaceState(null, "", pagePath(id, view));
  return { token, side };
}

// Each screen's modules load on first use, so a screen loads only its own. Those a screen needs
// beyond main.js's are asked for all at once (modulepreload) instead of one import level at a time.
const COMMON = ["api.js", "nav.js", "paper.js", "start.js", "ui.js"];
const PLAY = [...COMMON, "animate.js", "model.js", "render.js"];
const screens = {
  cover: () => load(["cover.js", ...COMMON], () => import("./cover.js")),
  // keyplay.js, the page menu, the share sheet and the end sheet load on first use (input.js, game.js, pageend.js).
  page: () => load(["game.js", ...PLAY, "aim.js", "announce.js", "bars.js", "controls.js", "handover.js",
    "input.js", "narrate.js", "notice.js", "options.js", "pagedom.js", "pageend.js", "people.js", "preview.js",
    "sending.js", "sync.js", "words.js", "yourmove.js"],
    () => import("./game.js")),
  replay: () => load(["replay.js", ...PLAY, "words.js"], () => import("./replay.js")),
  book: () => load(["bookview.js", "api.js", "clock.js", "nav.js", "ui.js", "words.js"], () => import("./bookview.js")),
  howto: () => load(["howto.js", "nav.js", "paper.js", "ui.js"], () => import("./howto.js")),
  offline: () => import("../offline.js"),
};
let routing = 0;

/** Asks for a screen's modules all at once (each once), then imports its entry module. */
function load(modules, entry) {
  for (const m of modules) {
    const href = new URL(m, import.meta.url).pathname;
    if (document.querySelector(`link[rel=modulepreload][href="${href}"]`)) continue;
    document.head.append(Object.assign(document.createElement("link"), { rel: "modulepreload", href }));
  }
  return entry();
}

// The service worker keeps the app shell on the phone (sw.js): the app opens at once and, offline,
// still shows the exercise book. When a new version takes over, the next screen loads whole from it.
let newVersion = false;
if ("serviceWorker" in navigator) {
  const hadWorker = !!navigator.serviceWorker.controller;
  navigator.serviceWorker.addEventListener("controllerchange", () => { newVersion = hadWorker; });
  window.addEventListener("load", () => navigator.serviceWorker.register("/sw.js").then(tellLoaded).catch(() => {}));
}

/** Tells a first worker installing which app files this load fetched (sw.js keeps those copies). */
function tellLoaded(registration) {
  const worker = registration.installing;
  if (!worker || navigator.serviceWorker.controller) return;
  const own = (url) => new URL(url, location.href).origin === location.origin;
  const paths = performance.getEntriesByType("resource").filter((e) => own(e.name)).map((e) => new URL(e.name).pathname);
  if (location.pathname === "/") paths.push("/");
  worker.postMessage({ type: "loaded", paths });
}
// Offline, or with the server out of reach, every screen but how to play needs the server: the app
// says so (and which of the two is away: this phone's connection, or the server) and shows the
// exercise book instead. An app opened from the phone's copy (the service worker's) asks the server
// whether it is there; while it is not, the app asks again by itself, 1 s after a failed answer and
// twice as long after each (at most 15 s), and comes back as soon as the server answers.
let routedAt = null;
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 15000;
let reachable = navigator.onLine;
let away = navigator.onLine ? null : "phone";
let retryMs = RETRY_FIRST_MS;
let retryTimer = null;
async function checkServer() {
  clearTimeout(retryTimer);
  let answered = false;
  if (navigator.onLine) {
    try {
      answered = (await fetch("/api/health", { cache: "no-store" })).ok;
    } catch {
      answered = false;
    }
  }
  const wasAway = away;
  reachable = answered;
  away = answered ? null : navigator.onLine ? "server" : "phone";
  if (answered) {
    retryMs = RETRY_FIRST_MS;
  } else {
    retryTimer = setTimeout(checkServer, retryMs);
    retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
  }
  // No screen yet means one is still loading: route again so that it is the right one.
  const name = current ? current.name : null;
  if (reachable ? name === "offline" : !["offline", "howto"].includes(name) || (name === "offline" && away !== wasAway)) route();
  return reachable;
}
if ("serviceWorker" in navigator && navigator.serviceWorker.controller) checkServer();
window.addEventListener("online", () => {
  retryMs = RETRY_FIRST_MS;
  checkServer();
});
window.addEventListener("offline", () => {
  reachable = false;
  away = "phone";
  if (current && ["cover", "book", "offline"].includes(current.name)) route();
});

/** Back and Forward: a sheet open closes first; an entry a sheet left behind changes nothing. */
function onPopState() {
  if (ownPop() || closeTopSheet()) return;
  if (location.pathname + location.hash === routedAt) return;
  route();
}

async function route() {
  const ticket = ++routing;
  routedAt = location.pathname + location.hash;
  if (newVersion) {
    location.reload();
    return;
  }
  if (current && current.close) current.close();
  current = null;
  for (const el of document.querySelectorAll(".scrim, .handover")) el.remove();
  window.scrollTo(0, 0);
  const match = location.pathname.match(/^\/p\/([^/]+)\/?$/);
  const frag = new URLSearchParams(location.hash.slice(1));
  let screen;
  if (!(reachable && navigator.onLine) && location.hash !== "#how") {
    if (match) takeSeat(decodeURIComponent(match[1]), frag);
    const { showOffline } = await screens.offline();
    if (ticket !== routing) return;
    screen = showOffline(checkServer, away || "phone");
  } else if (match) {
    const id = decodeURIComponent(match[1]);
    const seat = takeSeat(id, frag);
    if (frag.get("view") === "replay") {
      const { ReplayScreen } = await screens.replay();
      if (ticket !== routing) return;
      screen = new ReplayScreen(id);
    } else {
      const { GameScreen } = await screens.page();
      if (ticket !== routing) return;
      screen = new GameScreen(id, seat);
    }
    screen.opening = screen.open();
  } else if (location.hash === "#book") {
    const { showBook } = await screens.book();
    if (ticket !== routing) return;
    screen = showBook();
  } else if (location.hash === "#how") {
    const { showHowTo } = await screens.howto();
    if (ticket !== routing) return;
    screen = showHowTo();
  } else {
    const { showCover } = await screens.cover();
    if (ticket !== routing) return;
    screen = showCover();
  }
  current = screen;
  routedAt = location.pathname + location.hash;
}

setRouter(route);
window.addEventListener("popstate", onPopState);

// The browser tests' window onto the app: what is on screen, where a page point is drawn, and a
// promise that settles once nothing is animating or waiting for the server.
window.dotfight = {
  state: () => (current && current.testState ? current.testState() : { screen: current ? current.name : null }),
  toPage: (x, y) => (current && current.renderer ? current.renderer.toClient(x, y) : null),
  idle: async () => {
    // Wait for a screen still loading its module, then for that screen to settle.
    for (let i = 0; i < 100 && !current; i++) await new Promise((r) => setTimeout(r, 20));
    if (current && current.idle) await current.idle();
  },
  dropSocket: () => (current && current.sync ? current.sync.dropSocket() : undefined),
  screen: () => current,
};

route();
