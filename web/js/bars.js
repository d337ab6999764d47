// Draws what controls.js says the bars show: the top bar's words and badges, who is here, and the
// bottom bar's buttons (including the snipe / lunge switch). No decisions are made here.

import { cap, h, radioStep, restoreFocus } from "./ui.js";

/**
 * The top bar's status: the line with its badges and the detail line — "reconnecting…" in its place
 * while the line is down (appended, it was cut off on a small phone).
 */
export function statusNodes(st, offline) {
  return [
    h("span", { class: `who ${st.who || ""}` }, st.line1, ...st.badges.map((b) => h("span", { class: b.cls }, b.text))),
    h("span", { class: "detail" }, offline ? h("span", { class: "net" }, "reconnecting…")
      : [...(st.detailBadges || []).map((b) => h("span", { class: `${b.cls} first` }, b.text)), st.line2]),
  ];
}

/** Who is on the page now (shared-link and real-time pages): a dot per side. */
export function presenceNodes(presence, mode) {
  if (!presence || (mode !== "live" && mode !== "link")) return [];
  return ["blue", "red"].map((s) => h("span", {},
    h("span", { class: `dot${presence[s] ? " on" : ""}`, title: `${s} ${presence[s] ? "here" : "away"}` }), cap(s)));
}

/**
 * The bottom bar's buttons for a bar view; `on` holds a handler per action name (`count(n)` and
 * `kind(k)` take the number or kind chosen).
 */
export function barNodes(view, on) {
  return view.items.map((it) => {
    if (it.type === "switch") {
      // A radio group: one tab stop (the kind chosen); the arrows switch it (WAI-ARIA radio group).
      const group = h("div", { class: "switch", role: "radiogroup", "aria-label": "snipe or lunge" },
        ["snipe", "lunge"].map((k) => h("button", {
          type: "button", role: "radio", class: it.chosen === k ? "on" : "", "aria-checked": String(it.chosen === k),
          tabindex: it.chosen === k ? "0" : "-1", disabled: it.locked, "data-kind": k, onclick: () => on.kind(k),
        }, cap(k))));
      group.addEventListener("keydown", (e) => {
        const next = radioStep([...group.querySelectorAll("button")], e);
        if (!next) return;
        e.preventDefault();
        next.focus();
        on.kind(next.dataset.kind);
      });
      return group;
    }
    const onclick = it.act.startsWith("count:") ? () => on.count(Number(it.act.slice(6))) : on[it.act];
    const data = Object.fromEntries(Object.entries(it.data || {}).map(([k, v]) => [`data-${k}`, v]));
    return h("button", { class: it.cls, type: "button", onclick, disabled: it.disabled, ...data }, it.label);
  });
}

/** What names a bar button across redraws: its action, kind or count, else its words. */
function buttonKey(el) {
  const d = el.dataset || {};
  return d.action || (d.kind && `kind:${d.kind}`) || (d.count && `count:${d.count}`) || el.textContent;
}

/**
 * Replaces `container`'s children by `nodes`; if the keyboard's focus was on one of them, it goes to
 * the new button of the same name, or (that button gone: Quick setup, Ready, a send's step) to the page.
 */
export function replaceKeepingFocus(container, nodes) {
  const focused = document.activeElement;
  const had = focused && focused !== container && container.contains(focused) ? buttonKey(focused) : null;
  container.replaceChildren(...nodes);
  if (had === null) return;
  const same = [...container.querySelectorAll("button")].find((b) => buttonKey(b) === had && !b.disabled);
  if (same) same.focus({ preventScroll: true });
  else restoreFocus(null);
}
