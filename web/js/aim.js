// The glue between the page's gestures (input.js) and its moves: what a touch does now, which
// soldiers a finger may take, the aim's words, and what a released gesture sends. Input asks the
// `Aim`; what it answers is decided by the pure functions below and by controls.js / options.js.

import { isMyMove, waitingWords } from "./controls.js";
import { baseAt } from "./model.js";
import { aimContext, flickKind, kindLocked, sendFrom, sendMen } from "./options.js";
import { flickPreview } from "./preview.js";
import { cap, say, toast } from "./ui.js";

/** What a touch on the page does now: "tap" while anything is on its way (`blocked`), else by phase. */
export function toolOf(model, ui, blocked) {
  if (blocked || !isMyMove(model, ui)) return "tap";
  const phase = model.phase;
  if (phase === "bases") return "draw_base";
  if (phase === "positioning") return "arrange";
  if (phase === "play") return ui.sendFlow && ui.sendFlow.step !== "count" ? "pick_base" : "flick";
  return "tap";
}

/**
 * One tap of the send flow on base `base` (null: no base of the side to act there): {toast} to say
 * why not, or {flow} — the next step — with the `send` {action} once the base they walk to is known.
 */
export function pickBaseStep(model, opts, flow, base) {
  if (!base) return { toast: "Tap inside one of your bases." };
  if (flow.step === "from") {
    if (!sendFrom(opts, base.id)) return { toast: "No convoy can leave that base now." };
    return { flow: { step: "count", from: base.id, max: Math.min(opts.send.max, sendMen(opts, base.id).length) } };
  }
  if (flow.step === "to") {
    const allowed = (opts && opts.send && opts.send.from[flow.from]) || [];
    if (!allowed.includes(base.id)) return { toast: base.id === flow.from ? "Pick another base to send them to." : "They cannot walk there." };
    // Who may walk is the server's answer; which of them go is this phone's choice: the nearest.
    const men = sendMen(opts, flow.from)
      .map((id) => model.soldiers.get(id))
      .filter(Boolean)
      .sort((a, c) => Math.hypot(a.x - base.x, a.y - base.y) - Math.hypot(c.x - base.x, c.y - base.y))
      .slice(0, flow.count);
    return { flow: null, action: { type: "send", from: flow.from, to: base.id, soldiers: men.map((s) => s.id) } };
  }
  return { flow };
}

/** The released aim as it stays on the page, marked as on its way, until the ink comes back (null: no such soldier). */
export function sendingMark(model, id, vector, context) {
  const s = model.soldiers.get(id);
  if (!s) return null;
  const len = Math.hypot(vector[0], vector[1]) || 1;
  const pv = flickPreview(model.rules, len, context);
  return { from: { x: s.x, y: s.y }, dir: { x: vector[0] / len, y: vector[1] / len }, reach: pv.reach, side: s.side };
}

/** What input.js asks and tells while the player touches or keys the page of `screen`. */
export class Aim {
  constructor(screen) {
    this.screen = screen;
  }

  tool() {
    const s = this.screen;
    return toolOf(s.model, s.ui, s.animator.busy || s.sender.acting || s.sync.settling || s.handOver.handing);
  }

  drawSide() {
    return this.screen.model.sideToAct;
  }

  soldiersToDrag() {
    const m = this.screen.model;
    return [...m.soldiers.values()].filter((s) => s.side === m.sideToAct && s.alive);
  }

  flickable() {
    const o = this.screen.options();
    if (!o) return [];
    return o.flickable.map((id) => this.screen.model.soldiers.get(id)).filter(Boolean);
  }

  aimContext() {
    return aimContext(this.screen.options());
  }

  kindName() {
    return cap(flickKind(this.screen.options(), this.screen.ui.kind));
  }

  /** Snipe ↔ lunge (the keyboard's `k`); held on lunge while a chain is pending. */
  switchKind() {
    const s = this.screen;
    if (kindLocked(s.options())) return;
    s.ui.kind = s.ui.kind === "snipe" ? "lunge" : "snipe";
    s.refresh();
  }

  // ---- what the keyboard's steps ask (keyplay.js) ----

  sendFlow() {
    return this.screen.ui.sendFlow;
  }

  cancelSend() {
    this.screen.ui.sendFlow = null;
    this.screen.refresh();
  }

  pickCount(n) {
    const s = this.screen;
    s.ui.sendFlow = { ...s.ui.sendFlow, step: "to", count: n };
    s.refresh();
  }

  /** The bases the send's next tap may pick (as the page marks them). */
  pickableBases() {
    return this.screen.state.overlay.pickBases || [];
  }

  base(id) {
    return this.screen.model.bases.get(id) || null;
  }

  /** Whether the player plays by keys now (the hints then name the keys); a touch says not. */
  usingKeys(on) {
    const s = this.screen;
    if (s.ui.byKeys === on) return;
    s.ui.byKeys = on;
    s.refresh();
  }

  waitingWords() {
    const s = this.screen;
    if (!s.token) return "You are watching this page.";
    return waitingWords(s.model, s.ui) || "Not now.";
  }

  say(text) {
    say(text);
  }

  zoomed(zoom) {
    this.screen.zoomed(zoom);
  }

  /** The aim's preview while a pull is on (null once it is put down or let go): the hint says its power. */
  aiming(preview) {
    this.screen.ui.aim = preview;
    this.screen.renderHint();
  }

  hint(text, at) {
    toast(text, { at });
  }

  tap(p, at) {
    const s = this.screen;
    if (s.animator.busy) {
      s.animator.skip();
      return;
    }
    const m = s.model;
    if (!m || m.phase === "over") return;
    if (!s.token) toast("You are watching this page.", { at });
    else if (!isMyMove(m, s.ui) && m.sideToAct) toast(waitingWords(m, s.ui), { at });
    else if (m.phase === "play") toast("Press one of your soldiers, pull back, let go.", { at });
  }

  drawBase(b, at) {
    this.screen.sender.send({ type: "draw_base", x: b.x, y: b.y, r: b.r }, at);
  }

  moveSoldier(id, p, at) {
    const s = this.screen;
    // Show the move at once; the server's `positioned` event confirms it (or the refusal undoes it).
    const soldier = s.model.soldiers.get(id);
    const back = soldier ? { x: soldier.x, y: soldier.y } : null;
    if (soldier) { soldier.x = p.x; soldier.y = p.y; }
    s.state.changed();
    s.sender.send({ type: "position", soldiers: [{ id, x: p.x, y: p.y }] }, at).then((ok) => {
      if (!ok && soldier && back) { soldier.x = back.x; soldier.y = back.y; s.state.changed(); }
    });
  }

  flick(id, vector, at) {
    const s = this.screen;
    const kind = flickKind(s.options(), s.ui.kind);
    const mark = sendingMark(s.model, id, vector, this.aimContext());
    if (mark) s.state.mark({ sending: mark });
    s.sender.send({ type: "flick", soldier: id, kind, vector }, at, "flick");
  }

  pickBase(p, at) {
    const s = this.screen;
    const m = s.model;
    const step = pickBaseStep(m, s.options(), s.ui.sendFlow, baseAt(m, p.x, p.y, m.sideToAct));
    if (step.toast) {
      toast(step.toast, { at });
      return;
    }
    s.ui.sendFlow = step.flow;
    if (step.action) s.sender.send(step.action, at);
    s.refresh();
  }
}
