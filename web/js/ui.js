// The quiet things around the page: a tiny element builder, the top and bottom bars, sheets that
// slide up from the bottom, and toasts that speak near the finger.

import { stepBack } from "./nav.js";

/** Builds an element: h("button", {class: "x", onclick}, "text", child…). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    // Through the CSSOM, not the style attribute: the Content-Security-Policy allows no inline styles.
    else if (k === "style") el.style.cssText = String(v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// Whether the last input was a key (the page's hints then name keys); here, so the cover's Enter counts.
let lastByKeys = false;
addEventListener("keydown", (e) => { if (e.key !== "Shift" && !e.isComposing) lastByKeys = true; }, true);
addEventListener("pointerdown", () => { lastByKeys = false; }, true);

/** Tells whether the last input was a key (not a touch, a click, or nothing). */
export function lastInputWasKeys() {
  return lastByKeys;
}

/** Replaces the contents of the app's root with the given elements. */
export function mount(...els) {
  const root = document.getElementById("app");
  root.replaceChildren(...els);
  return root;
}

let toastTimer = null;

/**
 * Shows a short message. With `at` (client point) it appears just above the finger, else at the top.
 * `kind` is "info" or "refusal".
 */
export function toast(text, { at = null, kind = "info", ms = 2600 } = {}) {
  const box = document.getElementById("toasts");
  const el = h("div", { class: `toast toast-${kind}`, role: kind === "refusal" ? "alert" : "status" }, text);
  box.replaceChildren(el);
  if (at) {
    const w = Math.min(300, window.innerWidth - 16);
    el.style.width = `${w}px`;
    el.style.left = `${Math.max(8, Math.min(window.innerWidth - w - 8, at.x - w / 2))}px`;
    el.style.top = `${Math.max(8, at.y - 96)}px`;
    el.classList.add("toast-at");
  }
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => el.remove(), ms);
  return el;
}

/** Takes every toast off the screen (the hand-over card must not carry the last player's words). */
export function clearToasts() {
  clearTimeout(toastTimer);
  const box = document.getElementById("toasts");
  if (box) box.replaceChildren();
}

/** Says a sentence to a screen reader (the polite live region, in index.html from load). */
export function say(text) {
  let region = document.getElementById("said");
  if (!region) {
    region = h("div", { id: "said", class: "visually-hidden", "aria-live": "polite", role: "log" });
    document.body.append(region);
  }
  region.replaceChildren(h("p", {}, text));
}

/** Gives the focus back to `before` when what held it goes (a sheet, a card), else to the page. */
export function restoreFocus(before) {
  const to = before && before.isConnected && before !== document.body ? before : document.querySelector(".stage canvas");
  if (to && to.isConnected) to.focus({ preventScroll: true });
}

// Sheets take one history entry each, so the phone's Back closes the sheet instead of leaving the
// screen; a sheet closed by its own button drops its entry with a Back step of the app's own (nav.js).
let sheetCount = 0;
const openSheets = [];

/** Closes the top sheet for a Back press (its history entry is already gone); false if none. */
export function closeTopSheet() {
  while (openSheets.length) {
    const top = openSheets.pop();
    if (top.scrim.isConnected) {
      top.scrim.remove();
      restoreFocus(top.before);
      if (top.onClose) top.onClose();
      return true;
    }
  }
  return false;
}

/**
 * Opens a bottom sheet (a tap on the dimmed page around it, or Back, closes it); returns {close}.
 * `onClose` is called once the sheet has closed, however it was closed.
 */
export function sheet(title, body, { className = "", onClose = null } = {}) {
  const panel = h("section", { class: `sheet ${className}`, role: "dialog", "aria-label": title },
    h("h2", {}, title), body);
  const id = ++sheetCount;
  const entry = { id, scrim: null, before: document.activeElement, onClose };
  const close = () => {
    const i = openSheets.indexOf(entry);
    if (i < 0) return;
    openSheets.splice(i, 1);
    entry.scrim.remove();
    restoreFocus(entry.before);
    if (entry.onClose) entry.onClose();
    // A button that closes the sheet and goes elsewhere replaces the sheet's entry at once (nav.go);
    // a plain close takes the entry back off the history.
    setTimeout(() => {
      if (history.state && history.state.sheet === id) {
        stepBack();
      }
    }, 0);
  };
  entry.scrim = h("div", { class: "scrim", onclick: (e) => { if (e.target === entry.scrim) close(); } }, panel);
  document.body.append(entry.scrim);
  openSheets.push(entry);
  history.pushState({ sheet: id }, "", location.href);
  const first = panel.querySelector("button, [href], input, [tabindex]");
  (first || panel).focus({ preventScroll: true });
  return { close };
}

/** Capitalises a side's name for a sentence. */
export function cap(word) {
  return word ? word[0].toUpperCase() + word.slice(1) : "";
}

/** A row of choice buttons, a WAI-ARIA radio group (one tab stop, arrows, Home / End); calls onPick(value). */
export function choices(name, options, value, onPick) {
  const row = h("div", { class: "choices", role: "radiogroup", "aria-label": name });
  const buttons = options.map(([v, label]) => h("button", {
    type: "button", class: "choice", role: "radio", dataset: { value: v }, onclick: () => pick(v),
  }, label));
  const mark = (current) => {
    for (const b of buttons) {
      const on = b.dataset.value === current;
      b.classList.toggle("chosen", on);
      b.setAttribute("aria-checked", String(on));
      b.tabIndex = on ? 0 : -1;
    }
  };
  // The buttons stay (only their marks change), so the focus stays where the player is.
  const pick = (v) => { mark(v); onPick(v); };
  row.addEventListener("keydown", (e) => {
    const next = radioStep(buttons, e);
    if (!next) return;
    e.preventDefault();
    next.focus();
    pick(next.dataset.value);
  });
  mark(value);
  row.append(...buttons);
  return row;
}

/** The button of `buttons` a radio group's arrow (wrapping), Home or End moves to; null for other keys. */
export function radioStep(buttons, e) {
  const on = buttons.filter((b) => !b.disabled);
  const i = on.indexOf(document.activeElement);
  if (i < 0 || e.altKey || e.ctrlKey || e.metaKey) return null;
  const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
  if (step) return on[(i + step + on.length) % on.length];
  if (e.key === "Home") return on[0];
  if (e.key === "End") return on[on.length - 1];
  return null;
}

/** A minus/plus stepper for a whole number in [min, max]. */
export function stepper(label, value, min, max, onChange) {
  let v = value;
  const out = h("output", {}, String(v));
  const set = (n) => {
    v = Math.min(max, Math.max(min, n));
    out.textContent = String(v);
    onChange(v);
  };
  return h("div", { class: "stepper" },
    h("span", {}, label),
    h("button", { type: "button", class: "btn btn-round", "aria-label": `fewer ${label}`, onclick: () => set(v - 1) }, "−"),
    out,
    h("button", { type: "button", class: "btn btn-round", "aria-label": `more ${label}`, onclick: () => set(v + 1) }, "+"));
}
