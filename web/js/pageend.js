// The end of a page on this phone: the end sheet opens once — when the page ends here, not on every
// later visit — with the page's numbers (counted once from the log) and the rematch as the server has
// it (rematch.js: the server makes the new page, for every way of playing).

import { api } from "./api.js";
import * as book from "./book.js";
import { go, pagePath } from "./nav.js";

/**
 * Whether the end sheet opens now: {mark} — note the end as seen — and {open}. Once per screen; a
 * page opened already finished (`opening`) whose end was seen before opens no sheet.
 */
export function endSheetDue(model, shown, opening, seen) {
  if (!model || model.phase !== "over" || shown) return { mark: false, open: false };
  return { mark: true, open: !(opening && seen) };
}

/** The end flow of the page screen `screen`: `shown` once the end has been met, `numbers` once counted. */
export class PageEnd {
  constructor(screen) {
    this.screen = screen;
    this.shown = false;
    this.numbers = null;
    this.opening = null;
  }

  /** Opens the end sheet if the page has just ended (`opening`: the screen is opening the page). */
  maybe(opening) {
    const s = this.screen;
    const due = endSheetDue(s.model, this.shown, opening, (book.entry(s.id) || {}).endSeen);
    if (!due.mark) return;
    this.shown = true;
    book.remember({ id: s.id, endSeen: true });
    // Kept while it loads and counts, so that the screen is not idle before the sheet is up.
    if (due.open) this.opening = this.open().finally(() => { this.opening = null; });
  }

  async open() {
    const s = this.screen;
    // The end sheet and the counting load at a page's end, not with every page screen.
    const [{ endSheet }, { pageNumbers }, rematch] = await Promise.all([import("./ending.js"), import("./stats.js"), s.people.part("rematch")]);
    // A finished page's log never changes: its numbers are counted once (a failed fetch is tried
    // again the next time the sheet opens).
    if (!this.numbers) {
      try {
        this.numbers = pageNumbers((await api.log(s.id)).entries || []);
      } catch {
        this.numbers = null;
      }
    }
    if (s.gone) return;
    endSheet(s.model, this.numbers, {
      rematchButton: rematch ? (closeSheet) => rematch.button(closeSheet) : null,
      replay: () => go(pagePath(s.id, "replay")),
      book: () => go("/#book"),
    });
  }
}
