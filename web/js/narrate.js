// Each event said in words for a screen reader, one sentence per flick or happening:
// "Blue's snipe crossed out 2 — two with one bullet." The page collects a batch's sentences as the
// events land and says them together once the batch has been drawn.

import { otherSide } from "./model.js";
import { cap } from "./ui.js";
import { endWords } from "./words.js";

export class Narrator {
  constructor() {
    this.lines = [];
    this.flick = null;
  }

  /** Hears one event as it lands on `model` (the page as drawn so far). */
  hear(ev, model) {
    switch (ev.type) {
      case "ink":
        this.close();
        this.flick = { side: ev.side, kind: ev.kind, crossed: 0, after: [] };
        break;
      case "crossed_out":
        if (!this.flick) break;
        if (ev.cause === "snipe" || ev.cause === "lunge") this.flick.crossed += 1;
        else if (ev.cause === "shot") this.flick.after.push("the lunger was shot where he landed");
        else if (ev.cause === "off_page") this.flick.after.push("the lunger ran off the page");
        break;
      case "bonus":
        if (ev.reason === "two_with_one_bullet" && this.flick) this.flick.after.push("two with one bullet");
        else if (ev.reason === "lunge_again" && ev.credits > 0 && this.flick) this.flick.after.push(`lunge again (${ev.credits})`);
        else if (ev.reason === "lunge_again") { this.close(); this.lines.push("Chain stopped."); }
        break;
      case "send":
        this.close();
        const base = model && model.bases.get(ev.from);
        const n = ev.soldiers.length;
        this.lines.push(`${base ? cap(base.side) : "A side"} sends ${n} soldier${n === 1 ? "" : "s"} on the road to another base.`);
        break;
      case "base_drawn":
        this.lines.push(`${cap(ev.base.side)} draws a base.`);
        break;
      case "turn":
        this.close();
        this.lines.push(`${cap(ev.side)}'s turn${ev.last_stand ? " — last stand" : ""}.`);
        break;
      case "game_over":
        this.close();
        // A page ended by the clock or by absence says how (issue 19); the other endings were just drawn.
        this.lines.push(`${cap(ev.winner)} wins${["time", "abandoned"].includes(ev.reason) ? ` — ${endWords(ev.reason, otherSide(ev.winner))}` : ""}.`);
        break;
      default:
        break;
    }
  }

  close() {
    const f = this.flick;
    if (!f) return;
    this.flick = null;
    const crossed = f.crossed ? `crossed out ${f.crossed}` : "crossed out nobody";
    const after = f.after.length ? ` — ${f.after.join(", ")}` : "";
    this.lines.push(`${cap(f.side)}'s ${f.kind} ${crossed}${after}.`);
  }

  /** The sentences heard since the last flush, as one text ("" when nothing happened). */
  flush() {
    this.close();
    const text = this.lines.join(" ");
    this.lines = [];
    return text;
  }
}
