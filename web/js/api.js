// Talks to the server: HTTP for pages, logs and actions, and one WebSocket per open page for live
// events, with automatic reconnect (also when the phone wakes or comes back online) that resumes from
// the last version seen. Every action carries a move_id and is retried with the same one, so a move
// is never lost and never made twice.

/** An error answered by the server ({error: {code, message, reason?}}) or a lost connection. */
export class ApiError extends Error {
  constructor(code, message, { reason = null, status = 0, body = null } = {}) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.status = status;
    this.body = body;
  }

  /** True when the move may not have been judged (worth retrying with the same move_id). */
  get isConnection() {
    return this.code === "offline" || this.code === "timeout" || this.status >= 500;
  }
}

const OFFLINE_WORDS = "No connection — trying again.";
const LONG_SLEEP_MS = 15000;

/** Makes a fresh random move id. */
function newMoveId() {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Sends one HTTP request to the API and returns the parsed JSON, or throws ApiError. */
export async function request(method, path, { body, token } = {}) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store" });
  } catch {
    throw new ApiError("offline", OFFLINE_WORDS);
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) {
    const e = (data && data.error) || {};
    throw new ApiError(e.code || "server_error", e.message || "That did not work — try again.", {
      reason: e.reason || null, status: res.status, body: data,
    });
  }
  return data;
}

/**
 * Reads a page's log from version `from` on, following the server's paging (C4: each answer names
 * the `next` page's first version, null at the end); resolves with one log holding every entry read.
 * `stop(entries)` may end the reading early (e.g. once a move_id was found). An older server
 * answers the whole log at once, without `next`.
 */
async function readLog(id, { from = 1, stop = null } = {}) {
  let log = null;
  let next = from;
  while (next !== null) {
    const q = next > 1 ? `?from=${next}` : "";
    const part = await request("GET", `/api/pages/${encodeURIComponent(id)}/log${q}`);
    const entries = (part.entries || []).filter((e) => e.version >= from);
    if (log) log.entries.push(...entries);
    else log = { ...part, entries };
    if (part.seed) log.seed = part.seed;
    if (stop && stop(entries)) break;
    const last = entries.length ? entries[entries.length - 1].version : null;
    next = part.next;
    // An answer that does not move on (or an older server without paging) ends the reading.
    if (next === undefined || (next !== null && (last === null || next <= last))) break;
  }
  delete log.next;
  return log;
}

export const api = {
  /** Starts a new page. */
  createPage: (spec) => request("POST", "/api/pages", { body: spec }),
  /** The page's current snapshot. */
  page: (id) => request("GET", `/api/pages/${encodeURIComponent(id)}`),
  /** The page's actions with their events, from version `from` (default: all), read page by page. */
  log: (id, from = 1) => readLog(id, { from }),
  /** Short summaries of the named pages (unknown ones are skipped). */
  summaries: (ids) => (ids.length ? request("GET", `/api/pages?ids=${ids.map(encodeURIComponent).join(",")}`) : Promise.resolve([])),
  /** Applies one action over HTTP. */
  act: (id, token, action, version, moveId) =>
    request("POST", `/api/pages/${encodeURIComponent(id)}/actions`, { token, body: { action, version, move_id: moveId } }),
};

/**
 * One open page's connection. Callbacks: onEvents(version, events, {resume}), onSnapshot(snapshot, seat),
 * onPresence({blue, red}), onStatus("online" | "offline" | "connecting"), onWake() (the phone woke with
 * the socket still open), wantSeat() (true: ask for the whole state, which names our seat),
 * onRefused(error) (the server refused the hello: bad seat token or unknown page).
 */
export class PageLink {
  constructor({ id, token, version, onEvents, onSnapshot, onPresence, onStatus, wantSeat, onWake, onRefused, onMessage }) {
    this.id = id;
    this.token = token || null;
    this.version = version; // () => the last version the page model has received
    this.onEvents = onEvents;
    this.onSnapshot = onSnapshot;
    this.onPresence = onPresence || (() => {});
    this.onStatus = onStatus || (() => {});
    this.wantSeat = wantSeat || (() => false);
    this.onWake = onWake || (() => {});
    this.onRefused = onRefused || (() => {});
    this.onMessage = onMessage || (() => {}); // every message (issue 19's: people.js)
    this.ws = null;
    this.open = false;
    this.stopped = true; // until start(): a page on one phone never opens a socket
    this.closed = false; // after stop(): the page was left, moves are no longer retried
    this.failures = 0;
    this.waiting = new Map(); // move_id -> {resolve, reject, timer}
    this.retryTimer = null;
    this.afterHello = false;
    this.hiddenAt = null;
    this.wake = () => {
      if (document.visibilityState === "hidden") {
        this.hiddenAt = Date.now();
        return;
      }
      // After a long sleep an "open" socket may be dead without knowing it: start a fresh one.
      const slept = this.hiddenAt !== null && Date.now() - this.hiddenAt > LONG_SLEEP_MS;
      this.hiddenAt = null;
      if (slept && this.ws && this.ws.readyState === WebSocket.OPEN) {
        this.failures = 0;
        this.dropSocket();
        return;
      }
      this.reconnectNow();
    };
    window.addEventListener("online", this.wake);
    document.addEventListener("visibilitychange", this.wake);
  }

  /** Opens the socket (and keeps reopening it until stop()). */
  start() {
    this.stopped = false;
    this.connect();
  }

  /** Closes the socket for good and forgets the listeners. */
  stop() {
    this.stopped = true;
    this.closed = true;
    clearTimeout(this.retryTimer);
    window.removeEventListener("online", this.wake);
    document.removeEventListener("visibilitychange", this.wake);
    if (this.ws) this.ws.close(1000);
    this.ws = null;
  }

  /** Drops the socket as a network failure would (used by the browser tests). */
  dropSocket() {
    if (this.ws) this.ws.close(4000, "dropped");
  }

  reconnectNow() {
    if (this.stopped) return;
    if (this.ws && (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING)) {
      // A socket that survived a sleep may have missed something: let the page check over HTTP.
      this.onWake();
      return;
    }
    clearTimeout(this.retryTimer);
    this.failures = 0;
    this.connect();
  }

  connect() {
    if (this.stopped) return;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    let ws;
    try {
      ws = new WebSocket(`${scheme}://${location.host}/api/pages/${encodeURIComponent(this.id)}/ws`);
    } catch {
      this.scheduleRetry();
      return;
    }
    this.ws = ws;
    this.onStatus("connecting");
    ws.onopen = () => {
      if (ws !== this.ws) return;
      this.open = true;
      this.failures = 0;
      this.onStatus("online");
      this.hello();
    };
    ws.onmessage = (msg) => {
      if (ws !== this.ws) return;
      let data;
      try {
        data = JSON.parse(msg.data);
      } catch {
        return;
      }
      this.receive(data);
    };
    ws.onclose = (e) => {
      if (ws !== this.ws) return;
      if (e.code === 4410 && !this.stopped) {
        // The page expired (C5): reconnecting would only be refused again.
        this.stopped = true;
        this.onRefused(new ApiError("page_expired", "This page has expired."));
      }
      this.open = false;
      this.ws = null;
      for (const [, w] of this.waiting) w.reject(new ApiError("offline", OFFLINE_WORDS));
      this.waiting.clear();
      this.onStatus("offline");
      this.scheduleRetry();
    };
  }

  hello() {
    this.afterHello = true;
    // Version 0 asks for the whole state, which also names our seat: used when we do not know it yet.
    const msg = { type: "hello", version: this.wantSeat() ? 0 : this.version() };
    if (this.token) msg.token = this.token;
    this.ws.send(JSON.stringify(msg));
  }

  scheduleRetry() {
    if (this.stopped) return;
    clearTimeout(this.retryTimer);
    const delay = Math.min(8000, 400 * 2 ** this.failures);
    this.failures += 1;
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  receive(data) {
    this.onMessage(data);
    switch (data.type) {
      case "state":
        this.afterHello = false;
        this.onSnapshot(data.snapshot, data.seat || null);
        break;
      case "events": {
        const resume = this.afterHello;
        this.afterHello = false;
        this.onEvents(data.version, data.events || [], { resume });
        break;
      }
      case "ack": {
        const w = this.waiting.get(data.move_id);
        if (w) {
          this.waiting.delete(data.move_id);
          clearTimeout(w.timer);
          w.resolve({ version: data.version });
        }
        break;
      }
      case "error": {
        const w = data.move_id ? this.waiting.get(data.move_id) : null;
        const err = new ApiError(data.code || "server_error", data.message || "That was refused.", { reason: data.reason || null, body: data });
        if (w) {
          this.waiting.delete(data.move_id);
          clearTimeout(w.timer);
          w.reject(err);
        } else if (!data.move_id && (err.code === "bad_token" || err.code === "not_found" || err.code === "page_expired")) {
          // The hello itself was refused: reconnecting would only be refused again.
          this.stopped = true;
          this.onRefused(err);
        }
        break;
      }
      case "presence":
        this.onPresence({ blue: !!data.blue, red: !!data.red });
        break;
      default:
        break;
    }
  }

  sendOverSocket(action, version, moveId) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(moveId);
        reject(new ApiError("timeout", OFFLINE_WORDS));
        this.dropSocket();
      }, 6000);
      this.waiting.set(moveId, { resolve, reject, timer });
      this.ws.send(JSON.stringify({ type: "action", action, version, move_id: moveId }));
    });
  }

  /**
   * Makes one move. Resolves with {version, events?}; rejects with the server's ApiError when the
   * move is refused (or "gone" when the page was left meanwhile). A lost connection is retried with
   * the same move_id and the same version for as long as the page is open, with backoff (0.3 s
   * doubling to 8 s, at once when the phone comes back online); `onRetry(attempt, error)` hears each
   * failed try so the page can say so.
   */
  async act(action, { onRetry = () => {} } = {}) {
    const moveId = newMoveId();
    const version = this.version();
    for (let attempt = 0; ; attempt++) {
      if (this.closed) throw new ApiError("gone", "The page was left before the move was sent.");
      try {
        if (this.open && this.ws && this.ws.readyState === WebSocket.OPEN) {
          return await this.sendOverSocket(action, version, moveId);
        }
        return await api.act(this.id, this.token, action, version, moveId);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        if (err.code === "stale_version" && attempt > 0) {
          // Our first try may have gone through before the line broke: look for it in the log.
          const done = await this.findMove(moveId, version);
          if (done) return done;
        }
        if (!err.isConnection) throw err;
        onRetry(attempt + 1, err);
        await this.backoff(Math.min(8000, 300 * 2 ** attempt));
      }
    }
  }

  /** Waits `ms`, or less when the phone comes back online. */
  backoff(ms) {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        window.removeEventListener("online", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      window.addEventListener("online", done);
    });
  }

  /** Looks for a move in the log after `version` (the version it was sent at); null if absent. */
  async findMove(moveId, version) {
    try {
      const hit = (entries) => entries.find((e) => e.move_id === moveId);
      const log = await readLog(this.id, { from: version + 1, stop: hit });
      const entry = hit(log.entries || []);
      return entry ? { version: entry.version, events: entry.events } : null;
    } catch {
      return null;
    }
  }
}
