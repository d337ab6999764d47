// What the page does as each event is drawn, besides drawing it: the toast it shows, how long the
// pen sound lasts, and the half-made choices a new turn clears — plain functions of the event and
// this phone's ui state.

import { polylineLength } from "./paper.js";
import { cap } from "./ui.js";

/** The toast for event `ev` — {text, ms} (ms undefined: the usual time) — or null. */
export function eventToast(ev, ui) {
  if (ev.type === "bonus") {
    const text = ev.reason === "two_with_one_bullet" ? "Two with one bullet! One more flick."
      : ev.credits > 0 ? `Lunge again! (${ev.credits})` : "Chain stopped.";
    return { text };
  }
  if (ev.type === "turn" && ev.last_stand) return { text: `Last stand: ${cap(ev.side)} flicks twice, with a steadier hand.` };
  if (ev.type === "turn" && ui.mode !== "local") return { text: ui.side === ev.side ? "Your turn." : `${cap(ev.side)}'s turn.`, ms: 1400 };
  if (ev.type === "game_over") return { text: `${cap(ev.winner)} wins!` };
  return null;
}

/** Seconds of pen sound for an `ink` event: as long as the pen takes to draw it (a blip when drawn at once). */
export function inkSeconds(ev, instant) {
  const speed = 1000 * (0.55 + 0.45 * Math.min(1, Math.max(0, ev.power ?? 1)));
  return instant ? 0.08 : polylineLength(ev.points) / speed;
}

/** This phone's choices after a new turn: the send flow is dropped; on one phone the kind is back to snipe. */
export function choicesAfterTurn(ui) {
  return { sendFlow: null, kind: ui.mode === "local" ? "snipe" : ui.kind };
}

/** Whether the bars are redrawn after event `ev` (they follow the events as they are drawn). */
export function changesBars(ev) {
  return ["turn", "phase", "game_over", "bonus", "send"].includes(ev.type);
}
