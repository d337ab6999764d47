// Turns pointer gestures on the page into moves: drag a circle to draw a base, drag soldiers to
// arrange them, press-pull-release to flick (slide back into the soldier to cancel), tap a base to
// pick it. Works the same with a finger, a pen or a mouse. It only proposes: the server decides.

// Half the 44 CSS px a finger needs: soldiers are tiny dots, so their hit area is this radius.
const HIT_RADIUS_CSS = 22;
const TAP_CSS = 8;

/** Reach and spread of a flick at pull length `pull` under the page's rules (RULES.md §4). */
function flickPreview(rules, pull, { steady = 1, link = 0 } = {}) {
  const t = Math.min(1, pull / rules.pull_max);
  const curve = t ** rules.reach_curve;
  const diagonal = Math.hypot(rules.page_width, rules.page_height);
  const reach = diagonal * (rules.reach_min_frac + (1 - rules.reach_min_frac) * curve);
  const sigma = (rules.wildness * curve + (rules.lunge_link_shake || 0) * link) * steady;
  return { power: t, reach, sigma };
}

export class Input {
  /**
   * Listens on the renderer's canvas. `app` answers what may be touched (tool(), soldiersToDrag(),
   * flickable(), pickableBases(), aimContext()) and hears the moves (drawBase, moveSoldier, flick,
   * pickBase, tap, hint).
   */
  constructor(renderer, app) {
    this.r = renderer;
    this.app = app;
    this.gesture = null;
    const c = renderer.canvas;
    c.addEventListener("pointerdown", (e) => this.down(e));
    c.addEventListener("pointermove", (e) => this.move(e));
    c.addEventListener("pointerup", (e) => this.up(e, false));
    c.addEventListener("pointercancel", (e) => this.up(e, true));
    c.addEventListener("contextmenu", (e) => e.preventDefault());
  }

  hitUnits() {
    return HIT_RADIUS_CSS * this.r.unitsPerCssPx();
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
    if (this.gesture || (e.pointerType === "mouse" && e.button !== 0)) return;
    const p = this.r.toPage(e.clientX, e.clientY);
    const tool = this.app.tool();
    const g = { id: e.pointerId, tool, start: p, client: { x: e.clientX, y: e.clientY }, moved: false };
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
    try { this.r.canvas.setPointerCapture(e.pointerId); } catch { /* the pointer may already be gone */ }
    e.preventDefault();
    this.move(e);
  }

  move(e) {
    const g = this.gesture;
    if (!g || e.pointerId !== g.id) return;
    const p = this.r.toPage(e.clientX, e.clientY);
    g.last = p;
    g.lastClient = { x: e.clientX, y: e.clientY };
    if (Math.hypot(e.clientX - g.client.x, e.clientY - g.client.y) > TAP_CSS) g.moved = true;
    const o = this.r.overlay;
    const rules = this.r.rules;
    if (g.tool === "draw_base") {
      const raw = Math.hypot(p.x - g.start.x, p.y - g.start.y);
      const r = Math.min(rules.base_radius_max, Math.max(rules.base_radius_min, raw));
      o.draft = { x: g.start.x, y: g.start.y, r: g.moved ? r : 0, side: g.side, ok: g.moved };
    } else if (g.tool === "arrange") {
      o.positions = o.positions || new Map();
      o.positions.set(g.soldier.id, { x: p.x, y: p.y });
      o.selected = { x: p.x, y: p.y };
    } else if (g.tool === "flick") {
      const s = g.soldier;
      const dx = s.x - p.x;
      const dy = s.y - p.y;
      const pull = Math.hypot(dx, dy);
      const cancel = pull < this.hitUnits();
      const ctx = this.app.aimContext(s);
      const pv = flickPreview(rules, pull, ctx);
      // A pull longer than pull_max is full power already; sending it just over that length (so that
      // rounding keeps it full power) keeps a drag that wandered off the page from ever being refused.
      const full = rules.pull_max + 1;
      const scale = pull > full ? full / pull : 1;
      g.vector = [dx * scale, dy * scale];
      g.cancel = cancel;
      o.selected = { x: s.x, y: s.y };
      o.aim = {
        from: { x: s.x, y: s.y }, finger: p, side: s.side, cancel,
        dir: { x: dx / (pull || 1), y: dy / (pull || 1) }, reach: pv.reach,
        // A faint cone of about two spreads either side: where nearly every line at this power lands.
        spread: Math.min(Math.PI / 2, 2 * pv.sigma),
      };
      this.app.aiming(cancel ? null : pv);
    }
    this.r.requestDraw();
  }

  up(e, cancelled) {
    const g = this.gesture;
    if (!g || e.pointerId !== g.id) return;
    this.gesture = null;
    const o = this.r.overlay;
    o.draft = null;
    o.aim = null;
    o.selected = null;
    const at = g.lastClient || g.client;
    const p = g.last || g.start;
    if (g.tool === "arrange" && o.positions) o.positions.delete(g.soldier.id);
    this.r.requestDraw();
    if (g.tool === "flick") this.app.aiming(null);
    if (cancelled) return;
    if (g.tool === "draw_base") {
      if (!g.moved) {
        this.app.hint("Press where the centre goes and drag out the circle.", at);
        return;
      }
      const raw = Math.hypot(p.x - g.start.x, p.y - g.start.y);
      const rules = this.r.rules;
      const r = Math.min(rules.base_radius_max, Math.max(rules.base_radius_min, raw));
      this.app.drawBase({ x: round(g.start.x), y: round(g.start.y), r: round(r) }, at);
    } else if (g.tool === "arrange") {
      if (!g.moved) return;
      this.app.moveSoldier(g.soldier.id, { x: round(p.x), y: round(p.y) }, at);
    } else if (g.tool === "flick") {
      if (g.cancel || !g.vector) {
        if (!g.moved) this.app.hint("Pull back from the soldier, then let go.", at);
        return;
      }
      this.app.flick(g.soldier.id, [round(g.vector[0]), round(g.vector[1])], at);
    } else if (g.tool === "pick_base") {
      this.app.pickBase(p, at);
    } else {
      this.app.tap(p, at);
    }
  }
}

function round(v) {
  return Math.round(v * 10) / 10;
}

