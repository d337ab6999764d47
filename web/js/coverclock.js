// The clock a page between two people may take, chosen on the cover (issue 19): a live page's minutes
// each plus the seconds added per turn, a link page's time for each move; none unless picked
// (docs/WEB.md, "Between two people"). Loaded when the player first picks one of those ways to play.

import { choices, h } from "./ui.js";

export const CLOCKS = {
  live: { label: "Each side's clock", choices: [["none", "No clock"], ["180+2", "3 min + 2 s"], ["300+3", "5 min + 3 s"], ["600+5", "10 min + 5 s"]] },
  link: { label: "Time for each move", choices: [["none", "No limit"], ["86400", "1 day"], ["259200", "3 days"], ["604800", "7 days"]] },
};

/** The `clock` of POST /api/pages for a cover choice ("300+3", "86400", "none"), or null for none. */
export function clockOf(mode, choice) {
  if (!CLOCKS[mode] || !choice || choice === "none") return null;
  if (mode === "link") return { per_move_s: Number(choice) };
  const [initial, increment] = choice.split("+").map(Number);
  return { initial_s: initial, increment_s: increment };
}

/** The clock choices for `mode` ("live" / "link"); `onPick(clock)` hears the chosen `clock` (null: none). */
export function clockChoices(mode, onPick) {
  const { label, choices: options } = CLOCKS[mode];
  return h("div", { class: "more", dataset: { clock: mode } },
    h("div", { class: "label" }, label),
    choices(label, options, "none", (v) => onPick(clockOf(mode, v))));
}
