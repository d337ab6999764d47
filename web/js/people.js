// Pages between two people (issue 19): clocks, absence, rematch, phrases. Only this part loads with
// the page screen (issue 21's budget): it keeps what the bars need at once and loads each flow's
// module when the page first needs it (clock.js, absence.js, rematch.js, phrases.js).

import { otherSide } from "./model.js";
import { endWords } from "./words.js";

const PARTS = {
  clock: () => import("./clock.js"),
  absence: () => import("./absence.js"),
  rematch: () => import("./rematch.js"),
  phrases: () => import("./phrases.js"),
};

/** The Rematch button for `state` ({offered_by, page}) and this phone's seat (null watching: never offered one). */
export function rematchButton(state, side) {
  const st = state || {};
  if (!side) return st.page ? { label: "Watch the rematch", action: "watch-rematch" } : null;
  if (st.page) return { label: "Play the rematch", action: "rematch" };
  if (st.offered_by && side !== "both") {
    return st.offered_by === side ? { label: "Offered… (withdraw)", action: "withdraw-rematch" } : { label: "Accept rematch", action: "accept-rematch" };
  }
  return { label: "Rematch", action: "rematch" };
}

/** The people's side of the page screen `screen` (game.js): its hooks are snapshot, message, bar, rematch, idle, close. */
export class PeopleFlow {
  constructor(screen) {
    this.screen = screen;
    this.parts = new Map(); // name -> Promise of the part (null once the screen is gone)
    this.rematchState = null;
    this.margins = null;
    this.offset = 0; // the server's time less this phone's (ms), from the last clock's `now`
  }

  /** The server's time now, as this phone best knows it (ms since the epoch). */
  serverNow() {
    return Date.now() + this.offset;
  }

  /** The seat this phone holds on a page between two people ("blue" / "red"), else null. */
  get seat() {
    const s = this.screen;
    return (s.mode === "link" || s.mode === "live") && s.token && (s.side === "blue" || s.side === "red") ? s.side : null;
  }

  /** The side drawn nearest the player (below the page): your own (the page is turned to face you), else blue. */
  nearSide() {
    return this.seat || "blue";
  }

  /** A flow's part, loaded (and made) once; resolves null once the screen is gone. */
  part(name) {
    if (!this.parts.has(name)) {
      // A part may make the margins at once: their styles come first (margins.js).
      const styled = name === "rematch" ? null : import("./margins.js").then((m) => m.peopleStyles());
      const made = Promise.all([PARTS[name](), styled]).then(([m]) => (this.screen.gone ? null : m.create(this)), () => null);
      this.parts.set(name, made);
    }
    return this.parts.get(name);
  }

  /** Calls `fn` with a part already asked for (none is loaded for it). */
  ifLoaded(name, fn) {
    if (this.parts.has(name)) this.parts.get(name).then((p) => { if (p) fn(p); });
  }

  /** The server's snapshot has been taken. */
  snapshot(snap) {
    this.takeClock(snap.clock);
    if (this.seat) this.part("phrases");
    if (snap.phase === "over") this.part("rematch");
  }

  /** A clock from a snapshot, an events message or an action's answer (null: the page has none). */
  takeClock(clock) {
    if (clock && clock.now) this.offset = Date.parse(clock.now) - Date.now();
    if (clock) this.part("clock").then((c) => c && c.update(clock));
    else if (clock === null) this.ifLoaded("clock", (c) => c.update(null));
  }

  /** Every message of the page's socket (api.js): what concerns the people is passed on. */
  message(data) {
    if (data.type === "events" && data.clock !== undefined) this.takeClock(data.clock);
    if (data.type === "presence") {
      if (data.claim_at) this.part("absence").then((a) => a && a.presence(data));
      else this.ifLoaded("absence", (a) => a.presence(data));
    }
    if (data.type === "rematch") this.part("rematch").then((r) => r && r.take(data, true));
    if (data.type === "said") this.part("phrases").then((p) => p && p.heard(data));
  }

  /** The top bar's view, saying a page that ended on time or by absence so (controls.js knows two endings). */
  status(view) {
    const m = this.screen.model;
    if (!m || m.phase !== "over" || !m.winner || !["time", "abandoned"].includes(m.endReason)) return view;
    return { ...view, line2: endWords(m.endReason, otherSide(m.winner)) };
  }

  /** The bottom bar's view with its Rematch button as the rematch stands (controls.js offers it to all). */
  bar(view) {
    if (!view.items.some((it) => it.act === "rematch")) return view;
    const button = rematchButton(this.rematchState, this.screen.token ? this.screen.side : null);
    const items = view.items.flatMap((it) => {
      if (it.act !== "rematch") return [it];
      return button ? [{ ...it, label: button.label, data: { action: button.action } }] : [];
    });
    return { ...view, items };
  }

  /** The bar's Rematch button was tapped. */
  rematch() {
    return this.part("rematch").then((r) => r && r.tap());
  }

  /** The page's end (or anything drawn) was said: the clocks stop with the page. */
  refresh() {
    this.ifLoaded("clock", (c) => c.draw());
    this.ifLoaded("absence", (a) => a.draw());
  }

  /** Resolves once every part asked for has loaded and what it fetched has come. */
  async idle() {
    const parts = await Promise.all(this.parts.values());
    await Promise.all(parts.map((p) => (p && p.idle ? p.idle() : null)));
  }

  /** The screen is left: timers stop. */
  close() {
    for (const made of this.parts.values()) made.then((p) => { if (p && p.close) p.close(); });
  }

  /** What the browser tests may read. */
  testState() {
    return { rematch: this.rematchState, offset: this.offset, clocks: this.clockPart ? this.clockPart.test() : null, absence: this.absencePart ? this.absencePart.test() : null };
  }
}
