// The page's clocks (issue 19, item 8), written as a pen would on the page's margin: each side's
// time in its colour beside its edge of the page (yours below, the other's above), the running one
// counting down from the server's deadline. A live page shows both sides' minutes and seconds; a link
// page the time the side to act has left for its move ("2 days left"). Quiet until the last ten
// seconds: then the running clock turns urgent, the phone buzzes once (your own clock) and the live
// region says it once — not every second.

import { marginOf } from "./margins.js";
import { cap, h, say } from "./ui.js";

export const URGENT_MS = 10000;
const TICK_MS = 200;
const VIBRATE_MS = 120;
const MINUTE = 60000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Minutes and seconds of a time left in ms ("4:05", "0:09"), whole seconds rounded up, never below 0:00. */
export function minutesSeconds(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** A link page's time left in words: "2 days left", "5 hours left", "12 minutes left", "0:40 left". */
export function timeLeftWords(ms) {
  const count = (n, unit) => `${n} ${unit}${n === 1 ? "" : "s"} left`;
  if (ms >= DAY) return count(Math.floor(ms / DAY), "day");
  if (ms >= HOUR) return count(Math.floor(ms / HOUR), "hour");
  if (ms >= 2 * MINUTE) return count(Math.floor(ms / MINUTE), "minute");
  return `${minutesSeconds(ms)} left`;
}

/** The same time for a screen reader: "4 minutes 5 seconds". */
function spokenTime(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const m = Math.floor(s / 60);
  const plural = (n, unit) => `${n} ${unit}${n === 1 ? "" : "s"}`;
  return m ? `${plural(m, "minute")} ${plural(s % 60, "second")}` : plural(s, "second");
}

/**
 * Each side's time left (ms) at the server's time `now` (ms) for a clock as the server sent it: the
 * running side's counts down to its deadline, the other's stands at what the server said.
 */
export function timesLeft(clock, now) {
  const left = { blue: (clock.blue_s ?? 0) * 1000, red: (clock.red_s ?? 0) * 1000 };
  if (clock.running && clock.deadline) left[clock.running] = Date.parse(clock.deadline) - now;
  return left;
}

export function create(people) {
  return new ClockFlow(people);
}

/** The clocks of one page screen (people.js's part). */
class ClockFlow {
  constructor(people) {
    this.people = people;
    this.screen = people.screen;
    this.clock = null;
    this.timer = null;
    this.urgentFor = null; // the deadline whose last ten seconds were already said and buzzed
    this.faces = {};
    people.clockPart = this;
  }

  /** Takes the server's clock (null: the page has none, or none any more). */
  update(clock) {
    this.clock = clock;
    this.draw();
  }

  /** Whether the page is a link page's deadline (one side's time for its move) rather than a live clock. */
  get perMove() {
    return !!(this.clock && this.clock.per_move_s);
  }

  /** The clock's face for a side, made once in that side's margin. */
  face(side) {
    if (!this.faces[side]) {
      this.faces[side] = h("div", { class: `clock clock-${side}`, role: "timer", tabindex: "0" });
      marginOf(this.people, side).prepend(this.faces[side]);
    }
    return this.faces[side];
  }

  /** Draws both faces for the server's time now, and keeps ticking while a side's time runs. */
  draw() {
    const c = this.clock;
    const over = !this.screen.model || this.screen.model.phase === "over";
    const running = c && !over ? c.running : null;
    clearTimeout(this.timer);
    this.timer = null;
    for (const side of ["blue", "red"]) {
      if (!c) {
        if (this.faces[side]) this.faces[side].hidden = true;
        continue;
      }
      const face = this.face(side);
      const left = this.left(side, running);
      const shown = this.perMove ? side === running : true;
      face.hidden = !shown;
      if (!shown) continue;
      const urgent = side === running && left < URGENT_MS;
      const setup = side === running && !this.perMove && this.screen.model && this.screen.model.phase !== "play";
      const words = this.perMove ? timeLeftWords(left) : minutesSeconds(left);
      face.textContent = setup ? `${words} to set up` : words;
      face.classList.toggle("running", side === running);
      face.classList.toggle("urgent", urgent);
      face.dataset.ms = String(Math.round(left));
      face.setAttribute("aria-label", `${cap(side)}'s ${this.perMove ? "time for this move" : "clock"}: ${this.perMove ? timeLeftWords(left) : spokenTime(left)}${side === running ? ", running" : ""}`);
      if (urgent) this.lastSeconds(side, left);
    }
    if (running) this.timer = setTimeout(() => this.draw(), TICK_MS);
  }

  /** A side's time left now (ms); the side not running stands at what the server said. */
  left(side, running) {
    return timesLeft({ ...this.clock, running }, this.people.serverNow())[side];
  }

  /** The running side's last ten seconds, said and (on your own clock) buzzed once a deadline. */
  lastSeconds(side, left) {
    if (this.urgentFor === this.clock.deadline || left <= 0) return;
    this.urgentFor = this.clock.deadline;
    const yours = side === this.people.seat;
    say(yours ? "Ten seconds left on your clock." : `${cap(side)} has ten seconds left.`);
    if (yours && navigator.vibrate) navigator.vibrate(VIBRATE_MS);
  }

  /** What the browser tests read: each side's time left now, and which runs. */
  test() {
    const c = this.clock;
    if (!c) return null;
    const over = !this.screen.model || this.screen.model.phase === "over";
    const running = over ? null : c.running;
    return { blue_ms: this.left("blue", running), red_ms: this.left("red", running), running, perMove: this.perMove };
  }

  close() {
    clearTimeout(this.timer);
  }
}
