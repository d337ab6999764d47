// The page screen's elements: its heading, the top bar (exercise book, status, who is here, page
// menu), the stage (the canvas and the "Whole page" button), the bottom bar (hint and buttons) and the
// "turn your phone" hint shown in landscape; and what the bars say when a page cannot be opened.

import { ApiError } from "./api.js";
import { go } from "./nav.js";
import { h, mount } from "./ui.js";
import { CODE_WORDS } from "./words.js";

/** Builds and mounts the page screen; `on` holds menu() and wholePage(). Returns its live elements. */
export function pageElements(on) {
  const el = {
    status: h("span", { class: "status" }),
    presence: h("div", { class: "presence" }),
    canvas: h("canvas", {
      "aria-label": "the page — with the keyboard: n chooses a soldier, arrows aim, Enter flicks", role: "application", tabindex: "0",
    }),
    zoomBtn: h("button", { class: "btn zoom-reset", type: "button", hidden: true, onclick: on.wholePage }, "Whole page"),
    hint: h("div", { class: "hint" }),
    actions: h("div", { class: "actions" }),
  };
  el.stage = h("div", { class: "stage" }, el.canvas, el.zoomBtn);
  const top = h("header", { class: "topbar" },
    h("button", { class: "btn btn-quiet", type: "button", "aria-label": "exercise book", onclick: () => go("/#book") }, "☰"),
    el.status, el.presence,
    h("button", { class: "btn btn-quiet", type: "button", "aria-label": "page menu", onclick: on.menu }, "⋯"));
  const bottom = h("footer", { class: "bottombar" }, el.hint, el.actions);
  // The screen's heading, for screen readers and the page outline (the bars say the rest).
  mount(h("div", { class: "game" }, h("h1", { class: "visually-hidden" }, "Dotfight page"), top, el.stage, bottom,
    h("div", { class: "turn-hint", role: "note" }, h("p", {}, "Turn your phone upright — the page is tall."))));
  return el;
}

/**
 * Says that the page could not be opened (expired, or the reason), with a way to a new page: the
 * bars name it in a line each, the whole reason is a paragraph where the page would be (a one-line
 * bar cut it off on a small phone).
 */
export function showCannotOpen(el, err) {
  const expired = err instanceof ApiError && err.code === "page_expired";
  el.status.replaceChildren(
    h("span", { class: "who" }, expired ? "This page has expired." : "This page could not be opened."),
    h("span", { class: "detail" }, ""));
  el.hint.textContent = expired ? "It was never played past setup." : "";
  el.canvas.hidden = true;
  el.stage.querySelector(".cannot-open")?.remove();
  el.stage.append(h("p", { class: "cannot-open" }, expired ? CODE_WORDS.page_expired : err.message));
  el.actions.replaceChildren(h("button", { class: "btn btn-main", type: "button", onclick: () => go("/") }, "New page"));
}
