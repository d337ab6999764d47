// The page screen: shows one page, lets the seat holder play it (setup, flicks, sends, stop,
// resign), keeps it in step with the server and with the other side, and ends with the numbers.

import { Animator } from "./animate.js";
import { ApiError, PageLink, api } from "./api.js";
import * as book from "./book.js";
import { baseAt, garrison, modelFromSnapshot, otherSide } from "./model.js";
import { go, pagePath } from "./nav.js";
import { Renderer } from "./render.js";
import { Input } from "./input.js";
import { shareSheet } from "./share.js";
import { sharePageButton } from "./sharepage.js";
import { pushToggle } from "./push.js";
import { startPage } from "./start.js";
import { endSheet } from "./ending.js";
import { pageNumbers } from "./stats.js";
import { cap, h, handOver, mount, sheet, toast } from "./ui.js";
import { CODE_WORDS, MODE_WORDS, PRESET_WORDS, REASON_WORDS } from "./words.js";

export class GameScreen {
  /** Builds the page screen for page `id`; `seat` is {token, side} from the link or the book. */
  constructor(id, seat) {
    this.id = id;
    this.entry = book.entry(id) || { id };
    this.token = seat.token || this.entry.token || null;
    this.side = seat.side || this.entry.side || null;
    this.mode = this.entry.mode || null;
    this.kind = "snipe";
    this.received = 0;
    this.model = null;
    this.sendFlow = null;
    this.acting = null;
    this.syncing = null;
    this.presence = null;
    this.online = null;
    this.handedTo = null;
    this.endShown = false;
    this.numbers = null;
    this.aimInfo = null;
    this.pollTimer = null;
    this.gone = false;
    this.build();
  }

  build() {
    this.statusEl = h("div", { class: "status" });
    this.presenceEl = h("div", { class: "presence" });
    this.top = h("header", { class: "topbar" },
      h("button", { class: "btn btn-quiet", type: "button", "aria-label": "exercise book", onclick: () => go("/#book") }, "☰"),
      this.statusEl, this.presenceEl,
      h("button", { class: "btn btn-quiet", type: "button", "aria-label": "page menu", onclick: () => this.menu() }, "⋯"));
    this.canvas = h("canvas", { "aria-label": "the page", role: "img" });
    this.stage = h("div", { class: "stage" }, this.canvas);
    this.bottom = h("footer", { class: "bottombar" });
    this.root = h("div", { class: "game" }, this.top, this.stage, this.bottom);
    mount(this.root);
    this.renderer = new Renderer(this.canvas);
    this.animator = new Animator(this.renderer, (ev) => this.announce(ev));
    this.input = new Input(this.renderer, this);
    this.resizeObserver = new ResizeObserver(() => this.renderer.fitInside(this.stage));
    this.resizeObserver.observe(this.stage);
  }

  /** Loads the page and starts following it. */
  async open() {
    let snap;
    try {
      snap = await api.page(this.id);
    } catch (err) {
      this.statusEl.replaceChildren(h("div", { class: "who" }, "This page could not be opened."),
        h("div", { class: "detail" }, err.message));
      return;
    }
    this.mode = snap.mode || this.mode;
    if (this.mode === "local" && this.token) this.side = "both";
    this.entry = book.remember({ id: this.id, mode: this.mode, token: this.token || undefined, side: this.side || undefined, preset: this.entry.preset });
    this.setSnapshot(snap);
    this.handedTo = this.model.sideToAct;
    this.renderer.fitInside(this.stage);
    if (this.mode !== "local" || !this.token) {
      this.follow();
    } else {
      // One phone, one player at a time: nobody else moves, so no socket; actions go over HTTP.
      this.link = new PageLink({ id: this.id, token: this.token, version: () => this.received, onEvents: () => {}, onSnapshot: () => {} });
    }
    if (this.entry.owner && (this.mode === "link" || this.mode === "live") && this.model.version === 0 && !this.entry.shared) {
      book.remember({ id: this.id, shared: true });
      this.share();
    }
    this.refresh();
    this.maybeEnd();
  }

  /** Follows the page live over its socket (with polling while the socket is down). */
  follow() {
    if (this.link) this.link.stop();
    this.link = new PageLink({
      id: this.id, token: this.token, version: () => this.received,
      onEvents: (v, evs, o) => this.receive(v, evs, o),
      onSnapshot: (s, seat) => {
        if (seat && this.token && this.side !== seat) this.learnSide(seat);
        this.whenIdle(() => this.setSnapshot(s));
      },
      wantSeat: () => !!this.token && this.side === null,
      onWake: () => this.poll(true),
      onPresence: (p) => { this.presence = p; this.refresh(); },
      onStatus: (s) => { this.online = s; this.refresh(); },
      onRefused: (err) => {
        if (err.code === "bad_token" && this.token) {
          // A seat link that no longer holds: keep following the page as a watcher.
          toast(CODE_WORDS.bad_token, { kind: "refusal", ms: 4000 });
          this.token = null;
          this.side = null;
          book.forget(this.id);
          this.entry = book.remember({ id: this.id, mode: this.mode, preset: this.entry.preset });
          this.follow();
          this.refresh();
        }
      },
    });
    this.link.start();
    clearInterval(this.pollTimer);
    this.pollTimer = setInterval(() => this.poll(), 2000);
  }

  /** Leaves the screen: closes the socket and timers. */
  close() {
    this.gone = true;
    clearInterval(this.pollTimer);
    this.resizeObserver.disconnect();
    if (this.link) this.link.stop();
  }

  setSnapshot(snap) {
    if (this.model && snap.version < this.received) return;
    this.received = snap.version;
    this.model = modelFromSnapshot(snap);
    this.renderer.setModel(this.model);
    this.refresh();
  }

  /** Runs fn once no animation is playing. */
  whenIdle(fn) {
    this.animator.idle().then(() => { if (!this.gone) fn(); });
  }

  /** Takes in the events of one or more actions, ending at `version`, and plays them. */
  receive(version, events, { resume = false } = {}) {
    if (this.gone || version <= this.received) return;
    if (!resume && version > this.received + 1) {
      this.catchUp();
      return;
    }
    this.received = version;
    this.sendFlow = null;
    const model = this.model;
    this.animator.play(model, events).then(() => {
      model.version = Math.max(model.version, version);
      this.sync();
    });
    this.refresh();
  }

  /** Fetches the actions this device missed from the log and plays them in order. */
  async catchUp() {
    try {
      const log = await api.log(this.id);
      for (const e of log.entries || []) if (e.version > this.received) this.receive(e.version, e.events, { resume: true });
    } catch {
      // Offline: the socket's reconnect or the next poll will try again.
    }
  }

  /** Without a live socket (or when the phone wakes), looks for the other side's moves. */
  async poll(evenIfOnline = false) {
    if (this.gone || (this.link && this.link.open && !evenIfOnline) || this.acting || this.animator.busy) return;
    if (!this.model || this.model.phase === "over") return;
    try {
      const snap = await api.page(this.id);
      if (snap.version > this.received) await this.catchUp();
    } catch {
      // Try again at the next tick.
    }
  }

  /** After a batch has played, takes the server's snapshot so turn, chain and setup are exact. */
  sync() {
    if (this.syncing) return this.syncing;
    this.syncing = (async () => {
      await this.animator.idle();
      try {
        const snap = await api.page(this.id);
        if (snap.version === this.received) this.setSnapshot(snap);
        else if (snap.version > this.received) await this.catchUp();
      } catch {
        // Keep the model from the events; the next batch will sync again.
      } finally {
        this.syncing = null;
      }
      this.refresh();
      // The hand-over card waits for a tap; syncing is done meanwhile.
      this.maybeHandOver();
      this.maybeEnd();
    })();
    return this.syncing;
  }

  async maybeHandOver() {
    const m = this.model;
    if (this.mode !== "local" || !m || m.phase === "over" || m.phase === "bases") {
      if (m) this.handedTo = m.sideToAct;
      return;
    }
    if (m.sideToAct && this.handedTo && m.sideToAct !== this.handedTo) {
      this.handedTo = m.sideToAct;
      const words = m.phase === "positioning" ? "Arrange your soldiers, then tap Ready." : "Flick one soldier: press, pull back, let go.";
      this.handing = handOver(m.sideToAct, words);
      await this.handing;
      this.handing = null;
      this.refresh();
    }
    this.handedTo = m.sideToAct;
  }

  // ---- what the player may touch (asked by Input) ----

  myMove() {
    const m = this.model;
    if (!m || !this.token || m.phase === "over" || !m.sideToAct) return false;
    if (this.mode === "bot" && this.side && this.side !== m.sideToAct) return false;
    return this.side === "both" || this.side === null || this.side === m.sideToAct;
  }

  tool() {
    if (this.animator.busy || this.acting || this.syncing || this.handing || !this.myMove()) return "tap";
    const phase = this.model.phase;
    if (phase === "bases") return "draw_base";
    if (phase === "positioning") return "arrange";
    if (phase === "play") return this.sendFlow && this.sendFlow.step !== "count" ? "pick_base" : "flick";
    return "tap";
  }

  drawSide() {
    return this.model.sideToAct;
  }

  soldiersToDrag() {
    const side = this.model.sideToAct;
    return [...this.model.soldiers.values()].filter((s) => s.side === side && s.alive);
  }

  flickable() {
    const m = this.model;
    const chain = m.turn && m.turn.chain;
    return [...m.soldiers.values()].filter((s) => s.side === m.sideToAct && s.alive && !s.on_road && (!chain || s.id === chain.soldier));
  }

  aimContext() {
    const m = this.model;
    const r = m.rules;
    const chain = m.turn && m.turn.chain;
    return {
      steady: m.turn && m.turn.last_stand ? r.last_stand_steady ?? 1 : 1,
      link: chain ? chain.link ?? 1 : 0,
    };
  }

  aiming(preview) {
    this.aimInfo = preview;
    this.refreshHint();
  }

  hint(text, at) {
    toast(text, { at });
  }

  tap(p, at) {
    if (this.animator.busy) {
      this.animator.skip();
      return;
    }
    const m = this.model;
    if (!m || m.phase === "over") return;
    if (!this.token) toast("You are watching this page.", { at });
    else if (!this.myMove() && m.sideToAct) toast(this.waitingWords(), { at });
    else if (m.phase === "play") toast("Press one of your soldiers, pull back, let go.", { at });
  }

  drawBase(b, at) {
    this.act({ type: "draw_base", x: b.x, y: b.y, r: b.r }, at);
  }

  moveSoldier(id, p, at) {
    // Show the move at once; the server's `positioned` event confirms it (or the refusal undoes it).
    const s = this.model.soldiers.get(id);
    const back = s ? { x: s.x, y: s.y } : null;
    if (s) { s.x = p.x; s.y = p.y; }
    this.renderer.requestDraw();
    this.act({ type: "position", soldiers: [{ id, x: p.x, y: p.y }] }, at).then((ok) => {
      if (!ok && s && back) { s.x = back.x; s.y = back.y; this.renderer.requestDraw(); }
    });
  }

  flick(id, vector, at) {
    const chain = this.model.turn && this.model.turn.chain;
    this.act({ type: "flick", soldier: id, kind: chain ? "lunge" : this.kind, vector }, at);
  }

  pickBase(p, at) {
    const f = this.sendFlow;
    const side = this.model.sideToAct;
    const b = baseAt(this.model, p.x, p.y, side);
    if (!b) {
      toast("Tap inside one of your bases.", { at });
      return;
    }
    if (f.step === "from") {
      const men = garrison(this.model, b);
      if (!men.length) {
        toast("That base has no soldier inside to send.", { at });
        return;
      }
      this.sendFlow = { step: "count", from: b.id, max: Math.min(this.model.rules.send_max ?? 5, men.length) };
    } else if (f.step === "to") {
      if (b.id === f.from) {
        toast("Pick another base to send them to.", { at });
        return;
      }
      const from = this.model.bases.get(f.from);
      const men = garrison(this.model, from)
        .sort((a, c) => Math.hypot(a.x - b.x, a.y - b.y) - Math.hypot(c.x - b.x, c.y - b.y))
        .slice(0, f.count);
      this.sendFlow = null;
      this.act({ type: "send", from: f.from, to: b.id, soldiers: men.map((s) => s.id) }, at);
    }
    this.refresh();
  }

  /** Sends one action; resolves true when the server took it. Refusals are said near the finger. */
  async act(action, at = null) {
    if (this.acting) return false;
    const sideBefore = this.model.sideToAct;
    this.acting = (async () => {
      this.refresh();
      try {
        const res = await this.link.act(action);
        if (this.side === null && sideBefore) this.learnSide(sideBefore);
        if (res.events) this.receive(res.version, res.events);
        return true;
      } catch (err) {
        this.refuse(err, at, sideBefore);
        return false;
      } finally {
        this.acting = null;
        this.refresh();
      }
    })();
    return this.acting;
  }

  learnSide(side) {
    this.side = side;
    book.remember({ id: this.id, side });
  }

  refuse(err, at, sideBefore) {
    if (!(err instanceof ApiError)) {
      toast("Something went wrong on this phone.", { at, kind: "refusal" });
      return;
    }
    if (err.code === "not_your_turn" && this.side === null && sideBefore) this.learnSide(otherSide(sideBefore));
    if (err.code === "stale_version" && err.body && err.body.snapshot) this.whenIdle(() => this.setSnapshot(err.body.snapshot));
    else if (err.code === "stale_version") this.catchUp();
    // The refusal always comes from the server; known reasons are said in the game's words, any
    // other in the server's own message.
    const words = REASON_WORDS[err.reason] || (err.code !== "illegal_action" && CODE_WORDS[err.code]) || err.message;
    toast(words, { at, kind: "refusal", ms: 3600 });
  }

  // ---- what the page says ----

  announce(ev) {
    // On one phone the switch goes back to snipe for the next player.
    if (ev.type === "turn" && this.mode === "local") this.kind = "snipe";
    if (ev.type === "bonus") {
      const words = ev.reason === "two_with_one_bullet" ? "Two with one bullet! One more flick." : `Lunge again! (${ev.credits})`;
      toast(words);
    } else if (ev.type === "turn" && ev.last_stand) {
      toast(`Last stand: ${cap(ev.side)} flicks twice, with a steadier hand.`);
    } else if (ev.type === "turn" && this.mode !== "local") {
      toast(this.side === ev.side ? "Your turn." : `${cap(ev.side)}'s turn.`, { ms: 1400 });
    } else if (ev.type === "game_over") {
      toast(`${cap(ev.winner)} wins!`);
    }
  }

  waitingWords() {
    const m = this.model;
    const who = m.sideToAct;
    if (this.mode === "bot" && who !== this.side) return "Dawood-bot is thinking…";
    const doing = m.phase === "bases" ? "drawing a base" : m.phase === "positioning" ? "arranging soldiers" : "flicking";
    return `${cap(who)} is ${doing}…`;
  }

  statusWords() {
    const m = this.model;
    if (!m) return ["", ""];
    const who = m.sideToAct;
    const r = m.rules;
    if (m.phase === "over") return [m.winner ? `${cap(m.winner)} wins` : "The page is finished", m.endReason === "resigned" ? "by resignation" : "every enemy soldier crossed out"];
    const you = this.side && this.side !== "both" && who === this.side;
    const name = you ? "Your turn" : cap(who);
    if (m.phase === "bases") {
      const drawn = (m.setup.bases_drawn || {})[who] ?? 0;
      return [`${name}: draw a base`, `${cap(who)} has ${drawn} of ${r.bases_per_side ?? "?"} bases`];
    }
    if (m.phase === "positioning") return [`${name}: arrange soldiers`, "drag them inside or just outside your rings, then Ready"];
    const t = m.turn || {};
    const left = t.flicks_left ?? 0;
    const detail = t.chain ? `lunge again: ${t.chain.credits} left` : `${left} flick${left === 1 ? "" : "s"} left${t.sent ? " · sent" : ""}`;
    return [`${name}${you ? "" : " to flick"}`, detail];
  }

  refresh() {
    if (!this.model || this.gone) return;
    const m = this.model;
    const [line1, line2] = this.statusWords();
    const t = m.turn || {};
    const who = m.phase === "over" ? m.winner : m.sideToAct;
    this.statusEl.replaceChildren(
      h("div", { class: `who ${who || ""}` }, line1,
        t.chain && m.phase === "play" ? h("span", { class: "badge" }, "lunge again") : null,
        t.last_stand && m.phase === "play" ? h("span", { class: "badge stand" }, "last stand") : null),
      h("div", { class: "detail" }, line2, this.online === "offline" ? h("span", { class: "net" }, " · reconnecting…") : null));
    this.presenceEl.replaceChildren(...this.presenceBits());
    this.overlays();
    this.bar();
    this.renderer.requestDraw();
  }

  presenceBits() {
    if (!this.presence || (this.mode !== "live" && this.mode !== "link")) return [];
    return ["blue", "red"].map((s) => h("span", {}, h("span", { class: `dot${this.presence[s] ? " on" : ""}`, title: `${s} ${this.presence[s] ? "here" : "away"}` }), cap(s)));
  }

  overlays() {
    const o = this.renderer.overlay;
    const m = this.model;
    const mine = this.myMove() && !this.animator.busy;
    o.half = mine && m.phase === "bases" ? m.sideToAct : null;
    o.zones = null;
    if (mine && m.phase === "positioning") {
      const margin = m.rules.outside_margin ?? 0;
      o.zones = [...m.bases.values()].filter((b) => b.side === m.sideToAct).map((b) => ({ x: b.x, y: b.y, r: b.r + margin }));
      o.zoneSide = m.sideToAct;
    }
    o.pickBases = null;
    o.pickedBase = null;
    if (this.sendFlow) {
      const own = [...m.bases.values()].filter((b) => b.side === m.sideToAct);
      o.pickBases = this.sendFlow.step === "from" ? own.filter((b) => garrison(m, b).length).map((b) => b.id) : own.filter((b) => b.id !== this.sendFlow.from).map((b) => b.id);
      o.pickedBase = this.sendFlow.from || null;
    }
  }

  refreshHint() {
    if (!this.hintEl) return;
    if (this.aimInfo) {
      const pct = Math.round(this.aimInfo.power * 100);
      this.hintEl.textContent = `${this.kind === "lunge" || (this.model.turn && this.model.turn.chain) ? "Lunge" : "Snipe"} · power ${pct}% · slide back to the soldier to cancel`;
    } else {
      this.hintEl.textContent = this.hintText || "";
    }
  }

  bar() {
    const m = this.model;
    const items = [];
    const b = (label, onclick, cls = "btn", extra = {}) => h("button", { class: cls, type: "button", onclick, ...extra }, label);
    this.hintText = "";
    if (m.phase === "over") {
      items.push(b("Numbers", () => this.endSheet(), "btn btn-main"), b("Replay", () => go(pagePath(this.id, "replay"))), b("Rematch", () => this.rematch()));
    } else if (!this.token) {
      this.hintText = `Watching · ${this.waitingWords()}`;
    } else if (!this.myMove()) {
      this.hintText = this.waitingWords();
      if (this.mode === "link" || this.mode === "live") items.push(b("Share link", () => this.share()));
    } else if (m.phase === "bases") {
      this.hintText = "Press where the centre goes, drag out the circle — in your half.";
      const any = Object.values(m.setup.bases_drawn || {}).some((n) => n > 0) || m.bases.size > 0;
      if (!any) items.push(b("Quick setup", () => this.act({ type: "quick_setup" }), "btn btn-main", { "data-action": "quick_setup" }));
    } else if (m.phase === "positioning") {
      this.hintText = "Drag soldiers to arrange them, then tap Ready.";
      items.push(b("Ready", () => this.act({ type: "ready" }), "btn btn-main", { "data-action": "ready" }));
    } else if (m.phase === "play") {
      const t = m.turn || {};
      if (this.sendFlow) {
        const f = this.sendFlow;
        if (f.step === "from") this.hintText = "Send: tap the base they leave from.";
        if (f.step === "count") {
          this.hintText = "How many soldiers walk?";
          for (let n = 1; n <= f.max; n++) items.push(b(String(n), () => { this.sendFlow = { ...f, step: "to", count: n }; this.refresh(); }, "btn btn-round", { "data-count": n }));
        }
        if (f.step === "to") this.hintText = `Send ${f.count}: tap the base they walk to.`;
        items.push(b("Cancel", () => { this.sendFlow = null; this.refresh(); }));
      } else {
        this.hintText = t.chain ? "Lunge again with the same soldier — or stop." : "Press a soldier, pull back, let go.";
        const sw = h("div", { class: "switch", role: "radiogroup", "aria-label": "snipe or lunge" },
          ["snipe", "lunge"].map((k) => h("button", {
            type: "button", role: "radio", class: (t.chain ? k === "lunge" : this.kind === k) ? "on" : "",
            "aria-checked": String(this.kind === k), disabled: !!t.chain, "data-kind": k,
            onclick: () => { this.kind = k; this.refresh(); },
          }, k === "snipe" ? "Snipe" : "Lunge")));
        items.push(sw);
        items.push(b("Send", () => { this.sendFlow = { step: "from" }; this.refresh(); }, "btn", { disabled: !!t.sent, "data-action": "send" }));
        if (t.flicked || t.chain) items.push(b(t.chain ? "Stop" : "End turn", () => this.act({ type: "stop" }), "btn", { "data-action": "stop" }));
      }
    }
    this.hintEl = h("div", { class: "hint" });
    this.bottom.replaceChildren(this.hintEl, ...items);
    this.refreshHint();
  }

  menu() {
    const m = this.model;
    const canResign = this.token && m && m.phase !== "over";
    const s = sheet("This page", h("div", { class: "stack" },
      h("p", {}, `${PRESET_WORDS[this.entry.preset] || "A page"} · ${MODE_WORDS[this.mode] || ""}`),
      this.mode === "link" || this.mode === "live" ? h("button", { class: "btn", type: "button", onclick: () => { s.close(); this.share(); } }, "Share links") : null,
      pushToggle({ id: this.id, token: this.token, mode: this.mode, phase: m && m.phase }),
      sharePageButton(this.id, () => s.close()),
      h("button", { class: "btn", type: "button", onclick: () => { s.close(); go(pagePath(this.id, "replay")); } }, "Replay this page"),
      h("button", { class: "btn", type: "button", onclick: () => { s.close(); go("/#how"); } }, "How to play"),
      h("button", { class: "btn", type: "button", onclick: () => { s.close(); go("/"); } }, "New page"),
      canResign ? h("button", { class: "btn btn-red", type: "button", onclick: () => { s.close(); this.confirmResign(); } }, "Resign") : null,
      h("button", { class: "btn btn-quiet", type: "button", onclick: () => s.close() }, "Close")));
  }

  confirmResign() {
    const s = sheet("Resign this page?", h("div", { class: "row" },
      h("button", { class: "btn btn-red", type: "button", onclick: () => { s.close(); this.act({ type: "resign" }); } }, "Resign"),
      h("button", { class: "btn", type: "button", onclick: () => s.close() }, "Keep playing")));
  }

  share() {
    const entry = book.entry(this.id) || this.entry;
    shareSheet(entry);
  }

  maybeEnd() {
    if (!this.model || this.model.phase !== "over" || this.endShown) return;
    this.endShown = true;
    this.endSheet();
  }

  async endSheet() {
    // A finished page's log never changes: its numbers are counted once (a failed fetch is tried
    // again the next time the sheet opens).
    if (!this.numbers) {
      try {
        this.numbers = pageNumbers((await api.log(this.id)).entries || []);
      } catch {
        this.numbers = null;
      }
    }
    if (this.gone) return;
    endSheet(this.model, this.numbers, {
      rematch: () => this.rematch(),
      replay: () => go(pagePath(this.id, "replay")),
      book: () => go("/#book"),
    });
  }

  async rematch() {
    const e = book.entry(this.id) || this.entry;
    const spec = e.spec || { preset: e.preset || "classic", mode: this.mode || "local" };
    try {
      await startPage(spec);
    } catch (err) {
      toast(err.message, { kind: "refusal" });
    }
  }

  /** What the browser tests may read. */
  testState() {
    const m = this.model;
    return m ? {
      screen: "page", id: this.id, mode: this.mode, side: this.side, version: this.received, phase: m.phase,
      sideToAct: m.sideToAct, turn: m.turn, winner: m.winner, online: this.online, presence: this.presence,
      inkCount: m.ink.length, tool: this.tool(),
      waiting: { animating: this.animator.busy, sending: !!this.acting, syncing: !!this.syncing, handOver: !!this.handing },
      bases: [...m.bases.values()], soldiers: [...m.soldiers.values()],
    } : { screen: "page", id: this.id, loading: true };
  }

  /** Resolves when nothing is animating, sending or syncing. */
  async idle() {
    if (this.opening) await this.opening;
    for (let i = 0; i < 50; i++) {
      await this.animator.idle();
      if (this.acting) await this.acting;
      if (this.syncing) await this.syncing;
      if (!this.animator.busy && !this.acting && !this.syncing) return;
    }
  }
}
