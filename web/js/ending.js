// The end of a page: who won, how, the page's numbers side by side, and where to go next.

import { otherSide } from "./model.js";
import { sharePageButton } from "./sharepage.js";
import { cap, h, sheet } from "./ui.js";
import { endWords } from "./words.js";

const ROWS = [
  ["flicks", "flicks"], ["crossed out by snipe", "snipeKills"], ["crossed out by lunge", "lungeKills"],
  ["two with one bullet", "twoWithOne"], ["longest lunge chain", "longestChain"],
];

/** Opens the end sheet for a finished page; `go` holds rematchButton(closeSheet) (rematch.js's, or null), replay() and book(). */
export function endSheet(model, numbers, go) {
  // Columns are the sides, rows the numbers: each row is labelled by its own header cell.
  const table = numbers ? h("table", { class: "numbers" },
    h("thead", {}, h("tr", {}, h("td", {}), h("th", { scope: "col", class: "blue" }, "Blue"), h("th", { scope: "col", class: "red" }, "Red"))),
    h("tbody", {}, ROWS.map(([label, k]) => h("tr", {}, h("th", { scope: "row" }, label), h("td", { class: "blue" }, numbers.blue[k]), h("td", { class: "red" }, numbers.red[k]))))) : null;
  const winner = model.winner;
  const title = winner ? `${cap(winner)} wins!` : "The page is finished";
  const how = winner ? `${cap(endWords(model.endReason, otherSide(winner)))}.` : "";
  const button = (label, fn, cls = "btn", extra = {}) => h("button", { class: cls, type: "button", ...extra, onclick: () => { s.close(); if (fn) fn(); } }, label);
  const bot = model.bot && model.bot.strength
    ? h("p", { class: "bot-level" }, `Dawood-bot played ${model.bot.side} at ${model.bot.strength}.`) : null;
  const s = sheet(title, h("div", { class: "stack end-sheet" },
    how ? h("p", {}, how) : null,
    bot,
    table,
    h("div", { class: "row" },
      go.rematchButton ? go.rematchButton(() => s.close()) : null,
      button("Replay", go.replay),
      button("Exercise book", go.book),
      model.id ? sharePageButton(model.id, () => s.close()) : null,
      button("Look at the page", null, "btn btn-quiet"))), { className: "end" });
  return s;
}
