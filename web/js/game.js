// The page screen: shows one page and lets the seat holder play it (setup, flicks, sends, stop,
// resign), with the hand-over card on one phone and the end sheet. What the bars show comes from
// controls.js (pure functions of the model, the turn options and this phone's ui state); keeping in
// step with the server is sync.js's; what the turn allows is the server's (options.js).

import { Animator } from "./animate.js";
import { ApiError, api } from "./api.js";
import * as book from "./book.js";
import { barNodes, presenceNodes, statusNodes } from "./bars.js";
import { barView, isMyMove, statusView, waitingWords } from "./controls.js";
import { pageMenu } from "./pagemenu.js";
import { baseAt, modelFromSnapshot, otherSide } from "./model.js";
import { Narrator } from "./narrate.js";
import { buzz, markYourMove, penScratch } from "./notice.js";
import { aimContext, sendFrom, sendMen, turnOptions } from "./options.js";
import { go, pagePath } from "./nav.js";
import { flickPreview } from "./preview.js";
import { Renderer } from "./render.js";
import { Input } from "./input.js";
import { PageSync } from "./sync.js";
import { shareSheet } from "./share.js";
import { startPage } from "./start.js";
import { endSheet } from "./ending.js";
import { pageNumbers } from "./stats.js";
import { polylineLength } from "./paper.js";
import { cap, clearToasts, h, handOver, mount, say, toast } from "./ui.js";
import { CODE_WORDS, REASON_WORDS } from "./words.js";

// A moment to look at the result of a move before the hand-over card covers the page.
const HANDOVER_PAUSE_MS = 1100;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export class GameScreen {
  /** Builds the page screen for page `id`; `seat` is {token, side} from the link or the book. */
  constructor(id, seat) {
    this.id = id;
    this.entry = book.entry(id) || { id };
    // What only this phone knows (controls.js reads it).
    this.ui = {
      token: seat.token || this.entry.token || null,
      side: seat.side || this.entry.side || null,
      mode: this.entry.mode || null,
      kind: "snipe", sendFlow: null, sending: null, online: null,
    };
    this.model = null;
    this.acting = null;
    this.presenceNow = null;
    this.handedTo = null;
    this.handing = null;
    this.handPause = null;
    this.endShown = false;
    this.numbers = null;
    this.aimInfo = null;
    this.gone = false;
    this.yourMove = null;
    this.narrator = new Narrator();
    this.sync = new PageSync(this, { id, token: this.ui.token });
    this.build();
  }

  get token() { return this.ui.token; }
  get side() { return this.ui.side; }
  get mode() { return this.ui.mode; }

  build() {
    this.statusEl = h("span", { class: "status" });
    this.presenceEl = h("div", { class: "presence" });
    this.top = h("header", { class: "topbar" },
      h("button", { class: "btn btn-quiet", type: "button", "aria-label": "exercise book", onclick: () => go("/#book") }, "☰"),
      this.statusEl, this.presenceEl,
      h("button", { class: "btn btn-quiet", type: "button", "aria-label": "page menu", onclick: () => this.menu() }, "⋯"));
    this.canvas = h("canvas", {
      "aria-label": "the page — with the keyboard: n chooses a soldier, arrows aim, Enter flicks", role: "application", tabindex: "0",
    });
    this.zoomBtn = h("button", { class: "btn zoom-reset", type: "button", hidden: true, onclick: () => { this.renderer.resetZoom(); this.zoomed(1); } }, "Whole page");
    this.stage = h("div", { class: "stage" }, this.canvas, this.zoomBtn);
    this.hintEl = h("div", { class: "hint" });
    this.actionsEl = h("div", { class: "actions" });
    this.bottom = h("footer", { class: "bottombar" }, this.hintEl, this.actionsEl);
    // The screen's heading, for screen readers and the page outline (the bars say the rest).
    this.root = h("div", { class: "game" }, h("h1", { class: "visually-hidden" }, "Dotfight page"), this.top, this.stage, this.bottom,
      h("div", { class: "turn-hint", role: "note" }, h("p", {}, "Turn your phone upright — the page is tall.")));
    mount(this.root);
    this.renderer = new Renderer(this.canvas);
    this.animator = new Animator(this.renderer, (ev, model) => this.announce(ev, model));
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
      this.cannotOpen(err);
      return;
    }
    this.ui.mode = snap.mode || this.ui.mode;
    if (this.mode === "local" && this.token) this.ui.side = "both";
    this.entry = book.remember({ id: this.id, mode: this.mode, token: this.token || undefined, side: this.side || undefined, preset: this.entry.preset });
    this.setSnapshot(snap);
    this.handedTo = this.model.sideToAct;
    this.turnPage();
    this.renderer.fitInside(this.stage);
    this.sync.start(this.mode !== "local" || !this.token);
    if (this.entry.owner && (this.mode === "link" || this.mode === "live") && this.model.version === 0 && !this.entry.shared) {
      book.remember({ id: this.id, shared: true });
      this.share();
    }
    this.refresh();
    this.maybeEnd(true);
  }

  cannotOpen(err) {
    const expired = err instanceof ApiError && err.code === "page_expired";
    this.statusEl.replaceChildren(
      h("span", { class: "who" }, expired ? "This page has expired." : "This page could not be opened."),
      h("span", { class: "detail" }, expired ? CODE_WORDS.page_expired : err.message));
    this.hintEl.textContent = expired ? CODE_WORDS.page_expired : "";
    this.actionsEl.replaceChildren(h("button", { class: "btn btn-main", type: "button", onclick: () => go("/") }, "New page"));
  }

  /** Leaves the screen: closes the socket and timers. */
  close() {
    this.gone = true;
    this.sync.stop();
    this.resizeObserver.disconnect();
    markYourMove(false);
  }

  setSnapshot(snap) {
    if (this.model && snap.version < this.sync.received) return;
    this.sync.received = snap.version;
    this.model = modelFromSnapshot(snap);
    this.renderer.setModel(this.model);
    this.refresh();
  }

  /** The turn options now (C6 from the server; see options.js). */
  options() {
    return turnOptions(this.model);
  }

  // ---- what sync.js tells the screen ----

  wantsSeat() {
    return !!this.token && this.side === null;
  }

  seatNamed(seat) {
    if (this.token && this.side !== seat) this.learnSide(seat);
  }

  presence(p) {
    this.presenceNow = p;
    this.refresh();
  }

  online(status) {
    this.ui.online = status;
    this.refresh();
  }

  refused(err) {
    if (err.code === "page_expired") {
      this.cannotOpen(err);
      return;
    }
    if (err.code === "bad_token" && this.token) {
      // A seat link that no longer holds: keep following the page as a watcher.
      toast(CODE_WORDS.bad_token, { kind: "refusal", ms: 4000 });
      this.ui.token = null;
      this.ui.side = null;
      book.forget(this.id);
      this.entry = book.remember({ id: this.id, mode: this.mode, preset: this.entry.preset });
      this.sync.rejoin(null);
      this.turnPage();
      this.refresh();
    }
  }

  /** A batch has been drawn: its events are said in words. */
  played() {
    const words = this.narrator.flush();
    if (words) say(words);
  }

  /** The server's snapshot has been taken after a batch. */
  settled() {
    this.refresh();
    // The hand-over card waits for a tap; settling is done meanwhile.
    this.maybeHandOver();
    this.maybeEnd(false);
  }

  async maybeHandOver() {
    const m = this.model;
    if (this.mode !== "local" || !m || m.phase === "over" || m.phase === "bases") {
      if (m) this.handedTo = m.sideToAct;
      return;
    }
    if (m.sideToAct && this.handedTo && m.sideToAct !== this.handedTo) {
      const side = m.sideToAct;
      this.handedTo = side;
      const words = m.phase === "positioning" ? "Arrange your soldiers, then tap Ready." : "Flick one soldier: press, pull back, let go.";
      this.handing = (async () => {
        // A moment to look at what happened before the card covers it.
        this.handPause = sleep(HANDOVER_PAUSE_MS);
        await this.handPause;
        this.handPause = null;
        if (this.gone) return;
        clearToasts();
        const card = handOver(side, words);
        this.renderer.resetZoom();
        this.zoomed(1);
        // Behind the card the page turns to face the player taking the phone.
        this.turnPage();
        await card;
      })();
      this.refresh();
      await this.handing;
      this.handing = null;
      this.refresh();
      return;
    }
    this.handedTo = m.sideToAct;
  }

  /**
   * Turns the page half a turn for the red seat (link, live, or a bot page played as red); on one
   * phone it follows the side to act, turning with the hand-over. Watchers keep blue at the bottom.
   */
  turnPage() {
    const m = this.model;
    if (!m) return;
    let red = false;
    if (this.side === "red" && this.token) red = true;
    else if (this.side === "both" && m.phase !== "bases" && m.phase !== "over") red = this.handedTo === "red";
    this.renderer.setFlip(red);
  }

  // ---- what the player may touch (asked by Input) ----

  myMove() {
    return isMyMove(this.model, this.ui);
  }

  tool() {
    if (this.animator.busy || this.acting || this.sync.settling || this.handing || !this.myMove()) return "tap";
    const phase = this.model.phase;
    if (phase === "bases") return "draw_base";
    if (phase === "positioning") return "arrange";
    if (phase === "play") return this.ui.sendFlow && this.ui.sendFlow.step !== "count" ? "pick_base" : "flick";
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
    const o = this.options();
    if (!o) return [];
    return o.flickable.map((id) => this.model.soldiers.get(id)).filter(Boolean);
  }

  aimContext() {
    return aimContext(this.options());
  }

  kindName() {
    const o = this.options();
    return o && o.kinds && o.kinds.length === 1 ? cap(o.kinds[0]) : cap(this.ui.kind);
  }

  /** Snipe ↔ lunge (the keyboard's `k`); held on lunge while a chain is pending. */
  switchKind() {
    const o = this.options();
    if (o && o.kinds && o.kinds.length === 1) return;
    this.ui.kind = this.ui.kind === "snipe" ? "lunge" : "snipe";
    this.refresh();
  }

  waitingWords() {
    if (!this.token) return "You are watching this page.";
    return waitingWords(this.model, this.ui) || "Not now.";
  }

  say(text) {
    say(text);
  }

  zoomed(zoom) {
    this.zoomBtn.hidden = zoom <= 1.001;
  }

  aiming(preview) {
    this.aimInfo = preview;
    this.renderHint();
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
    else if (!this.myMove() && m.sideToAct) toast(waitingWords(m, this.ui), { at });
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
    const o = this.options();
    const kind = o && o.kinds && o.kinds.length === 1 ? o.kinds[0] : this.ui.kind;
    const s = this.model.soldiers.get(id);
    // The aim stays on the page, marked as on its way, until the ink comes back.
    if (s) {
      const len = Math.hypot(vector[0], vector[1]) || 1;
      const pv = flickPreview(this.model.rules, len, this.aimContext());
      this.renderer.overlay.sending = { from: { x: s.x, y: s.y }, dir: { x: vector[0] / len, y: vector[1] / len }, reach: pv.reach, side: s.side };
    }
    this.act({ type: "flick", soldier: id, kind, vector }, at, "flick");
  }

  pickBase(p, at) {
    const f = this.ui.sendFlow;
    const o = this.options();
    const side = this.model.sideToAct;
    const b = baseAt(this.model, p.x, p.y, side);
    if (!b) {
      toast("Tap inside one of your bases.", { at });
      return;
    }
    if (f.step === "from") {
      if (!sendFrom(o, b.id)) {
        toast("No convoy can leave that base now.", { at });
        return;
      }
      this.ui.sendFlow = { step: "count", from: b.id, max: Math.min(o.send.max, sendMen(o, b.id).length) };
    } else if (f.step === "to") {
      const allowed = (o && o.send && o.send.from[f.from]) || [];
      if (!allowed.includes(b.id)) {
        toast(b.id === f.from ? "Pick another base to send them to." : "They cannot walk there.", { at });
        return;
      }
      // Who may walk is the server's answer; which of them go is this phone's choice: the nearest.
      const men = sendMen(o, f.from)
        .map((id) => this.model.soldiers.get(id))
        .filter(Boolean)
        .sort((a, c) => Math.hypot(a.x - b.x, a.y - b.y) - Math.hypot(c.x - b.x, c.y - b.y))
        .slice(0, f.count);
      this.ui.sendFlow = null;
      this.act({ type: "send", from: f.from, to: b.id, soldiers: men.map((s) => s.id) }, at);
    }
    this.refresh();
  }

  /**
   * Sends one action; resolves true when the server took it. While it is on its way the bar says
   * so; a lost line is retried as long as the page is open; a refusal is said near the finger.
   */
  async act(action, at = null, what = null) {
    if (this.acting) return false;
    const sideBefore = this.model.sideToAct;
    const noun = what === "flick" ? "flick" : "move";
    this.ui.sending = what === "flick" ? "Sending your flick…" : null;
    this.acting = (async () => {
      this.refresh();
      try {
        const res = await this.sync.act(action, {
          onRetry: (attempt) => {
            this.ui.sending = `No connection — your ${noun} will be sent when the line is back (try ${attempt + 1})…`;
            this.refresh();
          },
        });
        if (this.side === null && sideBefore) this.learnSide(sideBefore);
        if (res.events) this.sync.receive(res.version, res.events);
        return true;
      } catch (err) {
        if (!(err instanceof ApiError && err.code === "gone")) this.refuse(err, at, sideBefore, what === "flick");
        return false;
      } finally {
        this.ui.sending = null;
        this.renderer.overlay.sending = null;
        this.acting = null;
        this.refresh();
      }
    })();
    return this.acting;
  }

  learnSide(side) {
    this.ui.side = side;
    book.remember({ id: this.id, side });
    this.turnPage();
  }

  refuse(err, at, sideBefore, wasFlick) {
    const not = wasFlick ? "Your flick was not made: " : "";
    if (!(err instanceof ApiError)) {
      toast(`${not}something went wrong on this phone.`, { at, kind: "refusal" });
      return;
    }
    if (err.code === "not_your_turn" && this.side === null && sideBefore) this.learnSide(otherSide(sideBefore));
    if (err.code === "stale_version" && err.body && err.body.snapshot) this.animator.idle().then(() => { if (!this.gone) this.setSnapshot(err.body.snapshot); });
    else if (err.code === "stale_version") this.sync.catchUp();
    // The refusal always comes from the server; known reasons are said in the game's words, any
    // other in the server's own message.
    const words = REASON_WORDS[err.reason] || (err.code !== "illegal_action" && CODE_WORDS[err.code]) || err.message;
    toast(`${not}${wasFlick ? words.charAt(0).toLowerCase() + words.slice(1) : words}`, { at, kind: "refusal", ms: 4200 });
    if (wasFlick) say(`Your flick was not made: ${words}`);
  }

  // ---- what the page says ----

  announce(ev, model) {
    this.narrator.hear(ev, model);
    if (ev.type === "ink") {
      const speed = 1000 * (0.55 + 0.45 * Math.min(1, Math.max(0, ev.power ?? 1)));
      penScratch(this.animator.instant ? 0.08 : polylineLength(ev.points) / speed);
    }
    if (ev.type === "turn") {
      // A new turn: half-made choices of the last one are gone.
      this.ui.sendFlow = null;
      this.input.putKeyAimDown();
      if (this.mode === "local") this.ui.kind = "snipe";
    }
    if (ev.type === "bonus") {
      const words = ev.reason === "two_with_one_bullet" ? "Two with one bullet! One more flick."
        : ev.credits > 0 ? `Lunge again! (${ev.credits})` : "Chain stopped.";
      toast(words);
    } else if (ev.type === "turn" && ev.last_stand) {
      toast(`Last stand: ${cap(ev.side)} flicks twice, with a steadier hand.`);
    } else if (ev.type === "turn" && this.mode !== "local") {
      toast(this.side === ev.side ? "Your turn." : `${cap(ev.side)}'s turn.`, { ms: 1400 });
    } else if (ev.type === "game_over") {
      toast(`${cap(ev.winner)} wins!`);
    }
    // The bars follow the events as they are drawn.
    if (["turn", "phase", "game_over", "bonus", "send"].includes(ev.type)) this.refresh();
  }

  refresh() {
    if (!this.model || this.gone) return;
    const m = this.model;
    // What the bars are drawn from; drawing them changes nothing (the animator's busy is read, not kept).
    const ui = { ...this.ui, busy: this.animator.busy };
    const opts = this.options();
    const st = statusView(m, opts, ui);
    this.statusEl.replaceChildren(...statusNodes(st, ui.online === "offline"));
    this.presenceEl.replaceChildren(...presenceNodes(this.presenceNow, this.mode));
    this.overlays(opts);
    this.renderBar(barView(m, opts, ui));
    this.noticeYourMove();
    this.renderer.requestDraw();
  }

  /** In shared-link and real-time pages the tab and the phone say when it becomes your move. */
  noticeYourMove() {
    if (this.mode !== "link" && this.mode !== "live" && this.mode !== "bot") return;
    const mine = this.myMove() && this.side !== "both";
    if (mine === this.yourMove) return;
    const before = this.yourMove;
    this.yourMove = mine;
    markYourMove(mine);
    if (mine && before === false) buzz();
  }

  overlays(opts) {
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
    const f = this.ui.sendFlow;
    if (f && opts && opts.send) {
      o.pickBases = f.step === "from" ? Object.keys(opts.send.from) : opts.send.from[f.from] || [];
      o.pickedBase = f.from || null;
    }
  }

  renderHint() {
    if (this.aimInfo) {
      const pct = Math.round(this.aimInfo.power * 100);
      this.hintEl.textContent = `${this.kindName()} · power ${pct}% · slide back to cancel`;
    } else {
      this.hintEl.textContent = this.hintText || "";
    }
    this.hintEl.classList.toggle("sending", !!this.ui.sending);
  }

  renderBar(view) {
    this.hintText = view.hint;
    const on = {
      numbers: () => this.endSheet(), replay: () => go(pagePath(this.id, "replay")), rematch: () => this.rematch(),
      share: () => this.share(), quick_setup: () => this.act({ type: "quick_setup" }), ready: () => this.act({ type: "ready" }),
      send: () => { this.ui.sendFlow = { step: "from" }; this.refresh(); },
      stop: () => this.act({ type: "stop" }),
      cancel_send: () => { this.ui.sendFlow = null; this.refresh(); },
      count: (n) => { this.ui.sendFlow = { ...this.ui.sendFlow, step: "to", count: n }; this.refresh(); },
      kind: (k) => { this.ui.kind = k; this.refresh(); },
    };
    this.actionsEl.replaceChildren(...barNodes(view, on));
    this.renderHint();
  }

  menu() {
    pageMenu(this);
  }

  share() {
    const entry = book.entry(this.id) || this.entry;
    shareSheet(entry);
  }

  /** Opens the end sheet once: when the page ends on this phone, not on every later visit. */
  maybeEnd(opening) {
    if (!this.model || this.model.phase !== "over" || this.endShown) return;
    this.endShown = true;
    const seen = (book.entry(this.id) || {}).endSeen;
    book.remember({ id: this.id, endSeen: true });
    if (opening && seen) return;
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
    // The player hears at once that a page is on its way, and plainly when none was started.
    toast("Starting a new page…", { ms: 30000 });
    try {
      await startPage(spec);
      clearToasts();
    } catch (err) {
      const why = err.code === "offline" ? "there is no connection to the server" : err.message;
      toast(`No new page was started: ${why}`, { kind: "refusal", ms: 8000 });
    }
  }

  /** What the browser tests may read. */
  testState() {
    const m = this.model;
    const v = this.renderer.view;
    return m ? {
      screen: "page", id: this.id, mode: this.mode, side: this.side, version: this.sync.received, phase: m.phase,
      sideToAct: m.sideToAct, turn: m.turn, options: this.options(), winner: m.winner, online: this.ui.online, presence: this.presenceNow,
      inkCount: m.ink.length, tool: this.tool(), view: { flip: v.flip, zoom: v.zoom, panX: v.panX, panY: v.panY },
      waiting: { animating: this.animator.busy, sending: !!this.acting, syncing: !!this.sync.settling, handOver: !!this.handing },
      bases: [...m.bases.values()], soldiers: [...m.soldiers.values()],
    } : { screen: "page", id: this.id, loading: true };
  }

  /** Resolves when nothing is animating, sending or syncing (and a hand-over card, if due, shows). */
  async idle() {
    if (this.opening) await this.opening;
    for (let i = 0; i < 50; i++) {
      await this.animator.idle();
      if (this.acting) await this.acting;
      if (this.sync.settling) await this.sync.settling;
      if (this.handPause) await this.handPause;
      if (!this.animator.busy && !this.acting && !this.sync.settling && !this.handPause) return;
    }
  }
}
