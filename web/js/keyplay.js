// The keyboard's way through the steps a pointer does by dragging or tapping: drawing a base (a
// circle moved by the arrows and sized by + and −), arranging soldiers (n / p choose one, the arrows
// move him, Enter puts him there) and a send's taps (n / p go through the bases the send may pick,
// Enter picks one; the number who walk is a digit). It only proposes, like the pointer: the moves go
// through the same `app` calls and the server judges them. The flick's keys are input.js's.

// Steps as seen on screen, in page units: a plain arrow and one with Shift (fine).
const MOVE_STEP = 20;
const MOVE_FINE = 4;
const SIZE_STEP = 10;
const SIZE_FINE = 2;

const round = (v) => Math.round(v * 10) / 10;
const byPlace = (a, b) => a.y - b.y || a.x - b.x;

/** The page-unit step of an arrow key as seen on screen ({dx, dy}, or null for another key). */
export function arrowStep(key, fine, flipped) {
  const d = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[key];
  if (!d) return null;
  // The page turned half a turn for red: an arrow still moves the way it points on screen.
  const k = (fine ? MOVE_FINE : MOVE_STEP) * (flipped ? -1 : 1);
  return { dx: d[0] * k, dy: d[1] * k };
}

export class KeyPlay {
  /** Writes what the keys show into the screen's `state` (its overlay) for `app` (the page's Aim). */
  constructor(state, app) {
    this.state = state;
    this.app = app;
    this.draft = null; // the base circle being placed: {x, y, r}
    this.held = null; // the soldier being moved: {id, x, y}
    this.picked = null; // the base the send's keys are on (an id)
  }

  /** Handles a key for the page's tool now; true when the key was the keyboard's (default prevented). */
  key(e, tool) {
    const flow = this.app.sendFlow();
    if (flow && e.key === "Escape") {
      this.putDown();
      this.app.cancelSend();
      this.app.say("Send put down.");
      return true;
    }
    if (tool === "draw_base") return this.baseKey(e);
    if (tool === "arrange") return this.arrangeKey(e);
    if (tool === "pick_base") return this.pickKey(e);
    if (tool === "flick" && flow && flow.step === "count") return this.countKey(e, flow);
    return false;
  }

  /** Takes every keyboard mark off the page (a pointer took over, or the turn moved on). */
  putDown() {
    const o = this.state.overlay;
    if (this.draft) o.draft = null;
    if (this.held && o.positions) o.positions.delete(this.held.id);
    if (this.held || this.picked) o.selected = null;
    if (this.picked) o.draft = null;
    this.draft = this.held = this.picked = null;
    this.state.changed();
  }

  // ---- drawing a base ----

  baseKey(e) {
    const k = e.key;
    const rules = this.state.rules;
    const side = this.app.drawSide();
    let fresh = false;
    if (!this.draft) {
      if (!["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "+", "=", "-", "n", "Enter", " "].includes(k)) return false;
      // A first circle in the middle of the side's own half (blue's is below the server's half line).
      const marks = this.state.model.setupMarks;
      const h = marks ? marks.half_y : rules.page_height / 2;
      this.draft = { x: rules.page_width / 2, y: side === "blue" ? (h + rules.page_height) / 2 : h / 2, r: (rules.base_radius_min + rules.base_radius_max) / 2 };
      fresh = true;
    }
    if (k === "Escape") {
      this.putDown();
      this.app.say("Circle put down.");
      return true;
    } else if ((k === "Enter" || k === " ") && !fresh) {
      const d = this.draft;
      this.putDown();
      this.app.drawBase({ x: round(d.x), y: round(d.y), r: round(d.r) }, null);
      return true;
    } else if (k === "+" || k === "=" || k === "-") {
      const step = (e.shiftKey && k !== "+" ? SIZE_FINE : SIZE_STEP) * (k === "-" ? -1 : 1);
      this.draft.r = Math.min(rules.base_radius_max, Math.max(rules.base_radius_min, this.draft.r + step));
    } else {
      const s = arrowStep(k, e.shiftKey, this.state.view.flip);
      if (s) {
        this.draft.x = Math.min(rules.page_width, Math.max(0, this.draft.x + s.dx));
        this.draft.y = Math.min(rules.page_height, Math.max(0, this.draft.y + s.dy));
      } else if (!fresh) {
        return false;
      }
    }
    const d = this.draft;
    this.state.overlay.draft = { x: d.x, y: d.y, r: d.r, side, ok: true };
    this.state.changed();
    this.app.say(`Base circle at ${Math.round(d.x)}, ${Math.round(d.y)}, radius ${Math.round(d.r)}. Arrows move it, plus and minus size it, Enter draws it.`);
    return true;
  }

  // ---- arranging soldiers ----

  arrangeKey(e) {
    const k = e.key;
    const soldiers = this.app.soldiersToDrag().slice().sort(byPlace);
    if (!soldiers.length) return false;
    const o = this.state.overlay;
    let held = this.held && soldiers.find((s) => s.id === this.held.id) ? this.held : null;
    if (k === "Escape") {
      if (held) this.app.say("Soldier put back.");
      this.putDown();
      return true;
    }
    if (!held || k === "n" || k === "]" || k === "p" || k === "[") {
      if (held && o.positions) o.positions.delete(held.id);
      if (!held && !["n", "]", "p", "[", "ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"].includes(k)) return false;
      const i = held ? soldiers.findIndex((s) => s.id === held.id) : -1;
      const step = k === "p" || k === "[" ? -1 : 1;
      const s = held ? soldiers[(i + step + soldiers.length) % soldiers.length] : soldiers[0];
      held = { id: s.id, x: s.x, y: s.y };
    } else if (k === "Enter" || k === " ") {
      const s = soldiers.find((x) => x.id === held.id);
      this.putDown();
      if (s && (s.x !== held.x || s.y !== held.y)) this.app.moveSoldier(held.id, { x: round(held.x), y: round(held.y) }, null);
      else this.app.say("He stays where he is.");
      return true;
    } else {
      const step = arrowStep(k, e.shiftKey, this.state.view.flip);
      if (!step) return false;
      const rules = this.state.rules;
      held.x = Math.min(rules.page_width, Math.max(0, held.x + step.dx));
      held.y = Math.min(rules.page_height, Math.max(0, held.y + step.dy));
    }
    this.held = held;
    o.positions = o.positions || new Map();
    o.positions.set(held.id, { x: held.x, y: held.y });
    o.selected = { x: held.x, y: held.y };
    this.state.changed();
    const n = soldiers.findIndex((s) => s.id === held.id) + 1;
    this.app.say(`Soldier ${n} of ${soldiers.length} at ${Math.round(held.x)}, ${Math.round(held.y)}. Arrows move him, Enter puts him there; Tab reaches Ready.`);
    return true;
  }

  // ---- a send's taps ----

  pickKey(e) {
    const k = e.key;
    const ids = this.app.pickableBases();
    const bases = ids.map((id) => this.app.base(id)).filter(Boolean).sort(byPlace);
    if (!bases.length) return false;
    let i = bases.findIndex((b) => b.id === this.picked);
    if (k === "Enter" || k === " ") {
      if (i < 0) i = 0;
      const b = bases[i];
      this.putDown();
      this.app.pickBase({ x: b.x, y: b.y }, null);
      return true;
    }
    if (!["n", "]", "p", "[", "ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"].includes(k)) return false;
    const back = k === "p" || k === "[" || k === "ArrowLeft" || k === "ArrowUp";
    i = i < 0 ? 0 : (i + (back ? -1 : 1) + bases.length) % bases.length;
    const b = bases[i];
    this.picked = b.id;
    const o = this.state.overlay;
    o.draft = { x: b.x, y: b.y, r: b.r + 8, side: b.side, ok: true };
    this.state.changed();
    this.app.say(`Base ${i + 1} of ${bases.length}. Enter picks it, Escape puts the send down.`);
    return true;
  }

  countKey(e, flow) {
    const n = Number(e.key);
    if (!Number.isInteger(n) || n < 1 || n > flow.max) return false;
    this.app.pickCount(n);
    return true;
  }
}
