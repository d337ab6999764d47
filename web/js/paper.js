// The exercise-book paper and the ballpoint: ruled lines, a red margin, and pen strokes that are a
// touch uneven (never perfect vectors). Every wobble comes from a seeded generator, so the same line
// is drawn the same way on every redraw.

export const INK = { blue: "#1d3a9e", red: "#c3262d" };
const PAPER = { sheet: "#fbf6e9", rule: "rgba(96, 146, 205, 0.38)", margin: "rgba(214, 70, 70, 0.55)" };
// Whatever the rules, a drawing's work is a constant plus a part linear in the ink and soldiers (the
// same numbers as the server's picture.py). Ruled lines are a 26th of the width apart, and a page
// within the new-page limits (its long side at most 20 times its short side) has at most 520 of them;
// a taller page (stored before the limits) gets 520 spread over its height.
const RULES_ACROSS = 26;
export const MAX_RULED_LINES = 520;
// Points of one stroke besides its own corners (a preset's longest line has a few hundred): a longer
// stroke, or a huge ring, is sampled further apart.
export const MAX_STROKE_SAMPLES = 1024;

/** Returns a deterministic generator of numbers in [0, 1) for a seed (mulberry32). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Hashes a string to a 32-bit seed (FNV-1a). */
export function hashSeed(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A smooth 1-D noise: a sum of three seeded sines, in about [-1, 1]. */
function smoothNoise(seed) {
  const r = rng(seed);
  const waves = [0, 1, 2].map((i) => ({ f: (0.004 + r() * 0.01) * (i + 1), p: r() * 6.28, a: 1 / (i + 1.4) }));
  return (d) => waves.reduce((acc, w) => acc + w.a * Math.sin(d * w.f + w.p), 0) / 1.6;
}

/** Draws the paper: warm sheet, faint blue rules, one red margin line, in page units. */
export function drawPaper(ctx, width, height, { margin = true } = {}) {
  ctx.fillStyle = PAPER.sheet;
  ctx.fillRect(0, 0, width, height);
  const gap = Math.max(width / RULES_ACROSS, height / MAX_RULED_LINES);
  ctx.strokeStyle = PAPER.rule;
  ctx.lineWidth = 1.6;
  ctx.beginPath();
  // Counted, not only `y < height`: a gap too small to move y on would never end otherwise.
  let y = gap * 2.5;
  for (let n = 0; n < MAX_RULED_LINES && y < height; n++, y += gap) {
    ctx.moveTo(0, y);
    ctx.lineTo(width, y);
  }
  ctx.stroke();
  if (!margin) return;
  ctx.strokeStyle = PAPER.margin;
  ctx.lineWidth = 2.2;
  ctx.beginPath();
  ctx.moveTo(width * 0.085, 0);
  ctx.lineTo(width * 0.085, height);
  ctx.stroke();
}

/**
 * Resamples a polyline into points about `step` apart (further apart on a line longer than
 * MAX_STROKE_SAMPLES steps), each with its distance `d` from the start.
 */
function resample(points, step = 6) {
  const out = [];
  if (!points.length) return out;
  step = Math.max(step, polylineLength(points) / MAX_STROKE_SAMPLES);
  let d = 0;
  out.push({ x: points[0][0], y: points[0][1], d: 0 });
  for (let i = 1; i < points.length; i++) {
    const [x0, y0] = points[i - 1];
    const [x1, y1] = points[i];
    const len = Math.hypot(x1 - x0, y1 - y0);
    const n = Math.max(1, Math.ceil(len / step));
    for (let k = 1; k <= n; k++) {
      const f = k / n;
      out.push({ x: x0 + (x1 - x0) * f, y: y0 + (y1 - y0) * f, d: d + len * f });
    }
    d += len;
  }
  return out;
}

/** Total length of a polyline. */
export function polylineLength(points) {
  let d = 0;
  for (let i = 1; i < points.length; i++) d += Math.hypot(points[i][0] - points[i - 1][0], points[i][1] - points[i - 1][1]);
  return d;
}

/** The point at distance `dist` along a polyline (clamped to its ends), with the local direction. */
export function pointAlong(points, dist) {
  let d = 0;
  for (let i = 1; i < points.length; i++) {
    const [x0, y0] = points[i - 1];
    const [x1, y1] = points[i];
    const len = Math.hypot(x1 - x0, y1 - y0);
    if (d + len >= dist && len > 0) {
      const f = Math.max(0, (dist - d) / len);
      return { x: x0 + (x1 - x0) * f, y: y0 + (y1 - y0) * f, dx: (x1 - x0) / len, dy: (y1 - y0) / len };
    }
    d += len;
  }
  const last = points[points.length - 1];
  return { x: last[0], y: last[1], dx: 0, dy: 0 };
}

/** Distance along a polyline of the point on it nearest to `at`, searching from `from` onwards. */
export function distanceAlong(points, at, from = 0) {
  let d = 0;
  let best = from;
  let bestGap = Infinity;
  for (let i = 1; i < points.length; i++) {
    const [x0, y0] = points[i - 1];
    const [x1, y1] = points[i];
    const len = Math.hypot(x1 - x0, y1 - y0);
    if (len > 0 && d + len >= from) {
      let f = ((at[0] - x0) * (x1 - x0) + (at[1] - y0) * (y1 - y0)) / (len * len);
      f = Math.min(1, Math.max(0, f));
      const gap = Math.hypot(x0 + (x1 - x0) * f - at[0], y0 + (y1 - y0) * f - at[1]);
      const along = Math.max(from, d + len * f);
      if (gap < bestGap - 1e-6) { bestGap = gap; best = along; }
    }
    d += len;
  }
  return best;
}

/**
 * Draws a ballpoint stroke along a polyline in page units: slightly wobbly, a little uneven in
 * width, darker where the pen starts and stops. `upTo` draws only the first part (for animation).
 */
export function penStroke(ctx, points, { color, width = 3.2, seed = 1, upTo = Infinity, wobble = 1.8, alpha = 0.92, thinAt = [] } = {}) {
  const samples = resample(points, 5);
  if (samples.length < 2) return;
  const total = samples[samples.length - 1].d;
  const end = Math.min(total, upTo);
  if (!(end > 0)) return;
  const bend = smoothNoise(seed);
  const thick = smoothNoise(seed ^ 0x9e3779b9);
  const pts = [];
  for (let i = 0; i < samples.length; i++) {
    const p = samples[i];
    if (p.d > end + 1e-9) {
      // Finish exactly at `end` so the pen tip and the line meet.
      const q = samples[i - 1];
      const f = (end - q.d) / Math.max(1e-9, p.d - q.d);
      pts.push({ x: q.x + (p.x - q.x) * f, y: q.y + (p.y - q.y) * f, d: end });
      break;
    }
    pts.push(p);
  }
  if (pts.length < 2) return;
  // Offset each point a little sideways; the ends stay put so the line meets its soldier.
  const bent = pts.map((p, i) => {
    const a = pts[Math.max(0, i - 1)];
    const b = pts[Math.min(pts.length - 1, i + 1)];
    const len = Math.hypot(b.x - a.x, b.y - a.y) || 1;
    const nx = -(b.y - a.y) / len;
    const ny = (b.x - a.x) / len;
    const fade = Math.min(1, p.d / 30, (total - p.d) / 30 + 0.02);
    const off = bend(p.d) * wobble * fade;
    return { x: p.x + nx * off, y: p.y + ny * off, d: p.d };
  });
  ctx.save();
  ctx.lineCap = "round";
  ctx.lineJoin = "round";
  ctx.strokeStyle = color;
  // Chunks of about 40 units (cut at wall crossings), each a shade thicker or thinner: the uneven
  // pressure of a ballpoint.
  const chunk = 40;
  let start = 0;
  while (start < bent.length - 1) {
    let stop = start + 1;
    while (stop < bent.length - 1 && bent[stop].d - bent[start].d < chunk && !thinAt.some((d) => d > bent[stop - 1].d && d <= bent[stop].d)) stop++;
    const mid = (bent[start].d + bent[stop].d) / 2;
    ctx.globalAlpha = alpha * (0.86 + 0.14 * (thick(mid * 3) * 0.5 + 0.5));
    // Each wall already crossed leaves the line a little thinner (a snipe losing its power).
    const thinned = thinAt.reduce((k, d) => (d < mid ? k * 0.82 : k), 1);
    ctx.lineWidth = width * Math.max(0.45, thinned) * (0.9 + 0.2 * (thick(mid) * 0.5 + 0.5));
    ctx.beginPath();
    ctx.moveTo(bent[start].x, bent[start].y);
    for (let i = start + 1; i <= stop; i++) ctx.lineTo(bent[i].x, bent[i].y);
    ctx.stroke();
    start = stop;
  }
  // The pen rests a moment where it starts and, if the line is finished, where it stops: a darker blob.
  ctx.globalAlpha = alpha;
  ctx.fillStyle = color;
  blob(ctx, bent[0], width * 0.75);
  if (end >= total) blob(ctx, bent[bent.length - 1], width * 0.7);
  ctx.restore();
}

function blob(ctx, p, r) {
  ctx.beginPath();
  ctx.arc(p.x, p.y, r, 0, Math.PI * 2);
  ctx.fill();
}

/**
 * Draws a hand-drawn circle: the radius breathes a little and the pen overshoots where the circle
 * closes. `progress` in [0, 1] draws part of it (for animation).
 */
export function handCircle(ctx, x, y, r, { color, seed = 1, progress = 1, width = 3.2, alpha = 0.9 } = {}) {
  const rand = rng(seed);
  const start = rand() * Math.PI * 2;
  const overshoot = 0.22 + rand() * 0.18;
  const sweep = (Math.PI * 2 + overshoot) * progress;
  const squash = 1 + (rand() - 0.5) * 0.05;
  const phase = rand() * 6.28;
  const drift = (rand() - 0.5) * 0.035;
  const steps = Math.min(MAX_STROKE_SAMPLES, Math.max(12, Math.ceil((r * sweep) / 5)));
  const pts = [];
  for (let i = 0; i <= steps; i++) {
    const a = start + (sweep * i) / steps;
    // The radius drifts outward as the pen goes round, so the closing overshoot sits beside the start.
    const rr = r * (1 + 0.012 * Math.sin(2 * a + phase) + drift * ((a - start) / (Math.PI * 2)));
    pts.push([x + Math.cos(a) * rr * squash, y + Math.sin(a) * rr / squash]);
  }
  penStroke(ctx, pts, { color, seed: seed ^ 0x55aa, width, wobble: 0.6, alpha });
}

/** Draws a soldier's dot: a filled ballpoint blob, not a perfect disc. */
export function penDot(ctx, x, y, r, { color, seed = 1, alpha = 0.95 } = {}) {
  const rand = rng(seed);
  ctx.save();
  ctx.fillStyle = color;
  ctx.globalAlpha = alpha;
  ctx.beginPath();
  ctx.ellipse(x, y, r * (0.95 + rand() * 0.1), r * (0.9 + rand() * 0.1), rand() * Math.PI, 0, Math.PI * 2);
  ctx.fill();
  ctx.globalAlpha = alpha * 0.5;
  ctx.beginPath();
  ctx.arc(x + (rand() - 0.5) * r * 0.3, y + (rand() - 0.5) * r * 0.3, r * 0.85, 0, Math.PI * 2);
  ctx.fill();
  ctx.restore();
}

/** Draws the small X over a crossed-out soldier, in the killer's colour. */
export function penCross(ctx, x, y, size, { color, seed = 1, progress = 1 } = {}) {
  const rand = rng(seed);
  const j = () => (rand() - 0.5) * size * 0.25;
  const a = [[x - size + j(), y - size + j()], [x + size + j(), y + size + j()]];
  const b = [[x + size + j(), y - size + j()], [x - size + j(), y + size + j()]];
  const len = Math.hypot(a[1][0] - a[0][0], a[1][1] - a[0][1]);
  const first = Math.min(1, progress * 2);
  const second = Math.max(0, progress * 2 - 1);
  penStroke(ctx, a, { color, seed: seed + 1, width: 3.2, wobble: 0.3, upTo: len * first });
  if (second > 0) penStroke(ctx, b, { color, seed: seed + 2, width: 3.2, wobble: 0.3, upTo: len * second });
}

/**
 * Distances along a polyline where it crosses the circles ({x, y, r}), in order. Leaving the circle
 * the line starts in is not counted (the wall at a shooter's back costs nothing).
 */
export function circleCrossings(points, circles) {
  const out = [];
  if (points.length < 2) return out;
  for (const c of circles) {
    const mine = [];
    let d = 0;
    for (let i = 1; i < points.length; i++) {
      const [x0, y0] = points[i - 1];
      const [x1, y1] = points[i];
      const dx = x1 - x0;
      const dy = y1 - y0;
      const a = dx * dx + dy * dy;
      const len = Math.sqrt(a);
      if (len > 0) {
        // Solve |p0 + t (p1 - p0) - c| = r for t in (0, 1].
        const fx = x0 - c.x;
        const fy = y0 - c.y;
        const b = 2 * (fx * dx + fy * dy);
        const k = fx * fx + fy * fy - c.r * c.r;
        const disc = b * b - 4 * a * k;
        if (disc >= 0) {
          const root = Math.sqrt(disc);
          for (const t of [(-b - root) / (2 * a), (-b + root) / (2 * a)]) if (t > 1e-6 && t <= 1) mine.push(d + t * len);
        }
      }
      d += len;
    }
    const startsInside = Math.hypot(points[0][0] - c.x, points[0][1] - c.y) <= c.r;
    out.push(...(startsInside ? mine.slice(1) : mine));
  }
  return out.sort((p, q) => p - q);
}
