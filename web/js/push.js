// "Tell me when it's my move": Web Push for a seat of a shared-link or live page. The browser subscribes
// once (its push service, the server's VAPID key from GET /api/push/key); the server keeps that
// subscription for this page's seat (POST /api/pages/{id}/push with the seat token) and pushes when it
// becomes this seat's move. The choice is kept in the exercise book's entry (`push: true`).

import * as book from "./book.js";
import { h, sheet, toast } from "./ui.js";

const PUSH_MODES = ["link", "live"];

/** Tells whether this browser can be pushed to (service workers, push, notifications). */
export function pushSupported() {
  return "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
}

/** base64url → bytes (the applicationServerKey). */
function keyBytes(text) {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4);
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

/** The app's service worker: the one registered (web/sw.js imports the push handlers), else /sw.js,
 * else the push handlers alone. */
async function worker() {
  const known = await navigator.serviceWorker.getRegistration("/");
  if (known) return known;
  try {
    await navigator.serviceWorker.register("/sw.js");
  } catch {
    await navigator.serviceWorker.register("/push-sw.js");
  }
  return navigator.serviceWorker.ready;
}

async function call(method, path, token, body) {
  const res = await fetch(path, {
    method,
    headers: { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status}`);
  return res.json();
}

/** Subscribes this browser for page `id`'s seat; resolves true when the server keeps it. */
export async function turnOn(id, token) {
  const permission = await Notification.requestPermission();
  if (permission !== "granted") {
    toast("Notifications are blocked for this site — allow them in the browser's settings.", { kind: "refusal", ms: 4000 });
    return false;
  }
  try {
    const registration = await worker();
    let subscription = await registration.pushManager.getSubscription();
    if (!subscription) {
      const { key } = await call("GET", "/api/push/key");
      subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key) });
    }
    await call("POST", `/api/pages/${encodeURIComponent(id)}/push`, token, subscription.toJSON());
  } catch {
    toast("This browser could not be set up to tell you — try again later.", { kind: "refusal", ms: 4000 });
    return false;
  }
  book.remember({ id, push: true });
  toast("You will be told when it's your move.");
  return true;
}

/** Stops the pushes of page `id` to this browser (other pages keep theirs). */
export async function turnOff(id, token) {
  book.remember({ id, push: false });
  try {
    const registration = await navigator.serviceWorker.getRegistration("/");
    const subscription = registration && (await registration.pushManager.getSubscription());
    if (subscription) await call("DELETE", `/api/pages/${encodeURIComponent(id)}/push`, token, { endpoint: subscription.endpoint });
  } catch {
    // The server forgets a subscription by itself once the push service says it is gone.
  }
  toast("You will not be told about this page.");
}

/** Tells whether this browser is set to be told about page `id`. */
export function isOn(id) {
  const entry = book.entry(id);
  return !!(entry && entry.push) && Notification.permission === "granted";
}

/**
 * The "Tell me when it's my move" toggle for a seat of a link or live page, or null where it has no
 * use (a watcher, pass one phone, Dawood-bot, a page that is over) or this browser cannot be pushed to.
 */
export function pushToggle({ id, token, mode, phase }) {
  if (!token || !PUSH_MODES.includes(mode) || phase === "over" || !pushSupported()) return null;
  const button = h("button", { class: "btn", type: "button", "data-action": "push", role: "switch" });
  const show = (on) => {
    button.setAttribute("aria-checked", String(on));
    button.textContent = on ? "Telling you when it's your move ✓" : "Tell me when it's my move";
  };
  show(isOn(id));
  button.addEventListener("click", async () => {
    button.disabled = true;
    if (isOn(id)) {
      await turnOff(id, token);
      show(false);
    } else {
      show(await turnOn(id, token));
    }
    button.disabled = false;
  });
  return button;
}

/**
 * Right after a link is shared: offers "Tell me when it's my move" once a page (the book entry keeps
 * `pushOffered`), where the toggle would be offered at all and it is not on already. "Not now"
 * dismisses it; the page menu keeps the toggle.
 */
export function offerPush(entry, phase) {
  const toggle = pushToggle({ id: entry.id, token: entry.token, mode: entry.mode, phase });
  if (!toggle || entry.pushOffered || isOn(entry.id)) return null;
  book.remember({ id: entry.id, pushOffered: true });
  toggle.classList.add("btn-main");
  const later = h("button", { class: "btn btn-quiet", type: "button", "data-action": "push-not-now", onclick: () => s.close() }, "Not now");
  // Once switched on, the way out says so.
  new MutationObserver(() => { later.textContent = toggle.getAttribute("aria-checked") === "true" ? "Done" : "Not now"; })
    .observe(toggle, { attributes: true, attributeFilter: ["aria-checked"] });
  const s = sheet("While you wait", h("div", { class: "stack push-offer" },
    h("p", {}, "Your opponent plays when they like. This phone can tell you when it's your move."),
    toggle, later), { className: "push-offer-sheet" });
  return s;
}
