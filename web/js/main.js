// The app's entry: picks the screen for the URL (cover, exercise book, how to play, a page, or a
// page's replay), keeps a seat token that arrived in a link's fragment, and exposes a tiny hook for
// the browser tests.

import * as book from "./book.js";
import { showBook } from "./bookview.js";
import { showCover } from "./cover.js";
import { GameScreen } from "./game.js";
import { showHowTo } from "./howto.js";
import { setRouter } from "./nav.js";
import { ReplayScreen } from "./replay.js";

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
  history.replaceState(null, "", `/p/${encodeURIComponent(id)}${view ? `#view=${view}` : ""}`);
  return { token, side };
}

function route() {
  if (current && current.close) current.close();
  current = null;
  for (const el of document.querySelectorAll(".scrim, .handover")) el.remove();
  window.scrollTo(0, 0);
  const match = location.pathname.match(/^\/p\/([^/]+)\/?$/);
  const frag = new URLSearchParams(location.hash.slice(1));
  if (match) {
    const id = decodeURIComponent(match[1]);
    const seat = takeSeat(id, frag);
    if (frag.get("view") === "replay") {
      current = new ReplayScreen(id);
      current.opening = current.open();
    } else {
      current = new GameScreen(id, seat);
      current.opening = current.open();
    }
  } else if (location.hash === "#book") {
    current = showBook();
  } else if (location.hash === "#how") {
    current = showHowTo();
  } else {
    current = showCover();
  }
}

setRouter(route);
window.addEventListener("popstate", route);

// The browser tests' window onto the app: what is on screen, where a page point is drawn, and a
// promise that settles once nothing is animating or waiting for the server.
window.dotfight = {
  state: () => (current && current.testState ? current.testState() : { screen: current ? current.name : null }),
  toPage: (x, y) => (current && current.renderer ? current.renderer.toClient(x, y) : null),
  idle: () => (current && current.idle ? current.idle() : Promise.resolve()),
  dropSocket: () => (current && current.link ? current.link.dropSocket() : undefined),
};

route();
