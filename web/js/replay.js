// Replays any page from its log, flick by flick: a scrubber, play/pause and speed. Next to each
// line actually drawn, the aim the player intended (the action's vector, at the line's reach) is
// drawn faintly, so the luck of the flick shows.

import { Animator } from "./animate.js";
import { api } from "./api.js";
import { applyEvent, blankModel, otherSide } from "./model.js";
import { go, pagePath } from "./nav.js";
import { Renderer } from "./render.js";
import { cap, h, mount } from "./ui.js";
import { CODE_WORDS, endWords } from "./words.js";

const SPEEDS = [1, 2, 4];
const PAUSE_MS = 350;

function describe(entry) {
  if (!entry) return "The blank page";
  const a = entry.action || {};
  const who = cap(entry.side);
  switch (a.type) {
    case "draw_base": return `${who} draws a base`;
    case "quick_setup": return "Quick setup";
    case "position": return `${who} arranges soldiers`;
    case "ready": return `${who} is ready`;
    case "flick": return `${who} flicks: ${a.kind}`;
    case "send": return `${who} sends a convoy`;
    case "stop": return `${who} stops`;
    case "resign": return `${who} resigns`;
    case "time_out": return `${who} is out of time`;
    case "abandon": return `${who} left the page`;
    default: return `${who} moves`;
  }
}

export class ReplayScreen {
  /** Builds the replay of page `id`. */
  constructor(id) {
    this.id = id;
    this.name = "replay";
    this.entries = [];
    this.at = 0;
    this.playing = false;
    this.speed = 1;
    this.gone = false;
    this.canvas = h("canvas", { "aria-label": "the page, replayed", role: "img" });
    this.stage = h("div", { class: "stage" }, this.canvas);
    this.caption = h("div", { class: "status" }, h("div", { class: "who" }, "Replay"), h("div", { class: "detail" }, "…"));
    this.scrub = h("input", { type: "range", min: "0", max: "0", value: "0", step: "1", "aria-label": "move number" });
    this.scrub.addEventListener("input", () => {
      const n = Number(this.scrub.value);
      this.pause();
      this.seek(n);
    });
    this.playBtn = h("button", { class: "btn btn-main", type: "button", "data-action": "play", onclick: () => (this.playing ? this.pause() : this.play()) }, "Play");
    this.speedBtn = h("button", { class: "btn", type: "button", "data-action": "speed", onclick: () => this.nextSpeed() }, "1×");
    mount(h("div", { class: "game replay" },
      h("header", { class: "topbar" },
        h("button", { class: "btn btn-quiet", type: "button", "aria-label": "back to the page", onclick: () => go(pagePath(id)) }, "←"),
        this.caption),
      this.stage,
      h("footer", { class: "bottombar" },
        h("div", { class: "scrub" },
          h("button", { class: "btn btn-round", type: "button", "aria-label": "one move back", "data-action": "back", onclick: () => { this.pause(); this.seek(this.at - 1); } }, "‹"),
          this.scrub,
          h("button", { class: "btn btn-round", type: "button", "aria-label": "one move on", "data-action": "forward", onclick: () => { this.pause(); this.step(); } }, "›")),
        this.playBtn, this.speedBtn)));
    this.renderer = new Renderer(this.canvas);
    this.animator = new Animator(this.renderer);
    this.resizeObserver = new ResizeObserver(() => this.renderer.fitInside(this.stage));
    this.resizeObserver.observe(this.stage);
  }

  /** Loads the log and shows the finished page (scrub back from there). */
  async open() {
    try {
      this.log = await api.log(this.id);
    } catch (err) {
      const expired = err.code === "page_expired";
      this.caption.replaceChildren(h("div", { class: "who" }, expired ? "This page has expired." : "This page could not be replayed."),
        h("div", { class: "detail" }, expired ? CODE_WORDS.page_expired : err.message));
      return;
    }
    this.entries = this.log.entries || [];
    if (this.log.mode === "bot") {
      // The log does not name the bot's level; the page's snapshot does (the replay still works without).
      api.page(this.id).then((snap) => { this.bot = snap.bot; if (!this.gone) this.update(); }, () => {});
    }
    // Pages between two people: what was said shows at its moment (phrases.js, loaded for them only).
    if (this.log.mode === "link" || this.log.mode === "live") {
      this.phrasesLoading = import("./phrases.js").then(({ ReplayPhrases }) => {
        if (!this.gone) this.phrases = new ReplayPhrases(this.stage, this.id);
        return this.phrases && this.phrases.loading;
      }, () => {});
    }
    this.scrub.max = String(this.entries.length);
    this.renderer.fitInside(this.stage);
    this.seek(this.entries.length);
  }

  close() {
    this.gone = true;
    this.playing = false;
    this.resizeObserver.disconnect();
  }

  /** Shows the page after the first `n` moves, at once. */
  seek(n) {
    this.at = Math.max(0, Math.min(this.entries.length, n));
    this.model = blankModel(this.log.rules, this.id, this.log.mode);
    for (let i = 0; i < this.at; i++) for (const ev of this.entries[i].events || []) applyEvent(this.model, ev);
    this.model.version = this.at;
    this.renderer.overlay = {};
    this.renderer.setModel(this.model);
    this.showIntended(this.at - 1);
    this.update();
  }

  /** The intended aim of move i (a flick): from where the line starts, along the vector, at its reach. */
  showIntended(i) {
    const entry = this.entries[i];
    const a = entry && entry.action;
    if (!a || a.type !== "flick") {
      this.renderer.overlay.intended = null;
      return;
    }
    const ink = (entry.events || []).find((e) => e.type === "ink");
    const len = Math.hypot(a.vector[0], a.vector[1]) || 1;
    if (!ink) return;
    this.renderer.overlay.intended = [{
      from: { x: ink.points[0][0], y: ink.points[0][1] }, side: ink.side, reach: ink.reach,
      dir: { x: a.vector[0] / len, y: a.vector[1] / len },
    }];
    this.renderer.requestDraw();
  }

  /** Plays the next move with its animation. */
  async step() {
    if (this.at >= this.entries.length) return;
    const i = this.at;
    this.at += 1;
    this.update();
    this.showIntended(i);
    await this.animator.play(this.model, this.entries[i].events || []);
    this.model.version = this.at;
  }

  async play() {
    if (this.at >= this.entries.length) this.seek(0);
    this.playing = true;
    this.update();
    while (this.playing && !this.gone && this.at < this.entries.length) {
      await this.step();
      await new Promise((r) => setTimeout(r, PAUSE_MS / this.speed));
    }
    this.playing = false;
    this.update();
  }

  pause() {
    this.playing = false;
    this.animator.skip();
    this.update();
  }

  nextSpeed() {
    this.speed = SPEEDS[(SPEEDS.indexOf(this.speed) + 1) % SPEEDS.length];
    this.animator.speed = this.speed;
    this.update();
  }

  update() {
    this.scrub.value = String(this.at);
    // How far the scrubber's line is inked over (app.css).
    this.scrub.style.setProperty("--at", `${(100 * this.at) / Math.max(1, this.entries.length)}%`);
    this.playBtn.textContent = this.playing ? "Pause" : "Play";
    this.speedBtn.textContent = `${this.speed}×`;
    const m = this.model;
    const how = m && m.winner && ["time", "abandoned"].includes(m.endReason) ? `, ${endWords(m.endReason, otherSide(m.winner))}` : "";
    const end = m && m.winner ? ` · ${cap(m.winner)} wins${how}` : "";
    if (this.phrases && this.phrasesAt !== this.at) {
      this.phrasesAt = this.at;
      this.phrases.at(this.at);
    }
    this.caption.replaceChildren(
      h("div", { class: "who" }, `Replay · move ${this.at} of ${this.entries.length}`,
        this.bot && this.bot.strength ? h("span", { class: "bot-level" }, ` · Dawood-bot ${this.bot.strength}`) : null),
      h("div", { class: "detail" }, `${describe(this.entries[this.at - 1])}${end}`));
  }

  testState() {
    const m = this.model;
    return { screen: "replay", id: this.id, bot: this.bot || null, at: this.at, moves: this.entries.length, playing: this.playing,
      inkCount: m ? m.ink.length : 0, phase: m ? m.phase : null, soldiers: m ? [...m.soldiers.values()] : [] };
  }

  async idle() {
    if (this.opening) await this.opening;
    if (this.phrasesLoading) await this.phrasesLoading;
    await this.animator.idle();
    await this.renderer.settled();
  }
}
