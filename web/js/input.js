// Turns pointer gestures and keys on the page into moves: drag a circle to draw a base, drag soldiers
// to arrange them, press-pull-release to flick (slide back into the soldier to cancel), tap a base to
// pick it; two fingers pinch-zoom and pan the page. With keys: choose a soldier, turn the aim and set
// the power, then flick (drawing bases, arranging and a send's taps by keys are keyplay.js's). Works the same with a finger, a pen or a mouse. It only proposes: the
// server decides.

import { flickPreview } from "./preview.js";
import { lastInputWasKeys } from "./ui.js";

// Half the 44 CSS px a finger needs: soldiers are tiny dots, so their hit area is this radius.
const HIT_RADIUS_CSS = 22;
const TAP_CSS = 8;
const DEG = Math.PI / 180;

export class Input {
  /**
   * Listens on the screen state's canvas and writes what the gestures show (the overlay, the zoom)
   * into that state (screenstate.js). `app` answers what may be touched (tool(), soldiersToDrag(),
   * flickable(), aimContext(), kind()) and hears the moves (drawBase, moveSoldier, flick, pickBase,
   * tap, hint, aiming, say, zoomed).
   */
  constructor(state, app) {
    this.state = state;
    this.app = app;
    this.gesture = null;
    this.pointers = new Map();
    this.pinch = null;
    this.keyAim = null;
    // keyplay.js (bases, arranging and a send's taps by keys) loads with the first key or a focus
    // reached by keys: a page played by touch never fetches it.
    this.keys = null;
    this.keysLoading = null;
    const c = state.canvas;
    c.addEventListener("pointerdown", (e) => this.down(e));
    c.addEventListener("pointermove", (e) => this.move(e));
    c.addEventListener("pointerup", (e) => this.up(e, false));
    c.addEventListener("pointercancel", (e) => this.up(e, true));
    c.addEventListener("contextmenu", (e) => e.preventDefault());
    c.addEventListener("keydown", (e) => this.key(e));
    // Reached by the keyboard (Tab, or the cover's Start pressed by Enter), the hints name the keys at once.
    c.addEventListener("focus", () => {
      if (!lastInputWasKeys()) return;
      this.loadKeys();
      this.app.usingKeys(true);
    });
    c.addEventListener("wheel", (e) => this.wheel(e), { passive: false });
  }

  hitUnits() {
    return HIT_RADIUS_CSS * this.state.unitsPerCssPx();
  }

  nearest(soldiers, p) {
    let best = null;
    let bestD = this.hitUnits();
    for (const s of soldiers) {
      const d = Math.hypot(s.x - p.x, s.y - p.y);
      if (d <= bestD) { best = s; bestD = d; }
    }
    return best;
  }

  down(e) {
    if (e.pointerType === "mouse" && e.button !== 0) return;
    this.pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    try { this.state.canvas.setPointerCapture(e.pointerId); } catch { /* the pointer may already be gone */ }
    e.preventDefault();
    if (this.pointers.size === 2) {
      // A second finger: whatever the first one started is put down, and the two zoom and pan.
      if (this.gesture) this.abandon();
      const [a, b] = [...this.pointers.values()];
      this.pinch = { mid: mid(a, b), d: Math.hypot(a.x - b.x, a.y - b.y) || 1 };
      return;
    }
    if (this.pointers.size > 2 || this.pinch || this.gesture) return;
    this.putKeyAimDown();
    this.app.usingKeys(false);
    // The transform is frozen for the whole gesture: nothing that moves the page meanwhile can
    // change what the finger means.
    this.state.freeze();
    const p = this.state.toPage(e.clientX, e.clientY);
    const tool = this.app.tool();
    const g = { id: e.pointerId, tool, start: p, client: { x: e.clientX, y: e.clientY }, moved: false, maxPull: 0 };
    if (tool === "draw_base") {
      g.side = this.app.drawSide();
    } else if (tool === "arrange") {
      g.soldier = this.nearest(this.app.soldiersToDrag(), p);
      if (!g.soldier) g.tool = "tap";
    } else if (tool === "flick") {
      g.soldier = this.nearest(this.app.flickable(), p);
      if (!g.soldier) g.tool = "tap";
    } else {
      g.tool = tool === "pick_base" ? "pick_base" : "tap";
    }
    this.gesture = g;
    this.move(e);
  }

  move(e) {
    if (this.pointers.has(e.pointerId)) this.pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (this.pinch) {
      if (this.pointers.size < 2) return;
      const [a, b] = [...this.pointers.values()];
      const m = mid(a, b);
      const d = Math.hypot(a.x - b.x, a.y - b.y) || 1;
      this.state.zoomAt(this.pinch.mid.x, this.pinch.mid.y, (this.state.view.zoom * d) / this.pinch.d);
      this.state.panBy(m.x - this.pinch.mid.x, m.y - this.pinch.mid.y);
      this.pinch = { mid: m, d };
      this.app.zoomed(this.state.view.zoom);
      return;
    }
    const g = this.gesture;
    if (!g || e.pointerId !== g.id) return;
    const p = this.state.toPage(e.clientX, e.clientY);
    g.last = p;
    g.lastClient = { x: e.clientX, y: e.clientY };
    if (Math.hypot(e.clientX - g.client.x, e.clientY - g.client.y) > TAP_CSS) g.moved = true;
    const o = this.state.overlay;
    const rules = this.state.rules;
    if (g.tool === "draw_base") {
      const raw = Math.hypot(p.x - g.start.x, p.y - g.start.y);
      const r = Math.min(rules.base_radius_max, Math.max(rules.base_radius_min, raw));
      o.draft = { x: g.start.x, y: g.start.y, r: g.moved ? r : 0, side: g.side, ok: g.moved };
    } else if (g.tool === "arrange") {
      o.positions = o.positions || new Map();
      o.positions.set(g.soldier.id, { x: p.x, y: p.y });
      o.selected = { x: p.x, y: p.y };
      o.loupe = g.moved ? { at: p, dir: null } : null;
    } else if (g.tool === "flick") {
      const s = g.soldier;
      const dx = s.x - p.x;
      const dy = s.y - p.y;
      const pull = Math.hypot(dx, dy);
      g.maxPull = Math.max(g.maxPull, pull);
      const cancel = pull < this.hitUnits();
      this.showAim(g, s, dx, dy, cancel);
      o.loupe = { at: p, dir: pull ? { x: dx / pull, y: dy / pull } : null };
    }
    this.state.changed();
  }

  /** Draws the aim for soldier s pulled by (dx, dy) and remembers the vector to send. */
  showAim(g, s, dx, dy, cancel) {
    const o = this.state.overlay;
    const rules = this.state.rules;
    const pull = Math.hypot(dx, dy);
    const pv = flickPreview(rules, pull, this.app.aimContext());
    // A pull longer than pull_max is full power already; sending it just over that length (so that
    // rounding keeps it full power) keeps a drag that wandered off the page from ever being refused.
    const full = rules.pull_max + 1;
    const scale = pull > full ? full / pull : 1;
    g.vector = [dx * scale, dy * scale];
    g.cancel = cancel;
    o.selected = { x: s.x, y: s.y };
    o.aim = {
      from: { x: s.x, y: s.y }, finger: { x: s.x - dx, y: s.y - dy }, side: s.side, cancel,
      dir: { x: dx / (pull || 1), y: dy / (pull || 1) }, reach: pv.reach,
      // A faint cone of about two spreads either side: where nearly every line at this power lands.
      spread: Math.min(Math.PI / 2, 2 * pv.sigma),
    };
    this.app.aiming(cancel ? null : pv);
    return pv;
  }

  /** Puts down the gesture in progress without making a move (a second finger arrived). */
  abandon() {
    const g = this.gesture;
    this.gesture = null;
    this.clearOverlay(g);
    if (g && g.tool === "flick") this.app.aiming(null);
  }

  clearOverlay(g) {
    const o = this.state.overlay;
    o.draft = null;
    o.aim = null;
    o.selected = null;
    o.loupe = null;
    if (g && g.tool === "arrange" && o.positions) o.positions.delete(g.soldier.id);
    this.state.unfreeze();
    this.state.changed();
  }

  up(e, cancelled) {
    this.pointers.delete(e.pointerId);
    if (this.pinch) {
      if (this.pointers.size === 0) this.pinch = null;
      return;
    }
    const g = this.gesture;
    if (!g || e.pointerId !== g.id) return;
    this.gesture = null;
    this.clearOverlay(g);
    const at = g.lastClient || g.client;
    const p = g.last || g.start;
    if (g.tool === "flick") this.app.aiming(null);
    if (cancelled) return;
    if (g.tool === "draw_base") {
      if (!g.moved) {
        this.app.hint("Press where the centre goes and drag out the circle.", at);
        return;
      }
      const raw = Math.hypot(p.x - g.start.x, p.y - g.start.y);
      const rules = this.state.rules;
      const r = Math.min(rules.base_radius_max, Math.max(rules.base_radius_min, raw));
      this.app.drawBase({ x: round(g.start.x), y: round(g.start.y), r: round(r) }, at);
    } else if (g.tool === "arrange") {
      if (!g.moved) return;
      this.app.moveSoldier(g.soldier.id, { x: round(p.x), y: round(p.y) }, at);
    } else if (g.tool === "flick") {
      if (g.cancel || !g.vector) {
        // Never silently: say why nothing was flicked.
        if (!g.moved) this.app.hint("Pull back from the soldier, then let go.", at);
        else if (g.maxPull >= this.hitUnits()) this.app.hint("Flick put down — nothing was sent.", at);
        else this.app.hint("Pull further back from the soldier: a pull this short is put down.", at);
        return;
      }
      this.app.flick(g.soldier.id, [round(g.vector[0]), round(g.vector[1])], at);
    } else if (g.tool === "pick_base") {
      this.app.pickBase(p, at);
    } else {
      this.app.tap(p, at);
    }
  }

  wheel(e) {
    // Desktop: ctrl + wheel (or a trackpad pinch) zooms; the wheel alone pans a zoomed page.
    if (e.ctrlKey) this.state.zoomAt(e.clientX, e.clientY, this.state.view.zoom * Math.exp(-e.deltaY / 200));
    else if (this.state.view.zoom > 1) this.state.panBy(-e.deltaX, -e.deltaY);
    else return;
    e.preventDefault();
    this.app.zoomed(this.state.view.zoom);
  }

  // ---- keys: choose a soldier, aim (angle and power), flick ----

  /** Starts loading keyplay.js (once); settles when `this.keys` is there. */
  loadKeys() {
    this.keysLoading ||= import("./keyplay.js").then(({ KeyPlay }) => { this.keys = new KeyPlay(this.state, this.app); });
    return this.keysLoading;
  }

  /** Whether keyplay.js would take this key now (its tools, or a send under way). */
  keysWanted(e, tool) {
    const flow = this.app.sendFlow();
    return ["draw_base", "arrange", "pick_base"].includes(tool) || (!!flow && (e.key === "Escape" || (tool === "flick" && flow.step === "count")));
  }

  key(e) {
    const k = e.key;
    const tool = this.app.tool();
    if (!this.keys) {
      const loading = this.loadKeys();
      if (this.keysWanted(e, tool)) {
        // The first keys wait for the module, in their order; the page does not scroll meanwhile.
        e.preventDefault();
        this.app.usingKeys(true);
        this.keysLoading = loading.then(() => this.key(e)).catch(() => {});
        return;
      }
    }
    if (this.keys && this.keys.key(e, tool)) {
      e.preventDefault();
      this.app.usingKeys(true);
      return;
    }
    const handled = ["n", "p", "]", "[", "k", "ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Enter", " ", "Escape"];
    if (!handled.includes(k)) return;
    this.app.usingKeys(true);
    if (tool !== "flick") {
      if (tool === "tap" && k !== "Escape") this.app.say(this.app.waitingWords());
      return;
    }
    e.preventDefault();
    const fine = e.shiftKey;
    const soldiers = this.app.flickable().slice().sort((a, b) => a.y - b.y || a.x - b.x);
    if (!soldiers.length) return;
    let a = this.keyAim;
    if (a && !soldiers.some((s) => s.id === a.soldier.id)) a = null;
    if (k === "Escape") {
      if (a) this.app.say("Aim put down.");
      this.putKeyAimDown();
      return;
    }
    if (k === "k") {
      this.app.switchKind();
      if (!a) {
        this.app.say(`${this.app.kindName()}.`);
        return;
      }
    }
    if (!a || k === "n" || k === "]" || k === "p" || k === "[") {
      const i = a ? soldiers.findIndex((s) => s.id === a.soldier.id) : -1;
      const step = k === "p" || k === "[" ? -1 : 1;
      const soldier = a ? soldiers[(i + step + soldiers.length) % soldiers.length] : soldiers[0];
      a = { soldier, angle: this.angleToNearestEnemy(soldier), power: a ? a.power : 0.5 };
    } else if (k === "k") {
      // The kind changed; the aim stays.
    } else if (k === "ArrowLeft" || k === "ArrowRight") {
      // Turning as seen on screen: the half turn for red keeps clockwise clockwise.
      a.angle += (k === "ArrowRight" ? 1 : -1) * (fine ? 1 : 5) * DEG;
    } else if (k === "ArrowUp" || k === "ArrowDown") {
      a.power = Math.min(1, Math.max(0.01, a.power + (k === "ArrowUp" ? 1 : -1) * (fine ? 0.01 : 0.05)));
      a.power = Math.round(a.power * 100) / 100;
    } else if (k === "Enter" || k === " ") {
      const g = { tool: "flick" };
      this.aimByKeys(g, a);
      this.putKeyAimDown();
      this.app.flick(a.soldier.id, [round(g.vector[0]), round(g.vector[1])], null);
      return;
    }
    this.keyAim = a;
    const pv = this.aimByKeys({ tool: "flick" }, a);
    this.app.say(this.aimWords(a, pv, soldiers));
  }

  aimByKeys(g, a) {
    const pull = a.power * this.state.rules.pull_max;
    const pv = this.showAim(g, a.soldier, Math.cos(a.angle) * pull, Math.sin(a.angle) * pull, false);
    this.state.changed();
    return pv;
  }

  putKeyAimDown() {
    if (this.keys) this.keys.putDown();
    if (!this.keyAim) return;
    this.keyAim = null;
    const o = this.state.overlay;
    o.aim = null;
    o.selected = null;
    this.app.aiming(null);
    this.state.changed();
  }

  angleToNearestEnemy(s) {
    const m = this.state.model;
    let best = null;
    for (const e of m ? m.soldiers.values() : []) {
      if (e.side === s.side || !e.alive) continue;
      const d = Math.hypot(e.x - s.x, e.y - s.y);
      if (!best || d < best.d) best = { d, e };
    }
    if (!best) return s.side === "blue" ? -Math.PI / 2 : Math.PI / 2;
    return Math.atan2(best.e.y - s.y, best.e.x - s.x);
  }

  /** Words for the keyboard aim: which soldier, which way as seen on screen, how hard, how far. */
  aimWords(a, pv, soldiers) {
    const flip = this.state.view.flip;
    // Degrees clockwise from straight up the screen.
    const sx = Math.cos(a.angle) * (flip ? -1 : 1);
    const sy = Math.sin(a.angle) * (flip ? -1 : 1);
    const deg = Math.round(((Math.atan2(sx, -sy) / DEG) + 360) % 360);
    const n = soldiers.findIndex((s) => s.id === a.soldier.id) + 1;
    return `${this.app.kindName()} with soldier ${n} of ${soldiers.length} · aim ${deg}° clockwise from straight up · power ${Math.round(pv.power * 100)}% · reach ${Math.round(pv.reach)}. Enter flicks, Escape puts the aim down.`;
  }
}

function mid(a, b) {
  return { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
}

function round(v) {
  return Math.round(v * 10) / 10;
}
