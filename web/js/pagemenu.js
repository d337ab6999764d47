// The page menu (⋯): what the page is, share links, replay, the pen sound switch, how to play, a new
// page, and resigning (asked twice).

import * as book from "./book.js";
import { go, pagePath } from "./nav.js";
import { penScratch, penSoundOn, setPenSound } from "./notice.js";
import { pushToggle } from "./push.js";
import { sharePageButton } from "./sharepage.js";
import { h, sheet } from "./ui.js";

/** Opens the page menu for the page screen `screen`. */
export function pageMenu(screen) {
  const m = screen.model;
  const canResign = screen.token && m && m.phase !== "over";
  const soundWords = () => `Pen sound: ${penSoundOn() ? "on" : "off"}`;
  const soundBtn = h("button", { class: "btn", type: "button", "data-action": "pen-sound", "aria-pressed": String(penSoundOn()) }, soundWords());
  soundBtn.addEventListener("click", () => {
    setPenSound(!penSoundOn());
    soundBtn.textContent = soundWords();
    soundBtn.setAttribute("aria-pressed", String(penSoundOn()));
    if (penSoundOn()) penScratch(0.25);
  });
  const item = (label, fn, cls = "btn") => h("button", { class: cls, type: "button", onclick: () => { s.close(); fn(); } }, label);
  const shared = screen.mode === "link" || screen.mode === "live";
  const s = sheet("This page", h("div", { class: "stack" },
    h("p", {}, `${book.PRESET_WORDS[screen.entry.preset] || "A page"} · ${book.MODE_WORDS[screen.mode] || ""}`),
    shared ? item("Share links", () => screen.share()) : null,
    pushToggle({ id: screen.id, token: screen.token, mode: screen.mode, phase: m && m.phase }),
    sharePageButton(screen.id, () => s.close()),
    item("Replay this page", () => go(pagePath(screen.id, "replay"))),
    soundBtn,
    item("How to play", () => go("/#how")),
    item("New page", () => go("/")),
    canResign ? item("Resign", () => confirmResign(screen), "btn btn-red") : null,
    h("button", { class: "btn btn-quiet", type: "button", onclick: () => s.close() }, "Close")));
}

function confirmResign(screen) {
  const s = sheet("Resign this page?", h("div", { class: "row" },
    h("button", { class: "btn btn-red", type: "button", onclick: () => { s.close(); screen.sender.send({ type: "resign" }); } }, "Resign"),
    h("button", { class: "btn", type: "button", onclick: () => s.close() }, "Keep playing")));
}
