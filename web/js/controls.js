// What the page screen shows, as plain functions of (model, turn options, ui state) — no DOM, no
// changes: the top bar's words and badges and the bottom bar's hint and buttons. game.js renders
// what these return (chessground's state/render split). `ui` holds what only this phone knows:
// {token, side, mode, kind, sendFlow, busy, sending, online, byKeys}. With `byKeys` (the player
// plays by keys) the hints name the keys instead of the gestures.

import { cap } from "./ui.js";

/** Whether the player holding this phone may act now. */
export function isMyMove(model, ui) {
  if (!model || !ui.token || model.phase === "over" || !model.sideToAct) return false;
  if (ui.mode === "bot" && ui.side && ui.side !== model.sideToAct) return false;
  return ui.side === "both" || ui.side === null || ui.side === model.sideToAct;
}

/** The side Dawood-bot plays on this page, or null. */
export function botSide(model, ui) {
  if (ui.mode !== "bot") return null;
  if (model.bot && model.bot.side) return model.bot.side;
  return ui.side === "blue" ? "red" : ui.side === "red" ? "blue" : null;
}

/** What the page waits for, in words ("Dawood-bot is thinking…", "Red is flicking…"). */
export function waitingWords(model, ui) {
  const who = model.sideToAct;
  if (!who) return "";
  if (who === botSide(model, ui)) return "Dawood-bot is thinking…";
  const doing = model.phase === "bases" ? "drawing a base" : model.phase === "positioning" ? "arranging soldiers" : "flicking";
  return `${cap(who)} is ${doing}…`;
}

/** The top bar: {who, line1, line2, badges: [{text, cls}], detailBadges} (badges: after line1; detailBadges: before line2). */
export function statusView(model, opts, ui) {
  if (model.phase === "over") {
    return {
      who: model.winner, badges: [],
      line1: model.winner ? `${cap(model.winner)} wins` : "The page is finished",
      line2: model.endReason === "resigned" ? "by resignation" : "every enemy soldier crossed out",
    };
  }
  const who = model.sideToAct;
  const r = model.rules;
  const you = ui.side && ui.side !== "both" && who === ui.side;
  const name = you ? "Your turn" : who === botSide(model, ui) ? "Dawood-bot" : cap(who);
  if (model.phase === "bases") {
    const drawn = (model.setup.bases_drawn || {})[who] ?? 0;
    return { who, badges: [], line1: `${name}: draw a base`, line2: `${cap(who)} has ${drawn} of ${r.bases_per_side ?? "?"} bases` };
  }
  if (model.phase === "positioning") {
    return { who, badges: [], line1: `${name}: arrange`, line2: "in your rings or just outside" };
  }
  // Play: what is left of the turn is the server's answer; until it comes, the line waits for it.
  if (!opts) return { who, badges: [], line1: `${name}${you ? "" : " to flick"}`, line2: "…" };
  const o = opts;
  const left = o.flicks_left ?? 0;
  const sent = model.turn && model.turn.sent;
  const line2 = o.chain ? `lunge again: ${o.chain.credits} left` : `${left} flick${left === 1 ? "" : "s"} left${sent ? " · sent" : ""}`;
  // The badges say what is special about the turn: a bonus flick by the name, a last stand (the
  // whole turn's) by the flicks left, so that both fit a 360 px phone's bar; a chain is said by the
  // detail line itself.
  const badges = o.bonus ? [{ text: "bonus flick", cls: "badge bonus" }] : [];
  const detailBadges = o.last_stand ? [{ text: "last stand", cls: "badge stand" }] : [];
  return { who, badges, detailBadges, line1: `${name}${you ? "" : " to flick"}`, line2 };
}

const button = (label, act, cls = "btn", data = {}, disabled = false) => ({ type: "button", label, act, cls, data, disabled });

/** The bottom bar: {hint, items}; each item is a button {label, act, cls, data, disabled} or the snipe/lunge switch. */
export function barView(model, opts, ui) {
  if (model.phase === "over") {
    return { hint: "", items: [button("Numbers", "numbers", "btn btn-main"), button("Replay", "replay"), button("Rematch", "rematch")] };
  }
  if (ui.sending) return { hint: ui.sending, items: [], sending: true };
  if (ui.busy) return { hint: "Tap the page to see the result at once.", items: [] };
  if (!ui.token) return { hint: `Watching · ${waitingWords(model, ui)}`, items: [] };
  if (!isMyMove(model, ui)) {
    const share = (ui.mode === "link" || ui.mode === "live") && !ui.rematch ? [button("Share link", "share")] : [];
    return { hint: waitingWords(model, ui), items: share };
  }
  const sideBtn = model.sideToAct === "red" ? "btn btn-red" : "btn btn-main";
  const keys = !!ui.byKeys;
  if (model.phase === "bases") {
    const any = Object.values(model.setup.bases_drawn || {}).some((n) => n > 0) || model.bases.size > 0;
    return {
      hint: keys ? "Arrows move the circle, + − size it, Enter." : "Press the centre, drag out a circle in your half.",
      items: any ? [] : [button("Quick setup", "quick_setup", sideBtn, { action: "quick_setup" })],
    };
  }
  if (model.phase === "positioning") {
    return {
      hint: keys ? "n picks a soldier, arrows move, Enter drops." : "Drag soldiers to arrange them, then tap Ready.",
      items: [button("Ready", "ready", sideBtn, { action: "ready" })],
    };
  }
  // What the turn allows is the server's answer: until it comes (a moment after a catch-up), no controls.
  if (!opts) return { hint: "…", items: [] };
  const o = opts;
  const f = ui.sendFlow;
  if (f) {
    const items = [];
    let hint = "";
    if (f.step === "from") hint = keys ? "Send: n picks the base they leave, Enter." : "Send: tap the base they leave from.";
    if (f.step === "count") {
      hint = keys ? `How many soldiers walk? Keys 1 to ${f.max}.` : "How many soldiers walk?";
      for (let n = 1; n <= f.max; n++) items.push(button(String(n), `count:${n}`, "btn btn-round", { count: n }));
    }
    if (f.step === "to") hint = keys ? `Send ${f.count}: n picks where they walk, Enter.` : `Send ${f.count}: tap the base they walk to.`;
    items.push(button("Cancel", "cancel_send"));
    return { hint, items };
  }
  const kinds = o.kinds;
  const items = [{ type: "switch", chosen: kinds.length === 1 ? kinds[0] : ui.kind, locked: kinds.length === 1 }];
  if (o.send) items.push(button("Send", "send", "btn", { action: "send" }));
  // C1: `can_stop` — a stop is accepted now (it drops a pending chain, or ends the turn after a flick).
  if (o.can_stop) items.push(button(o.chain ? "Stop" : "End turn", "stop", "btn", { action: "stop" }));
  const hint = keys
    ? (o.chain ? "Lunge again: n, arrows, Enter — or Stop." : "n picks a soldier, arrows aim, Enter flicks.")
    : (o.chain ? "Lunge again with the same soldier — or stop." : "Press a soldier, pull back, let go.");
  return { hint, items };
}

/**
 * The page's marks for the player to act on (render.js's overlay): {half: {side, y}} — the side's half
 * while drawing bases, {zones, zoneSide} — the rings to arrange in (both the snapshot's `setup_marks`), {pickBases, pickedBase} — the bases a
 * send may tap. None while the ink of a move is being drawn (`ui.busy`) or it is not this phone's move.
 */
export function overlayView(model, opts, ui) {
  const mine = isMyMove(model, ui) && !ui.busy;
  const marks = model.setupMarks;
  const view = { half: null, zones: null, pickBases: null, pickedBase: null };
  if (mine && marks && model.phase === "bases") view.half = { side: model.sideToAct, y: marks.half_y };
  if (mine && marks && model.phase === "positioning") {
    view.zones = marks.zones[model.sideToAct] || [];
    view.zoneSide = model.sideToAct;
  }
  const f = ui.sendFlow;
  if (f && opts && opts.send) {
    view.pickBases = f.step === "from" ? Object.keys(opts.send.from) : opts.send.from[f.from] || [];
    view.pickedBase = f.from || null;
  }
  return view;
}

/**
 * The bottom bar's hint line: the aim's kind and power while a pull is on (with the keys that finish
 * it when aiming by keys), else the bar's own hint.
 */
export function hintLine(aim, kindName, barHint, byKeys = false) {
  if (aim) return `${kindName} · power ${Math.round(aim.power * 100)}% · ${byKeys ? "Enter flicks · Esc cancels" : "slide back to cancel"}`;
  return barHint || "";
}
