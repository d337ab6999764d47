// The hand-over on one phone, and which way the page faces. When the side to act changes on a
// pass-one-phone page, the result stays in view for a moment, then the hand-over card covers the
// page (toasts cleared, zoom reset) while the page turns to face the player taking the phone.

import { cap, clearToasts, h, restoreFocus } from "./ui.js";

// A moment to look at the result of a move before the hand-over card covers the page — and, against
// Dawood-bot, before the bot's ink starts (its answer comes at once, so the player's own shot would
// otherwise be drawn over before it is seen).
const HANDOVER_PAUSE_MS = 1100;
export const LOOK_MS = HANDOVER_PAUSE_MS;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The side the phone is to be handed to now (null: no hand-over) — one phone, during setup's arranging or play. */
export function handOverDue(model, mode, handedTo) {
  if (mode !== "local" || !model || model.phase === "over" || model.phase === "bases") return null;
  return model.sideToAct && handedTo && model.sideToAct !== handedTo ? model.sideToAct : null;
}

/**
 * The look to leave before a batch of events is drawn, as the animator's `lookFirst` ({side, ms}: let
 * `ms` pass since the last line of `side` was drawn), or null: against Dawood-bot, before the bot's
 * first line after the player's own ink. `side` is this phone's seat.
 */
export function lookBeforeAnswer(mode, side, events) {
  if (mode !== "bot" || (side !== "blue" && side !== "red")) return null;
  const ink = events.find((e) => e.type === "ink");
  return ink && ink.side !== side ? { side, ms: LOOK_MS } : null;
}

/** What the hand-over card asks of the player taking the phone. */
export function handOverWords(phase) {
  return phase === "positioning" ? "Arrange your soldiers, then tap Ready." : "Flick one soldier: press, pull back, let go.";
}

/**
 * Whether the page is turned half a turn: for the red seat (link, live, or a bot page played as red);
 * on one phone it follows the side the phone was handed to. Watchers keep blue at the bottom.
 */
export function pageTurned(model, ui, handedTo) {
  if (ui.side === "red" && ui.token) return true;
  if (ui.side === "both" && model.phase !== "bases" && model.phase !== "over") return handedTo === "red";
  return false;
}

/**
 * The hand-over flow of the page screen `screen`: `handedTo` is the side holding the phone, `handing`
 * the hand-over under way (until the card is tapped), `pause` the look at the result before the card.
 */
export class HandOverFlow {
  constructor(screen) {
    this.screen = screen;
    this.handedTo = null;
    this.handing = null;
    this.pause = null;
  }

  /** Takes the side to act as the one holding the phone (a page just opened). */
  start(model) {
    this.handedTo = model.sideToAct;
  }

  /** After a batch has settled: hands the phone over if the side to act changed; resolves when the card is tapped. */
  async maybe() {
    const s = this.screen;
    const m = s.model;
    const side = handOverDue(m, s.mode, this.handedTo);
    if (!side) {
      if (m) this.handedTo = m.sideToAct;
      return;
    }
    this.handedTo = side;
    const words = handOverWords(m.phase);
    this.handing = (async () => {
      this.pause = sleep(HANDOVER_PAUSE_MS);
      await this.pause;
      this.pause = null;
      if (s.gone) return;
      clearToasts();
      const card = handOver(side, words);
      s.state.resetZoom();
      s.zoomed(1);
      // Behind the card the page turns to face the player taking the phone.
      s.turnPage();
      await card;
    })();
    s.refresh();
    await this.handing;
    this.handing = null;
    s.refresh();
  }
}

/** Shows the full-screen hand-over card ("Red's turn — pass the phone"); resolves on tap. */
export function handOver(side, detail = "") {
  const before = document.activeElement;
  return new Promise((resolve) => {
    const card = h("div", { class: `handover handover-${side}`, role: "dialog", "aria-label": `${cap(side)}'s turn` },
      h("p", { class: "handover-title" }, `${cap(side)}'s turn — pass the phone`),
      detail ? h("p", { class: "handover-detail" }, detail) : null,
      h("button", { class: "btn btn-big", type: "button" }, `I'm ${cap(side)} — show the page`));
    card.addEventListener("click", () => {
      card.remove();
      restoreFocus(before);
      resolve();
    });
    clearToasts();
    document.body.append(card);
    card.querySelector("button").focus();
  });
}
