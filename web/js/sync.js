// Keeping one page in step with the server: following it live over its socket (polling while the
// socket is down), catching up from the paged log when a message was missed, taking the server's
// snapshot after each batch has been drawn, and sending this phone's moves (retried with the same
// move_id while the page is open). The screen plays the events and shows the result; this module
// only decides when and what to fetch.

import { PageLink, api } from "./api.js";

const POLL_MS = 2000;

/** Whether a socket message makes one of the people's parts (people.js's message): it loads their flow. */
const peopleNews = (d) => d.type === "rematch" || d.type === "said" || (d.type === "presence" && !!d.claim_at) || (d.type === "events" && !!d.clock);

export class PageSync {
  /**
   * `screen` is the page screen: it has `model`, `animator`, `sender` (sending.js), `gone`, and hears setSnapshot(snap),
   * played(version), settled(), seatNamed(side), presence(p), online(status), refused(error), and says with
   * lookFirst(events) the moment to leave before a batch is drawn (the animator's `lookFirst`).
   */
  constructor(screen, { id, token }) {
    this.screen = screen;
    this.id = id;
    this.token = token;
    this.received = 0;
    this.link = null;
    this.pollTimer = null;
    this.settling = null;
  }

  /** Starts keeping in step: live (socket and polling) or, on one phone, HTTP moves only. */
  start(live) {
    if (live) this.follow();
    // One phone, one player at a time: nobody else moves, so no socket; actions go over HTTP.
    else this.link = new PageLink({ id: this.id, token: this.token, version: () => this.received, onEvents: () => {}, onSnapshot: () => {} });
  }

  /** Follows the page live over its socket (with polling while the socket is down). */
  follow() {
    const s = this.screen;
    if (this.link) this.link.stop();
    this.link = new PageLink({
      id: this.id, token: this.token, version: () => this.received,
      onEvents: (v, evs, o) => this.receive(v, evs, o),
      onSnapshot: (snap, seat) => {
        if (seat) s.seatNamed(seat);
        s.animator.idle().then(() => { if (!s.gone) s.setSnapshot(snap); });
      },
      wantSeat: () => s.wantsSeat(),
      onWake: () => this.poll(true),
      onPresence: (p) => s.presence(p),
      onStatus: (st) => s.online(st),
      onRefused: (err) => s.refused(err),
      onMessage: (data) => s.toPeople(peopleNews(data), (p) => p.message(data)),
    });
    this.link.start();
    clearInterval(this.pollTimer);
    this.pollTimer = setInterval(() => this.poll(), POLL_MS);
  }

  /** Follows again as someone else (a seat link that no longer holds: as a watcher). */
  rejoin(token) {
    this.token = token;
    this.follow();
  }

  /** Stops: closes the socket and timers; moves still waiting are given up. */
  stop() {
    clearInterval(this.pollTimer);
    if (this.link) this.link.stop();
  }

  /** Takes in the events of one or more actions, ending at `version`, and plays them. */
  receive(version, events, { resume = false } = {}) {
    const s = this.screen;
    if (s.gone || version <= this.received) return;
    if (!resume && version > this.received + 1) {
      this.catchUp();
      return;
    }
    this.received = version;
    const model = s.model;
    s.animator.play(model, events, { lookFirst: s.lookFirst(events) }).then(() => {
      model.version = Math.max(model.version, version);
      s.played(version);
      this.settle();
    });
    s.refresh();
  }

  /** Fetches the actions this device missed from the (paged) log and plays them in order. */
  async catchUp() {
    try {
      const log = await api.log(this.id, this.received + 1);
      for (const e of log.entries || []) if (e.version > this.received) this.receive(e.version, e.events, { resume: true });
    } catch {
      // Offline: the socket's reconnect or the next poll will try again.
    }
  }

  /** Without a live socket (or when the phone wakes), looks for the other side's moves. */
  async poll(evenIfOnline = false) {
    const s = this.screen;
    if (s.gone || (this.link && this.link.open && !evenIfOnline) || s.sender.acting || s.animator.busy) return;
    if (!s.model || s.model.phase === "over") return;
    try {
      const snap = await api.page(this.id);
      if (snap.version > this.received) await this.catchUp();
    } catch {
      // Try again at the next tick.
    }
  }

  /** After a batch has played, takes the server's snapshot so turn options and setup are exact. */
  settle() {
    if (this.settling) return this.settling;
    const s = this.screen;
    this.settling = (async () => {
      try {
        for (;;) {
          await s.animator.idle();
          const asked = this.received;
          const snap = await api.page(this.id);
          // A move that arrived while the answer was on its way is being drawn now, and the answer
          // may already hold it: taken now, it would show that move's outcome under its ink. Ask
          // again once it has been drawn (each round needs a newer move, so this ends).
          if (this.received !== asked || s.animator.busy) continue;
          if (snap.version === this.received) s.setSnapshot(snap);
          else if (snap.version > this.received) await this.catchUp();
          break;
        }
      } catch {
        // Keep the model from the events; the next batch will settle again.
      } finally {
        this.settling = null;
      }
      s.settled();
    })();
    return this.settling;
  }

  /** Sends one move (see PageLink.act); resolves with the server's answer or rejects with its refusal. */
  act(action, options) {
    // An answer over HTTP carries the page's clock after the move (issue 19): taken at once.
    return this.link.act(action, options).then((res) => {
      if (res && res.clock !== undefined) this.screen.toPeople(!!res.clock, (p) => p.takeClock(res.clock));
      return res;
    });
  }

  /** Drops the socket as a network failure would (the browser tests). */
  dropSocket() {
    if (this.link) this.link.dropSocket();
  }
}
