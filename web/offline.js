// The screen for a phone with no connection, or a server that does not answer: the exercise book as
// this phone remembers it, and plain words that playing needs the server — and which of the two is
// away. The router asks again by itself and brings the app back once the server answers (or at a tap
// on "Try again").

import * as book from "./js/book.js";
import { h, mount, toast } from "./js/ui.js";

const SIDE_WORDS = { blue: "you play blue", red: "you play red", both: "both sides on this phone" };

// What the note says, by which is away: this phone's connection, or the server.
const AWAY_WORDS = {
  phone: ["You are offline",
    "This phone has no connection. Playing a page needs the connection to the server, so the pages below open again once this phone is back online."],
  server: ["The server is not answering",
    "This phone is online, but the Dotfight server does not answer right now. The pages below open again as soon as it does: this screen keeps asking by itself."],
};

/**
 * Draws the offline screen; `retry()` asks the server again and resolves whether it answered; `away`
 * is which is away ("phone" or "server").
 */
export function showOffline(retry, away = "phone") {
  const [heading, words] = AWAY_WORDS[away] || AWAY_WORDS.phone;
  const pages = book.pages();
  mount(h("div", { class: "sheet-page offline" },
    h("h1", {}, "Exercise book"),
    h("div", { class: "offline-note", role: "status", dataset: { away } },
      h("h2", {}, heading),
      h("p", {}, `${words} Nothing is lost: every page is kept on the server.`),
      h("button", { class: "btn btn-main", type: "button", "data-action": "retry", onclick: async () => {
        if (!(await retry())) toast(away === "server" ? "The server still does not answer — this screen keeps asking." : "Still no connection — try again in a moment.");
      } }, "Try again")),
    pages.length
      ? h("ul", { class: "book-list" }, pages.map((p) => h("li", { class: "book-item", dataset: { id: p.id } },
        h("div", { class: "what" }, `${book.PRESET_WORDS[p.preset] || "Page"}${book.MODE_WORDS[p.mode] ? ` · ${book.MODE_WORDS[p.mode]}` : ""}`),
        p.side && SIDE_WORDS[p.side] ? h("div", {}, SIDE_WORDS[p.side]) : null,
        h("div", { class: "when" }, `last opened ${new Date(p.openedAt || p.createdAt || Date.now()).toLocaleString()}`))))
      : h("p", { class: "tagline" }, "No pages yet — start one from the cover when you are back online.")));
  return { name: "offline" };
}
