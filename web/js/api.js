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
async function request(method, path, { body, token } = {}) {
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

export const api = {
  /** Starts a new page. */
  createPage: (spec) => request("POST", "/api/pages", { body: spec }),
  /** The page's current snapshot. */
  page: (id) => request("GET", `/api/pages/${encodeURIComponent(id)}`),
  /** Every action of the page with its events. */
  log: (id) => request("GET", `/api/pages/${encodeURIComponent(id)}/log`),
  /** Short summaries of the named pages (unknown ones are skipped). */
  summaries: (ids) => (ids.length ? request("GET", `/api/pages?ids=${ids.map(encodeURIComponent).join(",")}`) : Promise.resolve([])),
  /** Applies one action over HTTP. */
  act: (id, token, action, version, moveId) =>
    request("POST", `/api/pages/${encodeURIComponent(id)}/actions`, { token, body: { action, version, move_id: moveId } }),
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * One open page's connection. Callbacks: onEvents(version, events, {resume}), onSnapshot(snapshot, seat),
 * onPresence({blue, red}), onStatus("online" | "offline" | "connecting"), onWake() (the phone woke with
 * the socket still open), wantSeat() (true: ask for the whole state, which names our seat),
 * onRefused(error) (the server refused the hello: bad seat token or unknown page).
 */
export class PageLink {
  constructor({ id, token, version, onEvents, onSnapshot, onPresence, onStatus, wantSeat, onWake, onRefused }) {
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
    this.ws = null;
    this.open = false;
    this.stopped = true; // until start(): a page on one phone never opens a socket
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
    ws.onclose = () => {
      if (ws !== this.ws) return;
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
        } else if (!data.move_id && (err.code === "bad_token" || err.code === "not_found")) {
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
   * move is refused. Lost connections are retried with the same move_id and the same version.
   */
  async act(action) {
    const moveId = newMoveId();
    const version = this.version();
    let lastError = null;
    for (let attempt = 0; attempt < 8; attempt++) {
      try {
        if (this.open && this.ws && this.ws.readyState === WebSocket.OPEN) {
          return await this.sendOverSocket(action, version, moveId);
        }
        return await api.act(this.id, this.token, action, version, moveId);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        if (err.code === "stale_version" && attempt > 0) {
          // Our first try may have gone through before the line broke: look for it in the log.
          const done = await this.findMove(moveId);
          if (done) return done;
        }
        if (!err.isConnection) throw err;
        lastError = err;
        await sleep(Math.min(4000, 300 * 2 ** attempt));
      }
    }
    throw lastError;
  }

  async findMove(moveId) {
    try {
      const log = await api.log(this.id);
      const entry = (log.entries || []).find((e) => e.move_id === moveId);
      return entry ? { version: entry.version, events: entry.events } : null;
    } catch {
      return null;
    }
  }
}
