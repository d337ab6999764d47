// The exercise book screen: every page played on this device — those where it is your move first,
// with the time left for it, then newest first — with where it stands (from the server's short
// summaries: a page ended on time or by absence says so), each opening where it stands or as a replay.

import * as book from "./book.js";
import { api } from "./api.js";
import { timeLeftWords } from "./clock.js";
import { go, pagePath } from "./nav.js";
import { cap, h, mount } from "./ui.js";
import { PRESET_WORDS, endWords, modeWords } from "./words.js";


function standing(sum) {
  if (!sum) return "this page is gone";
  if (sum.status === "over" || sum.phase === "over") {
    if (!sum.winner) return "finished";
    const loser = sum.winner === "blue" ? "red" : "blue";
    return ["time", "abandoned"].includes(sum.reason) ? `${cap(sum.winner)} won — ${endWords(sum.reason, loser)}` : `${cap(sum.winner)} won`;
  }
  if (sum.phase === "bases") return `${cap(sum.side_to_act)} is drawing bases`;
  if (sum.phase === "positioning") return `${cap(sum.side_to_act)} is arranging soldiers`;
  return `${cap(sum.side_to_act)} to flick`;
}

/** Whether the page waits for this phone's seat (a page on one phone is always "yours": not marked). */
function yourMove(entry, sum) {
  if (!sum || !entry.token || !entry.side || entry.side === "both") return false;
  if (sum.status === "over" || sum.phase === "over") return false;
  return sum.side_to_act === entry.side;
}

/** The time the side to act has left on a page with a clock or a deadline ("2 days left"), else "". */
function timeLeft(sum) {
  if (!sum || !sum.deadline || !sum.running || sum.status === "over" || sum.phase === "over") return "";
  return timeLeftWords(Date.parse(sum.deadline) - Date.now());
}

/** The book's pages in their order: those waiting for this phone's move first, the rest as they were (newest first). */
export function bookOrder(pages, byId) {
  const yours = pages.filter((p) => yourMove(p, byId.get(p.id)));
  return [...yours, ...pages.filter((p) => !yours.includes(p))];
}

/** Draws the exercise book screen. */
export function showBook() {
  const list = h("ul", { class: "book-list" });
  const pages = book.pages();
  mount(h("div", { class: "sheet-page book" },
    h("h1", {}, "Exercise book"),
    h("div", { class: "row" },
      h("button", { class: "btn btn-main", type: "button", onclick: () => go("/") }, "New page"),
      h("button", { class: "btn", type: "button", onclick: () => go("/#how") }, "How to play")),
    pages.length ? list : h("p", { class: "tagline" }, "No pages yet — start one from the cover.")));
  const draw = (summaries) => {
    const byId = new Map((summaries || []).map((s) => [s.id, s]));
    list.replaceChildren(...bookOrder(pages, byId).map((p) => {
      const sum = byId.get(p.id);
      const left = timeLeft(sum);
      const when = new Date(sum && sum.updated_at ? sum.updated_at : p.openedAt || Date.now());
      const yours = yourMove(p, sum);
      return h("li", { class: `book-item${yours ? " your-move" : ""}`, dataset: { id: p.id } },
        h("div", { class: "what" }, `${PRESET_WORDS[(sum && sum.preset) || p.preset] || "Page"} · ${modeWords((sum && sum.mode) || p.mode, (sum && sum.bot) || (p.spec && p.spec.bot))}`,
          yours ? h("span", { class: "badge your" }, "your move") : null),
        h("div", {}, summaries ? standing(sum) : "…", left ? h("span", { class: "time-left" }, ` · ${left}`) : null),
        h("div", { class: "when" }, when.toLocaleString()),
        h("div", { class: "row" },
          h("button", { class: "btn", type: "button", onclick: () => go(pagePath(p.id)) }, "Open"),
          h("button", { class: "btn", type: "button", onclick: () => go(pagePath(p.id, "replay")) }, "Replay"),
          summaries && !sum ? h("button", { class: "btn btn-quiet", type: "button", onclick: () => { book.forget(p.id); showBook(); } }, "Forget") : null));
    }));
  };
  draw(null);
  // The server answers at most 50 ids at a time.
  const ids = pages.map((p) => p.id);
  const chunks = [];
  for (let i = 0; i < ids.length; i += 50) chunks.push(ids.slice(i, i + 50));
  Promise.all(chunks.map((c) => api.summaries(c))).then((parts) => draw(parts.flat()), () => draw([]));
  return { name: "book" };
}
