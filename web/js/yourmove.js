// "Your move" glue: when it becomes this phone's move in a shared-link, real-time or bot page, the
// tab's title and icon say so (notice.js); the phone buzzes only for a move made by another person
// (a shared link or a live page), not for Dawood-bot's every answer, which comes while the player
// watches. On one phone, and for watchers, nothing is said.

import { isMyMove } from "./controls.js";
import { buzz, markYourMove } from "./notice.js";

const NOTICED = new Set(["link", "live", "bot"]);

/** Whether it is this phone's move, as the tab says it; null where the page's mode says nothing. */
export function yourMoveNow(model, ui) {
  if (!NOTICED.has(ui.mode)) return null;
  return isMyMove(model, ui) && ui.side !== "both";
}

/**
 * What changes when "your move" goes from `before` to `now`: {mark, buzz}, or null when nothing does.
 * The phone buzzes only when the move comes (not when the page opens on it), and only where `buzzes`
 * (the move came from a person the player waits on).
 */
export function yourMoveChange(before, now, buzzes = true) {
  if (now === null || now === before) return null;
  return { mark: now, buzz: buzzes && now && before === false };
}

/** Whether a move arriving on this page buzzes: one made by a person, not by Dawood-bot. */
export function buzzesFor(mode) {
  return mode === "link" || mode === "live";
}

/** Keeps the tab's "your move" mark in step with the page; `was` is what it says now (null: nothing yet). */
export class YourMoveNotice {
  constructor() {
    this.was = null;
  }

  update(model, ui) {
    const change = yourMoveChange(this.was, yourMoveNow(model, ui), buzzesFor(ui.mode));
    if (!change) return;
    this.was = change.mark;
    markYourMove(change.mark);
    if (change.buzz) buzz();
  }

  /** Takes the mark off (the screen is left). */
  off() {
    markYourMove(false);
  }
}
