// Draws the page on one canvas: a cached layer (paper, bases, finished ink) and, every frame, what
// moves (soldiers, crosses, the line being drawn, the pen tip, aim and setup helpers).

import { INK, circleCrossings, drawPaper, handCircle, hashSeed, penCross, penDot, penStroke } from "./paper.js";

const DEFAULT_PAGE = { page_width: 1000, page_height: 1400, dot_radius: 7 };

export class Renderer {
  /** Creates a renderer on a canvas; call resize() before the first draw. */
  constructor(canvas) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d");
    this.layer = document.createElement("canvas");
    this.layerCtx = this.layer.getContext("2d");
    this.model = null;
    this.overlay = {};
    this.layerKey = "";
    this.layerInk = 0;
    this.scale = 1;
    this.cssWidth = 0;
    this.frameRequested = false;
  }

  get rules() {
    return { ...DEFAULT_PAGE, ...(this.model ? this.model.rules : {}) };
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
    this.layerKey = "";
    this.requestDraw();
  }

  /** Sizes the canvas to the widest whole CSS width whose page fits in the element `box`. */
  fitInside(box) {
    const { page_width: w, page_height: h } = this.rules;
    const width = Math.floor(Math.min(box.clientWidth, (box.clientHeight * w) / h));
    if (width > 0 && Math.abs(width - this.cssWidth) >= 1) this.resize(width);
  }

  /** Shows another model (or the same one changed by a snapshot); the cached layer is rebuilt. */
  setModel(model) {
    this.model = model;
    this.layerKey = "";
    this.requestDraw();
  }

  /** Converts a client (CSS pixel) point to page units. */
  toPage(clientX, clientY) {
    const rect = this.canvas.getBoundingClientRect();
    const { page_width: w } = this.rules;
    const k = w / rect.width;
    return { x: (clientX - rect.left) * k, y: (clientY - rect.top) * k };
  }

  /** Converts a page point to client (CSS pixel) coordinates. */
  toClient(x, y) {
    const rect = this.canvas.getBoundingClientRect();
    const { page_width: w } = this.rules;
    const k = rect.width / w;
    return { x: rect.left + x * k, y: rect.top + y * k };
  }

  /** Page units per CSS pixel. */
  unitsPerCssPx() {
    return this.rules.page_width / (this.cssWidth || 1);
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

  /** Number of ink lines that are finished (the one being animated is drawn live). */
  finishedInkCount() {
    const live = this.overlay.liveInk;
    return live ? live.index : this.model.ink.length;
  }

  refreshLayer() {
    const m = this.model;
    const ctx = this.layerCtx;
    const inkCount = this.finishedInkCount();
    const key = `${this.layer.width}|${[...m.bases.keys()].join(",")}|${this.overlay.drawingBase ? this.overlay.drawingBase.base.id : ""}`;
    if (key !== this.layerKey || inkCount < this.layerInk) {
      const { page_width: w, page_height: h } = this.rules;
      ctx.setTransform(this.scale, 0, 0, this.scale, 0, 0);
      drawPaper(ctx, w, h);
      for (const b of m.bases.values()) drawBase(ctx, b);
      this.layerKey = key;
      this.layerInk = 0;
    }
    ctx.setTransform(this.scale, 0, 0, this.scale, 0, 0);
    const bases = [...m.bases.values()];
    for (let i = this.layerInk; i < inkCount; i++) drawInk(ctx, m.ink[i], i, Infinity, bases);
    this.layerInk = inkCount;
  }

  /** Draws the whole frame now. */
  draw() {
    if (!this.model || !this.canvas.width) return;
    this.refreshLayer();
    const ctx = this.ctx;
    const o = this.overlay;
    const m = this.model;
    const r = this.rules;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(this.layer, 0, 0);
    ctx.setTransform(this.scale, 0, 0, this.scale, 0, 0);

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
    for (const s of m.soldiers.values()) {
      if (o.hideSoldiers && o.hideSoldiers.has(s.id)) continue;
      const p = moved.get(s.id) || s;
      penDot(ctx, p.x, p.y, r.dot_radius, { color: INK[s.side], seed: hashSeed(s.id), alpha: s.alive ? 0.95 : 0.55 });
      if (!s.alive && s.cross) {
        const progress = o.crossProgress && o.crossProgress.has(s.id) ? o.crossProgress.get(s.id) : 1;
        penCross(ctx, p.x, p.y, r.dot_radius * 1.7, { color: INK[s.cross.side] || INK.blue, seed: hashSeed(`x${s.id}`), progress });
      }
    }
    if (o.selected) drawSelected(ctx, o.selected, r.dot_radius);
    if (o.aim) drawAim(ctx, o.aim);
    if (o.penTip) drawPenTip(ctx, o.penTip);
  }
}

/** A side's ink, see-through by `alpha` (anything not red is blue). */
function tint(side, alpha) {
  return side === "red" ? `rgba(195, 38, 45, ${alpha})` : `rgba(29, 58, 158, ${alpha})`;
}

function drawBase(ctx, b) {
  handCircle(ctx, b.x, b.y, b.r, { color: INK[b.side], seed: hashSeed(b.id) });
}

function drawInk(ctx, ink, index, upTo = Infinity, bases = null) {
  // A snipe thins a little at each wall it crosses; a lunge shows its walls as kinks already.
  const thinAt = ink.kind === "snipe" && bases ? circleCrossings(ink.points, bases) : [];
  penStroke(ctx, ink.points, { color: INK[ink.side], seed: hashSeed(`ink${index}`), upTo, width: ink.kind === "lunge" ? 2.8 : 3.4, thinAt });
}

function drawHalf(ctx, r, side) {
  const h = r.page_height / 2;
  ctx.save();
  ctx.fillStyle = tint(side, 0.06);
  ctx.fillRect(0, side === "blue" ? h : 0, r.page_width, h);
  ctx.strokeStyle = tint(side, 0.35);
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
