// Draws the page on one canvas: a cached layer (paper, bases, finished ink) and, every frame, what
// moves (soldiers, crosses, the line being drawn, the pen tip, aim and setup helpers). What to draw is
// the screen's state (screenstate.js); the renderer only draws it.

import { INK, circleCrossings, drawPaper, handCircle, hashSeed, penCross, penDot, penStroke } from "./paper.js";

// A busy page kept readable (issue 21, item 10): a crossed-out soldier's dot and cross are drawn
// fainter than a living one's, a living soldier sits on a small clearing of paper (this many dot
// radii) over the lines that cross him, and lines older than the last turn are drawn fainter (the
// last turn's a little wider).
const CROSSED_DOT_ALPHA = 0.18;
const CROSS_ALPHA = 0.5;
const CLEARING = 1.5;
const OLDER_INK_ALPHA = 0.5;
const LAST_TURN_WIDTH = 1.15;
const PAPER = "#fbf6e9";
// Parts of the first layer drawn in one frame of the warm-up (the paper, a base: one; a line: two).
const WARM_PARTS = 8;
// How much larger the loupe shows what the thumb covers.
const LOUPE = 2.5;
const DESK = "#e9e2d0";

export class Renderer {
  /**
   * Draws `state` (screenstate.js: the model, the overlay, the view) on a canvas, and again whenever
   * the state says it changed; call resize() or fitInside() before the first draw. It keeps no state
   * of the screen's, only what drawing needs: the cached layer and the frame asked for.
   */
  constructor(canvas, state) {
    this.canvas = canvas;
    this.state = state;
    this.ctx = canvas.getContext("2d");
    this.layer = document.createElement("canvas");
    this.layerCtx = this.layer.getContext("2d");
    this.layerModel = null;
    this.layerKey = "";
    this.layerBases = -1;
    this.layerInk = 0;
    this.layerRecent = 0;
    this.layerStillKey = "";
    this.fading = null;
    this.scale = 1;
    this.cssWidth = 0;
    this.frameRequested = false;
    // A resize that came during a gesture (the state frozen) waits until the finger lifts.
    this.pendingFit = null;
    // The first draw is the costliest frame (both canvases get their pixels, the pen's code is cold):
    // it is spread over frames before the whole first one — the canvas's pixels (2), then the layer a
    // few parts at a time (1) — each its own short task (Lighthouse's total blocking time on a page in
    // play; issue 21, item 13).
    this.warmUp = 2;
    state.listen(() => {
      if (this.pendingFit && !state.frozen) {
        const box = this.pendingFit;
        this.pendingFit = null;
        this.fitInside(box);
      }
      this.requestDraw();
    });
  }

  get rules() {
    return this.state.rules;
  }

  /** Sizes the canvas to a CSS width (height keeps the page's proportion) at the device pixel ratio. */
  resize(cssWidth) {
    const { page_width: w, page_height: h } = this.rules;
    const dpr = window.devicePixelRatio || 1;
    this.cssWidth = cssWidth;
    const cssHeight = (cssWidth * h) / w;
    this.canvas.style.width = `${cssWidth}px`;
    this.canvas.style.height = `${cssHeight}px`;
    this.canvas.width = Math.round(cssWidth * dpr);
    this.canvas.height = Math.round(cssHeight * dpr);
    this.layer.width = this.canvas.width;
    this.layer.height = this.canvas.height;
    this.scale = this.canvas.width / w;
    this.state.laidOut(cssWidth, cssHeight);
  }

  /** Sizes the canvas to the widest whole CSS width whose page fits in the element `box`. */
  fitInside(box) {
    if (this.state.frozen) {
      this.pendingFit = box;
      return;
    }
    const { page_width: w, page_height: h } = this.rules;
    const width = Math.floor(Math.min(box.clientWidth, (box.clientHeight * w) / h));
    if (width > 0 && Math.abs(width - this.cssWidth) >= 1) this.resize(width);
  }

  /** The page-to-canvas transform (device pixels, zoom, pan and the half turn) as [a, b, c, d, e, f]. */
  pageMatrix() {
    const { page_width: w, page_height: h } = this.rules;
    const dpr = this.canvas.width / (this.cssWidth || 1);
    const v = this.state.view;
    const s = this.scale * v.zoom;
    return v.flip ? [-s, 0, 0, -s, v.panX * dpr + s * w, v.panY * dpr + s * h] : [s, 0, 0, s, v.panX * dpr, v.panY * dpr];
  }

  /** Sets the page-to-canvas transform on a context. */
  pageTransform(ctx) {
    ctx.setTransform(...this.pageMatrix());
  }

  /** Asks for one redraw on the next animation frame (several requests share one frame). */
  requestDraw() {
    if (this.frameRequested) return;
    this.frameRequested = true;
    requestAnimationFrame(() => {
      this.frameRequested = false;
      this.draw();
    });
  }

  /**
   * Resolves once the page on screen is the page as it stands: no frame waiting to be drawn and no
   * fading under way (the fading's own frame included). Bounded: a frame that never comes (a hidden
   * tab) does not hold it for ever.
   */
  async settled() {
    // A long page's warm-up takes a frame for every few lines: the bound follows it.
    const m = this.state.model;
    const bound = 10 + (m ? m.ink.length : 0);
    const warming = () => this.warmUp > 0 && !!m && this.canvas.width > 0;
    for (let i = 0; i < bound && (this.frameRequested || this.fading || warming()); i++) {
      if (this.fading) await this.fading;
      else await new Promise((resolve) => { requestAnimationFrame(() => setTimeout(resolve, 0)); setTimeout(resolve, 100); });
    }
  }

  /** Number of ink lines that are finished (the one being animated is drawn live). */
  finishedInkCount() {
    const live = this.state.overlay.liveInk;
    return live ? live.index : this.state.model.ink.length;
  }

  /**
   * Brings the cached layer up to date; `fadeNow`: the fading of a turn's lines is done here too. It is
   * drawn in order — the paper, each base, each line of ink — as far as `budget` parts go (a base is
   * one part, a line two: the warm-up spreads the first layer over frames); true once it is whole.
   */
  refreshLayer(fadeNow = false, budget = Infinity) {
    const { model: m, overlay: o, view: v } = this.state;
    if (m !== this.layerModel) {
      // Another model: the layer is made again unless it is the same page at the same version (e.g.
      // the socket's hello answering the snapshot just drawn: its ink is the same, and redrawing it
      // all is the costliest frame).
      const old = this.layerModel;
      const same = old && old.id === m.id && old.version === m.version && old.ink.length === m.ink.length;
      this.layerModel = m;
      if (!same) this.layerKey = "";
    }
    const ctx = this.layerCtx;
    const inkCount = this.finishedInkCount();
    const stillKey = `${this.layer.width}|${v.flip}|${v.zoom}|${v.panX}|${v.panY}|${[...m.bases.keys()].join(",")}|${o.drawingBase ? o.drawingBase.base.id : ""}`;
    // The last turn's lines are drawn stronger than the older ones: when the last turn changes, the
    // lines it leaves are drawn again, fainter — the layer is rebuilt, the costliest frame, so not while
    // anything moves (until the page is still, a turn just ended keeps its lines strong), and not in an
    // animation frame either: in a task of its own just after (fadeSoon), which no frame waits for.
    const recentNow = lastTurnFrom(m.ink, inkCount);
    const moving = !!(o.liveInk || o.drawingBase || (o.crossProgress && o.crossProgress.size) || (o.positions && o.positions.size));
    const rebuilt = stillKey !== this.layerStillKey || inkCount < this.layerInk;
    let recent = recentNow;
    if (recentNow > this.layerRecent && (moving || !(rebuilt || fadeNow))) {
      recent = this.layerRecent;
      if (!moving) this.fadeSoon();
    }
    const key = `${stillKey}|${recent}`;
    this.layerRecent = recent;
    this.layerStillKey = stillKey;
    if (key !== this.layerKey || inkCount < this.layerInk) {
      this.layerKey = key;
      this.layerBases = -1; // not even the paper yet
      this.layerInk = 0;
    }
    const bases = [...m.bases.values()];
    let left = budget;
    if (this.layerBases < 0) {
      const { page_width: w, page_height: h } = this.rules;
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.fillStyle = DESK;
      ctx.fillRect(0, 0, this.layer.width, this.layer.height);
      this.pageTransform(ctx);
      drawPaper(ctx, w, h);
      this.layerBases = 0;
      left -= 1;
    }
    this.pageTransform(ctx);
    for (; this.layerBases < bases.length && left > 0; this.layerBases++, left -= 1) drawBase(ctx, bases[this.layerBases]);
    if (this.layerBases < bases.length) return false;
    for (; this.layerInk < inkCount && left > 0; this.layerInk++, left -= 2) {
      drawInk(ctx, m.ink[this.layerInk], this.layerInk, Infinity, bases, this.layerInk < recent);
    }
    return this.layerInk >= inkCount;
  }

  /** Fades the last turn but one's lines in a task of its own, off the animation frames; `fading` until done. */
  fadeSoon() {
    if (this.fading) return;
    this.fading = new Promise((resolve) => {
      setTimeout(() => {
        this.fading = null;
        if (this.state.model && this.layer.width) {
          this.refreshLayer(true);
          this.requestDraw();
        }
        resolve();
      }, 0);
    });
  }

  /** Draws the whole frame now (the first one over three frames, see `warmUp`). */
  draw() {
    if (!this.state.model || !this.canvas.width) return;
    if (this.warmUp > 0) {
      this.warmStep();
      return;
    }
    this.refreshLayer();
    const ctx = this.ctx;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(this.layer, 0, 0);
    this.pageTransform(ctx);
    this.drawMoving(ctx);
    if (this.state.overlay.loupe) this.drawLoupe(this.state.overlay.loupe);
  }

  /** Draws over the cached layer what changes from frame to frame, in page units on `ctx`'s transform. */
  drawMoving(ctx) {
    const { model: m, overlay: o } = this.state;
    const r = this.rules;
    if (o.half) drawHalf(ctx, r, o.half);
    if (o.zones) drawZones(ctx, o.zones, o.zoneSide);
    if (o.pickBases) drawPickBases(ctx, m, o.pickBases, o.pickedBase);
    for (const c of m.convoys) drawRoad(ctx, m, c);
    if (o.drawingBase) {
      const b = o.drawingBase.base;
      handCircle(ctx, b.x, b.y, b.r, { color: INK[b.side], seed: hashSeed(b.id), progress: o.drawingBase.progress });
    }
    if (o.draft) drawDraft(ctx, o.draft);
    if (o.intended) for (const it of o.intended) drawIntended(ctx, it);
    if (o.liveInk) {
      const ink = m.ink[o.liveInk.index];
      if (ink) drawInk(ctx, ink, o.liveInk.index, o.liveInk.upTo, [...m.bases.values()]);
    }
    const moved = o.positions || new Map();
    // The crossed out first, faint, then the living over them, each on a little clean paper: on a busy
    // page the soldiers still standing are the ones that stand out.
    const shown = [...m.soldiers.values()].filter((s) => !(o.hideSoldiers && o.hideSoldiers.has(s.id)));
    for (const s of shown) {
      if (s.alive) continue;
      const p = moved.get(s.id) || s;
      penDot(ctx, p.x, p.y, r.dot_radius, { color: INK[s.side], seed: hashSeed(s.id), alpha: CROSSED_DOT_ALPHA });
      if (s.cross) {
        const progress = o.crossProgress && o.crossProgress.has(s.id) ? o.crossProgress.get(s.id) : 1;
        penCross(ctx, p.x, p.y, r.dot_radius * 1.7, { color: tint(s.cross.side, CROSS_ALPHA), seed: hashSeed(`x${s.id}`), progress });
      }
    }
    const living = shown.filter((s) => s.alive).map((s) => ({ s, p: moved.get(s.id) || s }));
    drawClearings(ctx, living.map(({ p }) => p), r.dot_radius * CLEARING);
    for (const { s, p } of living) penDot(ctx, p.x, p.y, r.dot_radius, { color: INK[s.side], seed: hashSeed(s.id), alpha: 1 });
    if (o.selected) drawSelected(ctx, o.selected, r.dot_radius);
    if (o.aim) drawAim(ctx, o.aim);
    if (o.sending) drawSending(ctx, o.sending);
    if (o.penTip) drawPenTip(ctx, o.penTip);
  }

  /**
   * One frame of the first draw's warm-up: the canvas gets its pixels (bare desk), then the cached layer
   * is made a few parts a frame (WARM_PARTS: the paper and some bases, or some lines).
   */
  warmStep() {
    if (this.warmUp === 2) {
      const ctx = this.ctx;
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.fillStyle = DESK;
      ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
      this.warmUp = 1;
    } else if (this.refreshLayer(false, WARM_PARTS)) {
      this.warmUp = 0;
    }
    this.requestDraw();
  }

  /**
   * A magnifier beside the finger showing, 2.5 times larger, what the thumb covers at page point
   * p.at; it sits across the aim (p.dir, on screen), so it never hides the line or the soldier. It is
   * drawn again, magnified (the cached layer, then what moves), not copied from the canvas: a copy of
   * the canvas onto itself made the frame rasterise and copy its whole bitmap (the costliest frames of
   * an aim, most of work-per-frame's p95 in benchmarks/web.py).
   */
  drawLoupe(p) {
    const ctx = this.ctx;
    const c = this.state.toClient(p.at.x, p.at.y);
    const rect = this.canvas.getBoundingClientRect();
    const dpr = this.canvas.width / (this.cssWidth || 1);
    const fx = (c.x - rect.left) * dpr;
    const fy = (c.y - rect.top) * dpr;
    const R = 50 * dpr;
    const src = R / LOUPE;
    const sign = this.state.view.flip ? -1 : 1;
    const dir = p.dir ? { x: p.dir.x * sign, y: p.dir.y * sign } : { x: 0, y: -1 };
    // Across the aim, on the side with more room; kept inside the canvas.
    let nx = -dir.y;
    let ny = dir.x;
    const off = R + 46 * dpr;
    const room = (x, y) => Math.min(x, this.canvas.width - x, y, this.canvas.height - y);
    if (room(fx - nx * off, fy - ny * off) > room(fx + nx * off, fy + ny * off)) { nx = -nx; ny = -ny; }
    const cx = Math.min(this.canvas.width - R - 2, Math.max(R + 2, fx + nx * off));
    const cy = Math.min(this.canvas.height - R - 2, Math.max(R + 2, fy + ny * off));
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.beginPath();
    ctx.arc(cx, cy, R, 0, Math.PI * 2);
    ctx.save();
    ctx.clip();
    ctx.fillStyle = PAPER;
    ctx.fillRect(cx - R, cy - R, 2 * R, 2 * R);
    ctx.drawImage(this.layer, fx - src, fy - src, 2 * src, 2 * src, cx - R, cy - R, 2 * R, 2 * R);
    // The page transform, then 2.5× about the finger's point, moved to the loupe's centre.
    const [a, b, c2, d, e, f] = this.pageMatrix();
    ctx.setTransform(LOUPE * a, LOUPE * b, LOUPE * c2, LOUPE * d, cx + LOUPE * (e - fx), cy + LOUPE * (f - fy));
    this.drawMoving(ctx);
    ctx.restore();
    // The ring again: the drawing inside took the context's path.
    ctx.beginPath();
    ctx.arc(cx, cy, R, 0, Math.PI * 2);
    ctx.lineWidth = 2 * dpr;
    ctx.strokeStyle = "rgba(43, 43, 51, 0.55)";
    ctx.stroke();
    ctx.beginPath();
    ctx.moveTo(cx - 6 * dpr, cy);
    ctx.lineTo(cx + 6 * dpr, cy);
    ctx.moveTo(cx, cy - 6 * dpr);
    ctx.lineTo(cx, cy + 6 * dpr);
    ctx.lineWidth = 1 * dpr;
    ctx.stroke();
    ctx.restore();
  }
}

/** A side's ink, see-through by `alpha` (anything not red is blue). */
function tint(side, alpha) {
  return side === "red" ? `rgba(195, 38, 45, ${alpha})` : `rgba(29, 58, 158, ${alpha})`;
}

function drawBase(ctx, b) {
  handCircle(ctx, b.x, b.y, b.r, { color: INK[b.side], seed: hashSeed(b.id) });
}

function drawInk(ctx, ink, index, upTo = Infinity, bases = null, older = false) {
  // A snipe thins a little at each wall it crosses; a lunge shows its walls as kinks already.
  const thinAt = ink.kind === "snipe" && bases ? circleCrossings(ink.points, bases) : [];
  const color = older ? tint(ink.side, OLDER_INK_ALPHA) : INK[ink.side];
  const width = (ink.kind === "lunge" ? 2.8 : 3.4) * (older ? 1 : LAST_TURN_WIDTH);
  penStroke(ctx, ink.points, { color, seed: hashSeed(`ink${index}`), upTo, width, thinAt });
}

/**
 * The index of the first of the last turn's lines among the first `count` lines of ink: the last
 * line's side's unbroken run at the end (turns alternate sides; a bonus flick or a chain adds to
 * its own turn's run).
 */
export function lastTurnFrom(ink, count) {
  let i = count;
  const side = count > 0 ? ink[count - 1].side : null;
  while (i > 0 && ink[i - 1].side === side) i--;
  return i;
}

function drawClearings(ctx, points, r) {
  // A little clean paper round each living soldier, so the lines crossing him stop short of his dot
  // (one path, one fill: it is drawn every frame; overlapping clearings are not paler for it).
  ctx.save();
  ctx.globalAlpha = 0.75;
  ctx.fillStyle = PAPER;
  ctx.beginPath();
  for (const p of points) {
    ctx.moveTo(p.x + r, p.y);
    ctx.arc(p.x, p.y, r, 0, Math.PI * 2);
  }
  ctx.fill();
  ctx.restore();
}

function drawHalf(ctx, r, { side, y: h }) {
  // The drawing side's own half stays clean paper (a tint read as "not allowed"); the other half is
  // lightly hatched in pencil grey, and the line between them (the server's `half_y`) is dashed in
  // the side's ink.
  const y0 = side === "blue" ? 0 : h;
  const height = side === "blue" ? h : r.page_height - h;
  ctx.save();
  ctx.beginPath();
  ctx.rect(0, y0, r.page_width, height);
  ctx.clip();
  ctx.strokeStyle = "rgba(90, 90, 90, 0.13)";
  ctx.lineWidth = 2;
  ctx.beginPath();
  for (let x = -height; x < r.page_width; x += 36) {
    ctx.moveTo(x, y0 + height);
    ctx.lineTo(x + height, y0);
  }
  ctx.stroke();
  ctx.restore();
  ctx.save();
  ctx.strokeStyle = tint(side, 0.55);
  ctx.setLineDash([10, 12]);
  ctx.lineWidth = 2;
  ctx.beginPath();
  ctx.moveTo(0, h);
  ctx.lineTo(r.page_width, h);
  ctx.stroke();
  ctx.restore();
}

function drawZones(ctx, zones, side) {
  ctx.save();
  ctx.fillStyle = tint(side, 0.07);
  ctx.strokeStyle = tint(side, 0.45);
  ctx.lineWidth = 1.6;
  ctx.setLineDash([6, 8]);
  for (const z of zones) {
    ctx.beginPath();
    ctx.arc(z.x, z.y, z.r, 0, Math.PI * 2);
    ctx.fill();
    ctx.stroke();
  }
  ctx.restore();
}

function drawPickBases(ctx, m, ids, picked) {
  ctx.save();
  for (const id of ids) {
    const b = m.bases.get(id);
    if (!b) continue;
    ctx.fillStyle = id === picked ? "rgba(240, 190, 40, 0.28)" : "rgba(240, 190, 40, 0.12)";
    ctx.beginPath();
    ctx.arc(b.x, b.y, b.r, 0, Math.PI * 2);
    ctx.fill();
  }
  ctx.restore();
}

function drawRoad(ctx, m, convoy) {
  const a = m.bases.get(convoy.from);
  const b = m.bases.get(convoy.to);
  if (!a || !b) return;
  ctx.save();
  ctx.strokeStyle = tint(convoy.side, 0.35);
  ctx.setLineDash([3, 9]);
  ctx.lineWidth = 2;
  ctx.beginPath();
  ctx.moveTo(a.x, a.y);
  ctx.lineTo(b.x, b.y);
  ctx.stroke();
  ctx.restore();
}

function drawDraft(ctx, d) {
  ctx.save();
  ctx.strokeStyle = d.ok ? INK[d.side] : "rgba(120, 120, 120, 0.8)";
  ctx.globalAlpha = 0.7;
  ctx.setLineDash([8, 8]);
  ctx.lineWidth = 2.4;
  ctx.beginPath();
  ctx.arc(d.x, d.y, Math.max(2, d.r), 0, Math.PI * 2);
  ctx.stroke();
  ctx.setLineDash([]);
  ctx.fillStyle = INK[d.side];
  ctx.beginPath();
  ctx.arc(d.x, d.y, 3, 0, Math.PI * 2);
  ctx.fill();
  ctx.restore();
}

function drawSelected(ctx, p, dot) {
  ctx.save();
  ctx.strokeStyle = "rgba(240, 170, 20, 0.9)";
  ctx.lineWidth = 3;
  ctx.beginPath();
  ctx.arc(p.x, p.y, dot * 2.4, 0, Math.PI * 2);
  ctx.stroke();
  ctx.restore();
}

function drawAim(ctx, a) {
  ctx.save();
  const color = INK[a.side];
  // The pull: a thin band from the soldier to the finger.
  ctx.strokeStyle = "rgba(60, 60, 60, 0.35)";
  ctx.lineWidth = 2;
  ctx.beginPath();
  ctx.moveTo(a.from.x, a.from.y);
  ctx.lineTo(a.finger.x, a.finger.y);
  ctx.stroke();
  if (a.cancel) {
    ctx.restore();
    return;
  }
  const ang = Math.atan2(a.dir.y, a.dir.x);
  // The cone: where a line at this power may really go.
  ctx.fillStyle = color;
  ctx.globalAlpha = 0.11;
  ctx.beginPath();
  ctx.moveTo(a.from.x, a.from.y);
  ctx.arc(a.from.x, a.from.y, a.reach, ang - a.spread, ang + a.spread);
  ctx.closePath();
  ctx.fill();
  // The dashed aim line with its reach.
  ctx.globalAlpha = 0.8;
  ctx.strokeStyle = color;
  ctx.lineWidth = 3.4;
  const tip = strokeAimLine(ctx, a, [14, 10]);
  ctx.setLineDash([]);
  ctx.beginPath();
  ctx.arc(tip.x, tip.y, 6, 0, Math.PI * 2);
  ctx.stroke();
  ctx.restore();
}

/** Strokes a dashed line from `from` along `dir` for `reach`; returns its end. */
function strokeAimLine(ctx, { from, dir, reach }, dash) {
  const tip = { x: from.x + dir.x * reach, y: from.y + dir.y * reach };
  ctx.setLineDash(dash);
  ctx.beginPath();
  ctx.moveTo(from.x, from.y);
  ctx.lineTo(tip.x, tip.y);
  ctx.stroke();
  return tip;
}

function drawSending(ctx, a) {
  // A flick on its way to the server: its aim stays drawn, fainter, until the ink comes back.
  ctx.save();
  ctx.globalAlpha = 0.5;
  ctx.strokeStyle = INK[a.side];
  ctx.lineWidth = 2.6;
  strokeAimLine(ctx, a, [4, 8]);
  ctx.restore();
}

function drawIntended(ctx, it) {
  ctx.save();
  ctx.strokeStyle = INK[it.side];
  ctx.globalAlpha = 0.45;
  ctx.lineWidth = 2.6;
  strokeAimLine(ctx, it, [6, 9]);
  ctx.restore();
}

function drawPenTip(ctx, t) {
  // A ballpoint seen from above, leaning: a grey barrel ending in a coloured tip at the ink's end.
  ctx.save();
  ctx.translate(t.x, t.y);
  ctx.rotate(-0.9);
  ctx.fillStyle = "rgba(70, 70, 80, 0.55)";
  ctx.beginPath();
  ctx.moveTo(0, 0);
  ctx.lineTo(9, -26);
  ctx.lineTo(20, -90);
  ctx.lineTo(4, -92);
  ctx.lineTo(-5, -26);
  ctx.closePath();
  ctx.fill();
  ctx.fillStyle = INK[t.side];
  ctx.beginPath();
  ctx.arc(0, 0, 3.2, 0, Math.PI * 2);
  ctx.fill();
  ctx.restore();
}
