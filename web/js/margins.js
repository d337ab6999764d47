// The page's two margins (issue 19): strips laid over the stage's top and bottom edges, off the page
// wherever the phone leaves room above and below it (people.css), the player across above, you below,
// so that what shows there — clocks, phrases, an absence — never moves the page. Their styles load
// once, before the first margin is made: unstyled, a margin would stand in the page's flow.

import { h } from "./ui.js";

let styles = null;

/** Loads people.css once; resolves when it applies (or failed: the margins then show unstyled). */
export function peopleStyles() {
  if (!styles) {
    styles = new Promise((resolve) => {
      const link = h("link", { rel: "stylesheet", href: "/people.css" });
      link.addEventListener("load", resolve);
      link.addEventListener("error", resolve);
      document.head.append(link);
    });
  }
  return styles;
}

/** Makes the two margins in a stage: {top, bottom}. */
export function pageMargins(stage) {
  const margins = { top: h("div", { class: "margin margin-top" }), bottom: h("div", { class: "margin margin-bottom" }) };
  stage.append(margins.top, margins.bottom);
  return margins;
}

/** The margin of `side` on the page screen of `people` (people.js), made on first use: the near side's below. */
export function marginOf(people, side) {
  return margin(people, side === people.nearSide() ? "bottom" : "top");
}

/** The page screen's margin "top" or "bottom", made on first use. */
export function margin(people, where) {
  if (!people.margins) people.margins = pageMargins(people.screen.el.stage);
  return people.margins[where];
}
