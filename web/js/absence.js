// A live page whose side to act has gone (issue 19, item 4). The server's presence names `claim_at`,
// the moment from which the one who stayed may claim the win: until then that side's margin counts
// down to it ("Red left the page — claim in 0:42"); from then a quiet sheet, like the end sheet,
// offers "Claim the win" or "Keep waiting", and the claim stays in the margin for whoever kept
// waiting. The one who left coming back takes it all away; a claim refused meanwhile (they came
// back just then) says so quietly.

import { minutesSeconds } from "./clock.js";
import { marginOf } from "./margins.js";
import { cap, h, say, sheet, toast } from "./ui.js";

const TICK_MS = 250;

/** The side the seat `seat` may claim against on `model`: the side to act of a live page in play, when not `seat`. */
export function awaySide(model, seat, mode) {
  if (!model || !seat || mode !== "live" || model.phase === "over" || !model.sideToAct) return null;
  return model.sideToAct === seat ? null : model.sideToAct;
}

export function create(people) {
  return new AbsenceFlow(people);
}

/** The absence countdown and the claim on one page screen (people.js's part). */
class AbsenceFlow {
  constructor(people) {
    this.people = people;
    this.screen = people.screen;
    this.claimAt = null;
    this.el = null;
    this.timer = null;
    this.offered = null; // the claim_at whose sheet was opened (once)
    this.sheet = null;
    this.claiming = null;
    people.absencePart = this;
  }

  /** The server's presence: `claim_at` is when the claim opens, null once nobody is away. */
  presence(p) {
    this.claimAt = p.claim_at || null;
    this.draw();
  }

  /** Who is away and how long until the claim opens (ms; ≤ 0: it is open), or null. */
  standing() {
    const away = this.claimAt && awaySide(this.screen.model, this.people.seat, this.screen.mode);
    return away ? { away, ms: Date.parse(this.claimAt) - this.people.serverNow() } : null;
  }

  draw() {
    clearTimeout(this.timer);
    const st = this.standing();
    if (!st) {
      this.clear();
      return;
    }
    const margin = marginOf(this.people, st.away);
    if (!this.el || this.el.parentNode !== margin) {
      if (this.el) this.el.remove();
      this.el = h("div", { class: "away" });
      margin.append(this.el);
    }
    if (st.ms > 0) {
      this.el.replaceChildren(`${cap(st.away)} left the page — claim in ${minutesSeconds(st.ms)}`);
      this.timer = setTimeout(() => this.draw(), TICK_MS);
      return;
    }
    if (!this.el.querySelector("button")) {
      this.el.replaceChildren(`${cap(st.away)} left the page`,
        h("button", { class: "btn btn-quiet claim", type: "button", "data-action": "claim", onclick: () => this.claim() }, "Claim the win"));
    }
    if (this.offered !== this.claimAt) this.offer(st.away);
  }

  /** The quiet sheet: claim the win, or keep waiting (the margin keeps the claim). */
  offer(away) {
    this.offered = this.claimAt;
    say(`${cap(away)} left the page. You may claim the win.`);
    const button = (label, action, cls, fn) => h("button", { class: cls, type: "button", "data-action": action, onclick: fn }, label);
    this.sheet = sheet(`${cap(away)} left the page`, h("div", { class: "stack" },
      h("p", {}, `You may claim the win, or keep waiting for ${away} to come back.`),
      h("div", { class: "row" },
        button("Claim the win", "claim", "btn btn-main", () => this.claim()),
        button("Keep waiting", "keep-waiting", "btn", () => this.closeSheet()))),
    { className: "end claim-sheet", onClose: () => { this.sheet = null; } });
  }

  closeSheet() {
    if (this.sheet) this.sheet.close();
    this.sheet = null;
  }

  /** Nobody is away (or the page is over): the countdown and the claim go. */
  clear() {
    this.closeSheet();
    if (this.el) this.el.remove();
    this.el = null;
  }

  /** Claims the win (`claim`, as any action: over the socket with a move_id, else over HTTP). */
  claim() {
    this.closeSheet();
    if (this.claiming) return this.claiming;
    const s = this.screen;
    const away = this.standing() ? this.standing().away : null;
    this.claiming = (async () => {
      try {
        const res = await s.sync.act({ type: "claim" });
        if (res.events) s.sync.receive(res.version, res.events);
      } catch {
        // Refused: the other came back meanwhile (or the line is down). Nothing to alarm anyone.
        if (!s.gone && away) toast(`${cap(away)} is back — the page goes on.`);
      } finally {
        this.claiming = null;
      }
    })();
    return this.claiming;
  }

  idle() {
    return this.claiming;
  }

  /** What the browser tests read. */
  test() {
    const st = this.standing();
    return st ? { away: st.away, ms: st.ms, open: st.ms <= 0 } : null;
  }

  close() {
    clearTimeout(this.timer);
    this.closeSheet();
  }
}
