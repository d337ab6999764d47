// Plays server events onto the page: ink stroke by stroke at pen speed with the pen tip showing,
// crosses the moment the pen reaches a man, the lunger running with his line, convoys walking out
// in a short time-lapse. With "reduce motion" every result appears at once.

import { applyEvent } from "./model.js";
import { distanceAlong, pointAlong, polylineLength } from "./paper.js";

// Events that happen along the ink just drawn (timed by their distance along it).
const ALONG_INK = new Set(["wall", "crossed_out", "landed", "game_over"]);
// Pen speed: about one page width a second at full power; softer lines go a little slower.
const PEN_SPEED = 1000;
const CROSS_MS = 160;
const WALL_PAUSE_MS = 70;

export class Animator {
  /**
   * Creates an animator that writes what moves into the screen's `state` (its overlay) and has
   * `renderer` draw each frame of it; `onEvent(ev, model)` hears each event as it lands.
   */
  constructor(state, renderer, onEvent = () => {}) {
    this.state = state;
    this.renderer = renderer;
    this.onEvent = onEvent;
    this.speed = 1;
    this.hurry = false;
    this.pending = 0;
    this.tail = Promise.resolve();
    // The last line drawn ({side, at}: when its pen stopped) and the look under way before the next
    // batch ({end()}), which a tap ends.
    this.lastInk = null;
    this.looking = null;
    const query = window.matchMedia ? window.matchMedia("(prefers-reduced-motion: reduce)") : null;
    this.reducedMotion = !!(query && query.matches);
    if (query && query.addEventListener) query.addEventListener("change", (e) => { this.reducedMotion = e.matches; });
  }

  /** Whether results should appear at once (reduced motion, or the player asked to skip ahead). */
  get instant() {
    return this.reducedMotion || this.hurry;
  }

  /**
   * Queues a list of events to be played onto `model`; resolves when they have all been shown.
   * `lookFirst` ({side, ms}) leaves a moment to look before they are drawn: until `ms` have passed
   * since the last line of `side` was drawn (the player's own shot, before Dawood-bot's answer).
   */
  play(model, events, { instant = false, lookFirst = null } = {}) {
    this.pending += 1;
    const run = async () => {
      const before = this.hurry;
      if (instant) this.hurry = true;
      try {
        if (lookFirst && !instant) await this.look(lookFirst);
        await this.run(model, events);
      } finally {
        if (instant) this.hurry = before;
        this.pending -= 1;
        if (this.pending === 0) this.hurry = false;
        this.state.changed();
      }
    };
    this.tail = this.tail.then(run, run);
    return this.tail;
  }

  /** Finishes whatever is playing at once (a tap on the page while the pen is drawing); during a look, ends the look only. */
  skip() {
    if (this.looking) this.looking.end();
    else if (this.pending > 0) this.hurry = true;
  }

  /** Waits until `ms` have passed since the last line of `side` was drawn (at once if it was not the last line). */
  async look({ side, ms }) {
    const last = this.lastInk;
    if (!last || last.side !== side) return;
    // A tap that finished the player's own line at once asked to see it at once, not to skip the look.
    this.hurry = false;
    const wait = ms - (performance.now() - last.at);
    if (wait <= 0) return;
    await new Promise((resolve) => {
      const timer = setTimeout(() => this.looking.end(), wait);
      this.looking = { end: () => { clearTimeout(timer); this.looking = null; resolve(); } };
    });
  }

  /** Resolves once nothing is playing. */
  async idle() {
    for (;;) {
      const tail = this.tail;
      await tail;
      if (tail === this.tail && this.pending === 0) return;
    }
  }

  get busy() {
    return this.pending > 0;
  }

  async run(model, events) {
    let i = 0;
    while (i < events.length) {
      const ev = events[i];
      if (ev.type === "ink") {
        let j = i + 1;
        while (j < events.length && ALONG_INK.has(events[j].type)) j++;
        await this.ink(model, ev, events.slice(i + 1, j));
        i = j;
      } else {
        await this.single(model, ev);
        i += 1;
      }
    }
  }

  land(model, ev) {
    applyEvent(model, ev);
    this.onEvent(ev, model);
  }

  /** Runs `step(f)` for f from 0 to 1 over `ms` milliseconds of animation frames. */
  tween(ms, step) {
    const r = this.renderer;
    if (this.instant || ms <= 0) {
      step(1);
      this.state.changed();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const t0 = performance.now();
      const frame = (now) => {
        const f = this.instant ? 1 : Math.min(1, Math.max(0, ((now - t0) * this.speed) / ms));
        step(f);
        r.draw();
        if (f >= 1) resolve();
        else requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    });
  }

  async ink(model, ev, along) {
    const r = this.renderer;
    const o = this.state.overlay;
    this.land(model, ev);
    const index = model.ink.length - 1;
    const points = ev.points;
    const total = polylineLength(points);
    // Where along the line each following event happens.
    let last = 0;
    const marks = along.map((e) => {
      if (e.at) last = distanceAlong(points, e.at, last);
      return { ev: e, d: last };
    });
    const lunger = ev.kind === "lunge" ? ev.soldier : null;
    const speed = PEN_SPEED * (0.55 + 0.45 * Math.min(1, Math.max(0, ev.power ?? 1)));
    o.positions = o.positions || new Map();
    o.crossProgress = o.crossProgress || new Map();
    const crossStarts = new Map();
    let drawn = 0;
    let pausedUntil = 0;
    let next = 0;
    let prev = performance.now();
    o.liveInk = { index, upTo: 0 };

    const fire = (now) => {
      while (next < marks.length && marks[next].d <= drawn + 1e-6) {
        const { ev: e } = marks[next++];
        this.land(model, e);
        if (e.type === "crossed_out") {
          crossStarts.set(e.soldier, now);
          o.crossProgress.set(e.soldier, 0);
        }
        if (e.type === "wall") pausedUntil = now + WALL_PAUSE_MS / this.speed;
      }
    };
    const place = () => {
      const tip = pointAlong(points, drawn);
      o.liveInk.upTo = drawn;
      o.penTip = { x: tip.x, y: tip.y, side: ev.side };
      if (lunger) o.positions.set(lunger, { x: tip.x, y: tip.y });
    };

    if (!this.instant) {
      await new Promise((resolve) => {
        const frame = (now) => {
          // A frame's timestamp can precede the moment the line started: never step backwards.
          const dt = Math.max(0, Math.min(64, now - prev));
          prev = now;
          if (this.instant) drawn = total;
          else if (now >= pausedUntil) drawn = Math.min(total, drawn + (dt / 1000) * speed * this.speed);
          fire(now);
          place();
          for (const [id, t0] of crossStarts) {
            const f = Math.min(1, Math.max(0, ((now - t0) * this.speed) / CROSS_MS));
            o.crossProgress.set(id, f);
            if (f >= 1) crossStarts.delete(id);
          }
          r.draw();
          if (drawn >= total && next >= marks.length && crossStarts.size === 0) resolve();
          else requestAnimationFrame(frame);
        };
        requestAnimationFrame(frame);
      });
    }
    drawn = total;
    fire(performance.now());
    o.liveInk = null;
    o.penTip = null;
    this.lastInk = { side: ev.side, at: performance.now() };
    if (lunger) o.positions.delete(lunger);
    for (const m of marks) if (m.ev.type === "crossed_out") o.crossProgress.delete(m.ev.soldier);
    this.state.changed();
  }

  async single(model, ev) {
    const o = this.state.overlay;
    o.positions = o.positions || new Map();
    switch (ev.type) {
      case "base_drawn": {
        o.drawingBase = { base: { ...ev.base }, progress: 0 };
        await this.tween(420, (f) => { o.drawingBase.progress = f; });
        o.drawingBase = null;
        this.land(model, ev);
        break;
      }
      case "positioned":
      case "send":
      case "arrived": {
        const from = new Map();
        for (const p of ev.soldiers) {
          const s = model.soldiers.get(p.id);
          if (s) from.set(p.id, { x: s.x, y: s.y });
        }
        this.land(model, ev);
        const ms = ev.type === "positioned" ? 380 : 750;
        await this.tween(ms, (f) => {
          const e = f < 0.5 ? 2 * f * f : 1 - (-2 * f + 2) ** 2 / 2;
          for (const p of ev.soldiers) {
            const a = from.get(p.id);
            if (!a) continue;
            if (f >= 1) o.positions.delete(p.id);
            else o.positions.set(p.id, { x: a.x + (p.x - a.x) * e, y: a.y + (p.y - a.y) * e });
          }
        });
        break;
      }
      case "crossed_out": {
        o.crossProgress = o.crossProgress || new Map();
        this.land(model, ev);
        await this.tween(CROSS_MS, (f) => {
          if (f >= 1) o.crossProgress.delete(ev.soldier);
          else o.crossProgress.set(ev.soldier, f);
        });
        break;
      }
      default:
        this.land(model, ev);
        this.state.changed();
    }
  }
}
