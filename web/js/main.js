// The app's entry: picks the screen for the URL (cover, exercise book, how to play, a page, or a
// page's replay), keeps a seat token that arrived in a link's fragment, and exposes a tiny hook for
// the browser tests.

import * as book from "./book.js";
import { showCover } from "./cover.js";
import { pagePath, setRouter } from "./nav.js";
import { closeTopSheet, ownPop } from "./ui.js";

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

// Screens other than the cover load on first use, so the cover arrives quickly.
const screens = {
  page: () => import("./game.js"),
  replay: () => import("./replay.js"),
  book: () => import("./bookview.js"),
  howto: () => import("./howto.js"),
};
let routing = 0;

let routedAt = null;

/** Back and Forward: a sheet open closes first; an entry a sheet left behind changes nothing. */
function onPopState() {
  if (ownPop() || closeTopSheet()) return;
  if (location.pathname + location.hash === routedAt) return;
  route();
}

async function route() {
  const ticket = ++routing;
  routedAt = location.pathname + location.hash;
  if (current && current.close) current.close();
  current = null;
  for (const el of document.querySelectorAll(".scrim, .handover")) el.remove();
  window.scrollTo(0, 0);
  const match = location.pathname.match(/^\/p\/([^/]+)\/?$/);
  const frag = new URLSearchParams(location.hash.slice(1));
  let screen;
  if (match) {
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
