// Sharing a page: the opponent's seat link (carrying its side) and the watch link, by the phone's
// share sheet where there is one, or copied.

import { otherSide } from "./model.js";
import { pageUrl } from "./nav.js";
import { offerPush } from "./push.js";
import { cap, h, sheet, toast } from "./ui.js";

/**
 * Opens the share sheet: the opponent's seat link (with its side) and the watch link. Once a link has
 * been shared or copied from it, closing it offers "Tell me when it's my move" (once a page; push.js).
 */
export function shareSheet(entry, { phase = null } = {}) {
  let used = false;
  const use = (fn) => () => { used = true; fn(); };
  const mine = entry.side === "red" ? "red" : "blue";
  const theirs = otherSide(mine);
  const links = entry.links || {};
  const seatLink = links[theirs] ? `${links[theirs]}&side=${theirs}` : null;
  const watchLink = links.watch || pageUrl(entry.id);
  const row = (label, url) => h("div", { class: "stack" },
    h("div", { class: "label" }, label),
    h("div", { class: "link" }, url),
    h("div", { class: "row" },
      navigator.share ? h("button", { class: "btn btn-main", type: "button", onclick: use(() => navigator.share({ title: "Dotfight", text: label, url }).catch(() => {})) }, "Share") : null,
      h("button", { class: "btn", type: "button", onclick: use(() => copy(url)) }, "Copy")));
  const s = sheet("Share this page", h("div", { class: "stack" },
    seatLink ? row(`${cap(theirs)}'s link — send it to your opponent`, seatLink) : null,
    row("Watch link — anyone can follow, no one can play", watchLink),
    h("button", { class: "btn", type: "button", onclick: () => s.close() }, "Done")),
  { onClose: () => { if (used) offerPush(entry, phase); } });
  return s;
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    toast("Link copied.");
  } catch {
    toast("Could not copy — press and hold the link to copy it.");
  }
}
