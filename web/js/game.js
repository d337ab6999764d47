// The page screen: wires the page's modules together. Its state is two plain objects — `model`, the
// page as the server last told it (model.js), and `ui`, what only this phone knows (below) — plus the
// small state each flow keeps for itself: the move on its way (sending.js), the hand-over on one
// phone (handover.js), the end sheet (pageend.js), the tab's "your move" mark (yourmove.js), the
// people's clocks, rematch and phrases (people.js; these three load when a page first needs them). What the
// bars and marks show is decided by controls.js (pure functions of model, turn options and ui) and
// drawn by bars.js; touches and keys go through input.js to aim.js; keeping in step with the server
// is sync.js's; what the turn allows is the server's (options.js).

import { Aim } from "./aim.js";
import { changesBars, choicesAfterTurn, eventToast, inkSeconds } from "./announce.js";
import { Animator } from "./animate.js";
import { api } from "./api.js";
import * as book from "./book.js";
import { barNodes, presenceNodes, replaceKeepingFocus, statusNodes } from "./bars.js";
import { barView, hintLine, overlayView, statusView } from "./controls.js";
import { HandOverFlow, lookBeforeAnswer, pageTurned } from "./handover.js";
import { Input } from "./input.js";
import { modelFromSnapshot } from "./model.js";
import { Narrator } from "./narrate.js";
import { go, pagePath } from "./nav.js";
import { penScratch } from "./notice.js";
import { turnOptions } from "./options.js";
import { pageElements, showCannotOpen } from "./pagedom.js";
import { Renderer } from "./render.js";
import { ScreenState } from "./screenstate.js";
import { MoveSender } from "./sending.js";
import { PageSync } from "./sync.js";
import { say, toast } from "./ui.js";
import { CODE_WORDS } from "./words.js";

/** Calls `fn` once the phone is idle after the next frame (a hidden tab draws none: a second at most). */
function afterPaint(fn) {
  requestAnimationFrame(() => ("requestIdleCallback" in window ? requestIdleCallback(fn, { timeout: 500 }) : setTimeout(fn, 0)));
  setTimeout(fn, 1000);
}

export class GameScreen {
  /** Builds the page screen for page `id`; `seat` is {token, side} from the link or the book. */
  constructor(id, seat) {
    this.id = id;
    this.entry = book.entry(id) || { id };
    this.model = null;
    // What only this phone knows. controls.js reads token, side, mode, kind (snipe or lunge),
    // sendFlow (a send being made), sending (a move on its way, in words), online and byKeys (the
    // player plays by keys: the hints name them); presence is who is on the page, aim the aim's
    // preview while a pull is on, barHint the bar's hint as drawn.
    this.ui = {
      token: seat.token || this.entry.token || null,
      side: seat.side || this.entry.side || null,
      mode: this.entry.mode || null,
      // A rematch: both players hold their seats already (issue 19), so there is no link to share.
      rematch: !!this.entry.rematchOf,
      kind: "snipe", sendFlow: null, sending: null, online: null,
      presence: null, aim: null, barHint: "", byKeys: false,
    };
    this.gone = false;
    this.narrator = new Narrator();
    this.sync = new PageSync(this, { id, token: this.ui.token });
    this.sender = new MoveSender(this);
    this.handOver = new HandOverFlow(this);
    // Loaded when first needed (endFlow, loadPeople, open): pageend.js, people.js, yourmove.js.
    this.end = null;
    this.ending = null;
    this.people = null;
    this.peopleLoading = null;
    this.yourMove = null;
    this.aim = new Aim(this);
    this.build();
  }

  get token() { return this.ui.token; }
  get side() { return this.ui.side; }
  get mode() { return this.ui.mode; }

  build() {
    this.el = pageElements({ menu: () => this.menu(), wholePage: () => { this.state.resetZoom(); this.zoomed(1); } });
    // What the canvas shows (written by the flows, the gestures and the animator) and its drawing.
    this.state = new ScreenState(this.el.canvas);
    this.renderer = new Renderer(this.el.canvas, this.state);
    this.animator = new Animator(this.state, this.renderer, (ev, model) => this.announce(ev, model));
    this.input = new Input(this.state, this.aim);
    this.resizeObserver = new ResizeObserver(() => this.renderer.fitInside(this.el.stage));
    this.resizeObserver.observe(this.el.stage);
  }

  /** Loads the page and starts following it. */
  async open() {
    let snap;
    try {
      snap = await api.page(this.id);
    } catch (err) {
      showCannotOpen(this.el, err);
      return;
    }
    this.ui.mode = snap.mode || this.ui.mode;
    if (this.mode === "local" && this.token) this.ui.side = "both";
    // A seat opened from a link comes without the size the page was made with: the snapshot's rules name it.
    const preset = this.entry.preset || (snap.rules && snap.rules.preset) || undefined;
    this.entry = book.remember({ id: this.id, mode: this.mode, token: this.token || undefined, side: this.side || undefined, preset });
    this.setSnapshot(snap);
    // The tab's "your move" mark says nothing on one phone (yourmove.js).
    if (this.mode !== "local") {
      import("./yourmove.js").then(({ YourMoveNotice }) => {
        this.yourMove = new YourMoveNotice();
        this.refresh();
      }, () => {});
    }
    // The screen that led here (the cover's Start, a link) is gone: the keyboard starts on the page.
    if (!document.activeElement || document.activeElement === document.body) this.el.canvas.focus({ preventScroll: true });
    this.handOver.start(this.model);
    this.turnPage();
    this.renderer.fitInside(this.el.stage);
    this.sync.start(this.mode !== "local" || !this.token);
    if (this.entry.owner && (this.mode === "link" || this.mode === "live") && this.model.version === 0 && !this.entry.shared) {
      book.remember({ id: this.id, shared: true });
      this.share();
    }
    this.refresh();
    this.endMaybe(true);
  }

  /** Leaves the screen: closes the socket and timers. */
  close() {
    this.gone = true;
    this.sync.stop();
    this.resizeObserver.disconnect();
    if (this.yourMove) this.yourMove.off();
    if (this.people) this.people.close();
  }

  setSnapshot(snap) {
    if (this.model && snap.version < this.sync.received) return;
    this.sync.received = snap.version;
    this.model = modelFromSnapshot(snap);
    this.state.setModel(this.model);
    // A seat of a link or live page, or a clock, is shown after the first paint; a finished page's rematch at once.
    const between = (this.mode === "link" || this.mode === "live") && !!this.token;
    const over = snap.phase === "over";
    this.toPeople(!!snap.clock || between || over, (p) => p.snapshot(snap), over);
    this.refresh();
  }

  /** The end flow (pageend.js), loaded at the page's end; resolves it, or null when it cannot come. */
  endFlow() {
    return (this.ending ||= import("./pageend.js").then(({ PageEnd }) => (this.end = new PageEnd(this)), () => null));
  }

  /** Opens the end sheet if the page has just ended (`opening`: the screen is opening it; pageend.js). */
  endMaybe(opening) {
    if (this.model && this.model.phase === "over") this.endFlow().then((end) => { if (end && !this.gone) end.maybe(opening); });
  }

  /** Loads the people's flow once (now if `soon`, else after the first paint); resolves it, or null (gone, or cannot come). */
  loadPeople(soon = true) {
    if (!this.peopleLoading) {
      const asked = new Promise((go) => { this.startPeople = go; });
      this.peopleLoading = asked.then(() => import("./people.js")).then(({ PeopleFlow }) => {
        this.people = this.gone ? null : new PeopleFlow(this);
        this.refresh();
        return this.people;
      }, () => null);
      afterPaint(this.startPeople);
    }
    if (soon) this.startPeople();
    return this.peopleLoading;
  }

  /** Passes `call` to the people's flow: now, once it has come if on its way or `needed`, else never (nothing to update). */
  toPeople(needed, call, soon = false) {
    if (this.people) call(this.people);
    else if (needed || this.peopleLoading) this.loadPeople(soon).then((p) => { if (p) call(p); });
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
    this.ui.presence = p;
    this.refresh();
  }

  online(status) {
    this.ui.online = status;
    this.refresh();
  }

  refused(err) {
    if (err.code === "page_expired") {
      showCannotOpen(this.el, err);
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

  /** The moment to look before a batch is drawn: against Dawood-bot, one after the player's own shot. */
  lookFirst(events) {
    return lookBeforeAnswer(this.mode, this.side, events);
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
    this.handOver.maybe();
    this.endMaybe(false);
  }

  learnSide(side) {
    this.ui.side = side;
    book.remember({ id: this.id, side });
    this.turnPage();
  }

  /** Turns the page to face the player holding the phone (see handover.js's pageTurned). */
  turnPage() {
    if (this.model) this.state.setFlip(pageTurned(this.model, this.ui, this.handOver.handedTo));
  }

  zoomed(zoom) {
    this.el.zoomBtn.hidden = zoom <= 1.001;
  }

  // The page menu and the share sheet (with push's offer) load when first opened: most visits open neither.
  menu() {
    return this.opensSheet(async () => {
      const sheet = await this.sheetModule("./pagemenu.js");
      if (sheet) sheet.pageMenu(this);
    });
  }

  share() {
    return this.opensSheet(async () => {
      const sheet = await this.sheetModule("./share.js");
      if (sheet) sheet.shareSheet(book.entry(this.id) || this.entry, { phase: this.model && this.model.phase });
    });
  }

  /** Opens a sheet whose module may still be on its way; idle() waits until it is open. */
  opensSheet(open) {
    const opening = open().finally(() => { if (this.sheetOpening === opening) this.sheetOpening = null; });
    this.sheetOpening = opening;
    return opening;
  }

  /** A sheet's module, or null (said) when it cannot come: the connection went after the page opened. */
  async sheetModule(path) {
    try {
      const module = await import(path);
      return this.gone ? null : module;
    } catch {
      toast("That needs the connection: it is not on this phone yet.", { kind: "refusal" });
      return null;
    }
  }

  // ---- what the page says and shows ----

  /** An event is being drawn (the animator's call): it is heard, toasted, and the bars follow it. */
  announce(ev, model) {
    this.narrator.hear(ev, model);
    if (ev.type === "ink") penScratch(inkSeconds(ev, this.animator.instant));
    if (ev.type === "turn") {
      // A new turn: half-made choices of the last one are gone.
      Object.assign(this.ui, choicesAfterTurn(this.ui));
      this.input.putKeyAimDown();
    }
    const note = eventToast(ev, this.ui);
    if (note) toast(note.text, { ms: note.ms });
    if (changesBars(ev)) this.refresh();
  }

  refresh() {
    if (!this.model || this.gone) return;
    const m = this.model;
    // What the bars are drawn from; drawing them changes nothing (the animator's busy is read, not kept).
    const ui = { ...this.ui, busy: this.animator.busy };
    const opts = this.options();
    const people = this.people;
    const status = statusView(m, opts, ui);
    this.el.status.replaceChildren(...statusNodes(people ? people.status(status) : status, ui.online === "offline"));
    this.el.presence.replaceChildren(...presenceNodes(ui.presence, this.mode));
    // No Rematch button before the people's flow says which (none, watching).
    const bar = barView(m, opts, ui);
    this.renderBar(people ? people.bar(bar) : { ...bar, items: bar.items.filter((it) => it.act !== "rematch") });
    if (people) people.refresh();
    if (this.yourMove) this.yourMove.update(m, this.ui);
    this.state.mark(overlayView(m, opts, ui));
  }

  renderHint() {
    this.el.hint.textContent = hintLine(this.ui.aim, this.aim.kindName(), this.ui.barHint, this.ui.byKeys);
    this.el.hint.classList.toggle("sending", !!this.ui.sending);
  }

  renderBar(view) {
    this.ui.barHint = view.hint;
    const send = (type) => () => this.sender.send({ type });
    const flow = (f) => { this.ui.sendFlow = f; this.refresh(); };
    const on = {
      numbers: () => this.endFlow().then((end) => end && end.open()), replay: () => go(pagePath(this.id, "replay")), rematch: () => this.loadPeople().then((p) => p && p.rematch()),
      share: () => this.share(), quick_setup: send("quick_setup"), ready: send("ready"), stop: send("stop"),
      send: () => flow({ step: "from" }),
      cancel_send: () => flow(null),
      count: (n) => flow({ ...this.ui.sendFlow, step: "to", count: n }),
      kind: (k) => { this.ui.kind = k; this.refresh(); },
    };
    // Redrawn buttons keep the keyboard's focus (the same button, else the page): issue 21, item 2.
    replaceKeepingFocus(this.el.actions, barNodes(view, on));
    // A notice with nothing else in the bar takes the buttons' row too (two lines fit in the bar).
    this.el.actions.hidden = !!view.sending;
    this.renderHint();
  }

  // ---- the browser tests' window ----

  /** What the browser tests may read. */
  testState() {
    const m = this.model;
    const v = this.state.view;
    return m ? {
      screen: "page", id: this.id, mode: this.mode, side: this.side, version: this.sync.received, phase: m.phase,
      sideToAct: m.sideToAct, turn: m.turn, options: this.options(), winner: m.winner, online: this.ui.online, presence: this.ui.presence,
      inkCount: m.ink.length, tool: this.aim.tool(), view: { flip: v.flip, zoom: v.zoom, panX: v.panX, panY: v.panY },
      waiting: { animating: this.animator.busy, looking: !!this.animator.looking, sending: !!this.sender.acting, syncing: !!this.sync.settling, handOver: !!this.handOver.handing },
      bases: [...m.bases.values()], soldiers: [...m.soldiers.values()], people: this.people && this.people.testState(),
    } : { screen: "page", id: this.id, loading: true };
  }

  /** Resolves when nothing is animating, sending or syncing (and a hand-over card, if due, shows). */
  async idle() {
    if (this.opening) await this.opening;
    for (let i = 0; i < 50; i++) {
      await this.animator.idle();
      if (this.sender.acting) await this.sender.acting;
      if (this.sync.settling) await this.sync.settling;
      if (this.handOver.pause) await this.handOver.pause;
      await this.renderer.settled();
      if (this.ending) await this.ending;
      const ending = this.end && this.end.opening;
      if (ending) await ending;
      if (this.sheetOpening) await this.sheetOpening;
      if (this.peopleLoading) {
        const people = await this.peopleLoading;
        if (people) await people.idle();
      }
      if (!(this.end && this.end.opening) && !this.sheetOpening && !this.animator.busy && !this.sender.acting && !this.sync.settling && !this.handOver.pause && !this.renderer.fading) return;
    }
  }
}
