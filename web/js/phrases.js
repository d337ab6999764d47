// Phrases between the two players (issue 19, item 6): one tap from a short fixed list (no free text,
// nothing to moderate), shown on the other phone as a small pencil bubble in the speaker's margin
// (above the page for the player across, below it for you), gone after a few seconds, never over the
// ink and never moving the page. A link page shows what the other said while this phone was away; the
// replay shows each phrase at its moment. Either side may mute the other (kept on this phone, per
// page); over the server's cap, the refusal is said gently.

import { request } from "./api.js";
import { otherSide } from "./model.js";
import { margin, marginOf, pageMargins, peopleStyles } from "./margins.js";
import { cap, h, say, sheet, toast } from "./ui.js";

// The phrases a player may say (PROTOCOL.md's fixed list; no free text to moderate), in the app's words.
export const PHRASE_WORDS = {
  hello: "Hello!", good_luck: "Good luck!", have_fun: "Have fun!", nice_shot: "Nice shot!",
  well_played: "Well played!", thanks: "Thanks!", good_game: "Good game!",
};
const SHOW_MS = 4000;
const phrasesPath = (id, what) => `/api/pages/${encodeURIComponent(id)}/${what}`;
const KEPT_SHOWN = 3;
const STORE = "dotfight.phrases.v1";

/** What this phone keeps of a page's phrases: {mute: [sides], seenAt: ISO time of the last phrase seen}. */
function kept(id) {
  try {
    const all = JSON.parse(localStorage.getItem(STORE) || "{}");
    return (all && typeof all === "object" && all[id]) || {};
  } catch {
    return {};
  }
}

function keep(id, update) {
  try {
    const all = JSON.parse(localStorage.getItem(STORE) || "{}") || {};
    all[id] = { ...(all[id] || {}), ...update };
    localStorage.setItem(STORE, JSON.stringify(all));
  } catch {
    // A full or blocked storage only forgets the mute; the page goes on.
  }
}

/** Whether this phone has muted `side` on page `id`. */
export function isMuted(id, side) {
  return (kept(id).mute || []).includes(side);
}

/** Mutes (or unmutes) `side` on page `id`, on this phone. */
export function setMuted(id, side, on) {
  const mute = new Set(kept(id).mute || []);
  if (on) mute.add(side);
  else mute.delete(side);
  keep(id, { mute: [...mute] });
}

/** Shows a phrase in a margin for a few seconds (one bubble per margin: a new one replaces it). */
function bubble(strip, side, phrase) {
  const words = PHRASE_WORDS[phrase];
  if (!words) return null;
  strip.querySelector(".bubble")?.remove();
  const el = h("div", { class: `bubble bubble-${side}`, "aria-hidden": "true", dataset: { phrase } }, words);
  strip.append(el);
  setTimeout(() => el.remove(), SHOW_MS);
  return el;
}

export function create(people) {
  return new PhraseFlow(people);
}

/** The phrases of a seat on a page between two people (people.js's part). */
class PhraseFlow {
  constructor(people) {
    this.people = people;
    this.screen = people.screen;
    this.id = this.screen.id;
    this.sending = null;
    this.button = h("button", {
      class: "btn say-btn", type: "button", "data-action": "say", "aria-label": "say something to the other player",
      onclick: () => this.choose(),
    }, "Say…");
    margin(people, "bottom").append(this.button);
    this.loading = this.screen.mode === "link" ? this.showKept() : null;
  }

  get mine() {
    return this.people.seat;
  }

  get other() {
    return otherSide(this.mine);
  }

  /** A link page: what the other side said since this phone last looked, one bubble after another. */
  async showKept() {
    let said;
    try {
      said = (await request("GET", phrasesPath(this.id, "said"))).said || [];
    } catch {
      return;
    }
    const seenAt = kept(this.id).seenAt || "";
    const fresh = said.filter((p) => p.side === this.other && String(p.at) > seenAt);
    if (said.length) keep(this.id, { seenAt: String(said[said.length - 1].at) });
    if (!fresh.length || isMuted(this.id, this.other)) return;
    say(`While you were away ${this.other} said: ${fresh.map((p) => PHRASE_WORDS[p.phrase] || "").join(" ")}`);
    fresh.slice(-KEPT_SHOWN).forEach((p, i) => setTimeout(() => this.show(p.side, p.phrase), i * SHOW_MS));
  }

  /** A phrase said on the page (the socket's `said`); this phone's own were shown as they were sent. */
  heard(msg) {
    if (!this.mine || msg.side === this.mine || !PHRASE_WORDS[msg.phrase]) return;
    keep(this.id, { seenAt: String(msg.at) });
    if (isMuted(this.id, msg.side)) return;
    say(`${cap(msg.side)} says: ${PHRASE_WORDS[msg.phrase]}`);
    this.show(msg.side, msg.phrase);
  }

  show(side, phrase) {
    if (!this.screen.gone) bubble(marginOf(this.people, side), side, phrase);
  }

  /** The fixed list, in a quiet sheet, with the mute of the other side. */
  choose() {
    const other = this.other;
    const muteWords = () => (isMuted(this.id, other) ? `Unmute ${other}` : `Mute ${other}`);
    const mute = h("button", {
      class: "btn btn-quiet", type: "button", "data-action": "mute", "aria-pressed": String(isMuted(this.id, other)),
      onclick: () => {
        setMuted(this.id, other, !isMuted(this.id, other));
        mute.textContent = muteWords();
        mute.setAttribute("aria-pressed", String(isMuted(this.id, other)));
      },
    }, muteWords());
    const s = sheet(`Say to ${other}`, h("div", { class: "stack" },
      h("div", { class: "row phrases" }, Object.entries(PHRASE_WORDS).map(([key, words]) => h("button", {
        class: "btn", type: "button", dataset: { phrase: key }, onclick: () => { s.close(); this.send(key); },
      }, words))),
      mute), { className: "say-sheet" });
  }

  /** Says a phrase; shown in this phone's own margin once the server has it. */
  send(phrase) {
    if (this.sending) return this.sending;
    this.sending = (async () => {
      try {
        await request("POST", phrasesPath(this.id, "say"), { token: this.screen.token, body: { phrase } });
        this.show(this.mine, phrase);
      } catch (err) {
        if (this.screen.gone) return;
        // The cap is the server's; reaching it is no fault, so it is said gently.
        if (err.code === "rate_limited") toast("That is all you can say on this page.");
        else toast(err.code === "offline" ? "Not said: there is no connection to the server." : `Not said: ${err.message}`, { kind: "refusal" });
      } finally {
        this.sending = null;
      }
    })();
    return this.sending;
  }

  async idle() {
    if (this.loading) await this.loading;
    if (this.sending) await this.sending;
  }
}

/**
 * The phrases of a replay (replay.js): loaded once with the log, each shown when the replay reaches
 * the version the page was at when it was said (the muted side's are not).
 */
export class ReplayPhrases {
  constructor(stage, id) {
    this.id = id;
    this.margins = null;
    this.said = [];
    this.loading = Promise.all([request("GET", phrasesPath(id, "said")), peopleStyles()]).then(([a]) => {
      this.said = (a && a.said) || [];
      if (this.said.length) this.margins = pageMargins(stage);
    }, () => {});
  }

  /** The replay is at move `version`: the phrases said there show. */
  at(version) {
    if (!this.margins) return;
    for (const p of this.said) {
      if (p.version !== version || isMuted(this.id, p.side)) continue;
      // The replay shows the page as blue sees it: red across, blue below.
      bubble(this.margins[p.side === "red" ? "top" : "bottom"], p.side, p.phrase);
    }
  }
}
