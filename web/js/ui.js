// The quiet things around the page: a tiny element builder, the top and bottom bars, sheets that
// slide up from the bottom, the hand-over card for passing one phone, and toasts that speak near
// the finger.

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

/** Says a sentence to a screen reader (a polite live region); the last sentence stays readable. */
export function say(text) {
  let region = document.getElementById("said");
  if (!region) {
    region = h("div", { id: "said", class: "visually-hidden", "aria-live": "polite", role: "log" });
    document.body.append(region);
  }
  region.replaceChildren(h("p", {}, text));
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
      return true;
    }
  }
  return false;
}

/** Opens a bottom sheet (a tap on the dimmed page around it, or Back, closes it); returns {close}. */
export function sheet(title, body, { className = "" } = {}) {
  const panel = h("section", { class: `sheet ${className}`, role: "dialog", "aria-label": title },
    h("h2", {}, title), body);
  const id = ++sheetCount;
  const entry = { id, scrim: null };
  const close = () => {
    const i = openSheets.indexOf(entry);
    if (i < 0) return;
    openSheets.splice(i, 1);
    entry.scrim.remove();
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
  return { close };
}

/** Shows the full-screen hand-over card ("Red's turn — pass the phone"); resolves on tap. */
export function handOver(side, detail = "") {
  return new Promise((resolve) => {
    const card = h("div", { class: `handover handover-${side}`, role: "dialog", "aria-label": `${cap(side)}'s turn` },
      h("p", { class: "handover-title" }, `${cap(side)}'s turn — pass the phone`),
      detail ? h("p", { class: "handover-detail" }, detail) : null,
      h("button", { class: "btn btn-big", type: "button" }, `I'm ${cap(side)} — show the page`));
    card.addEventListener("click", () => {
      card.remove();
      resolve();
    });
    clearToasts();
    document.body.append(card);
    card.querySelector("button").focus();
  });
}

/** Capitalises a side's name for a sentence. */
export function cap(word) {
  return word ? word[0].toUpperCase() + word.slice(1) : "";
}

/** A row of choice buttons; calls onPick(value) and marks the chosen one. */
export function choices(name, options, value, onPick) {
  const row = h("div", { class: "choices", role: "radiogroup", "aria-label": name });
  const render = (current) => {
    row.replaceChildren(...options.map(([v, label]) => h("button", {
      type: "button", class: `choice${v === current ? " chosen" : ""}`, role: "radio",
      "aria-checked": v === current ? "true" : "false", dataset: { value: v },
      onclick: () => { render(v); onPick(v); },
    }, label)));
  };
  render(value);
  return row;
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
