// The cover of the exercise book: start a new page (Classic by default, other sizes tucked away)
// and choose how to play it.

import { startPage } from "./start.js";
import { go } from "./nav.js";
import { INK, handCircle, penCross, penDot, penStroke } from "./paper.js";
import { choices, h, mount, stepper, toast } from "./ui.js";

// Dawood-bot's levels, lowest first, each with its line for the cover: one policy, deeper search and a
// steadier hand at each step (docs/BOT.md, "Strengths"; the ladder in docs/LAB.md measures the steps).
// Kept here, not in words.js: the cover then loads no words.js of its own (the first load's bytes).
export const BOT_LEVELS = [
  ["beginner", "Flicks what looks best at a glance, often misjudged, with a shaky hand: beat it by playing carefully."],
  ["easy", "Flicks what looks best at a glance, with an unsteady hand."],
  ["steady", "Weighs four flicks on the dice before it moves; its hand still wobbles."],
  ["normal", "Weighs four flicks on the dice, with a careful person's hand."],
  ["hard", "Weighs them on four times the dice and flicks exactly where it aims."],
];

const SIZES = [["quick", "Quick 3 × 8"], ["dawood", "Dawood's own 5 × 10"], ["custom", "Custom"]];
const MODES = [["local", "Pass one phone"], ["bot", "Against Dawood-bot"], ["link", "By a shared link"], ["live", "In real time"]];

/** Draws the cover screen. */
export function showCover() {
  const spec = { preset: "classic", mode: "local", strength: "normal", bases: 4, soldiers: 8 };
  const custom = h("div", { class: "stack", hidden: true },
    stepper("bases", spec.bases, 1, 8, (v) => { spec.bases = v; }),
    stepper("soldiers", spec.soldiers, 1, 20, (v) => { spec.soldiers = v; }));
  const sizes = h("div", { class: "more", hidden: true },
    choices("other sizes", [["classic", "Classic 4 × 8"], ...SIZES], spec.preset, (v) => { spec.preset = v; custom.hidden = v !== "custom"; }),
    custom);
  const levelLine = () => (BOT_LEVELS.find(([name]) => name === spec.strength) || ["", ""])[1];
  const level = h("p", { class: "level-line", "aria-live": "polite" }, levelLine());
  const strength = h("div", { class: "more", hidden: true },
    h("div", { class: "label" }, "Dawood-bot plays"),
    choices("Dawood-bot strength", BOT_LEVELS.map(([name]) => [name, name]), spec.strength, (v) => { spec.strength = v; level.textContent = levelLine(); }),
    level);
  // A page between two people may take a clock: the choices load with the first pick of one (coverclock.js).
  const clockBox = h("div");
  let clock = null;
  const showClock = (mode) => {
    clock = null;
    clockBox.replaceChildren();
    if (mode !== "live" && mode !== "link") return;
    import("./coverclock.js").then((m) => {
      if (spec.mode === mode) clockBox.replaceChildren(m.clockChoices(mode, (c) => { clock = c; }));
    }, () => {});
  };
  const startBtn = h("button", { class: "btn btn-main btn-big", type: "button", "data-action": "start" }, "Start a page");
  startBtn.addEventListener("click", async () => {
    const body = { preset: spec.preset, mode: spec.mode };
    if (spec.preset === "custom") body.rules = { bases_per_side: spec.bases, soldiers_per_base: spec.soldiers };
    if (spec.mode === "bot") body.bot = { strength: spec.strength, side: "red" };
    if (clock) body.clock = clock;
    startBtn.disabled = true;
    try {
      await startPage(body);
    } catch (err) {
      startBtn.disabled = false;
      toast(err.message, { kind: "refusal", ms: 4000 });
    }
  });
  const doodle = h("canvas", { class: "cover-doodle", width: 640, height: 300, "aria-hidden": "true" });
  drawDoodle(doodle);
  mount(h("div", { class: "sheet-page cover" },
    h("h1", {}, "Dot", h("span", { class: "red" }, "fight")),
    h("p", { class: "tagline" }, "The war game from the back pages of an exercise book."),
    doodle,
    h("div", { class: "field" },
      h("div", { class: "label" }, "New page"),
      h("div", { class: "row" },
        h("span", {}, "Classic — 4 bases of 8 soldiers"),
        h("button", {
          class: "btn btn-quiet link-like", type: "button", "data-action": "more-sizes", "aria-expanded": "false",
          onclick: (e) => { sizes.hidden = !sizes.hidden; e.currentTarget.setAttribute("aria-expanded", String(!sizes.hidden)); },
        }, "more sizes")),
      sizes),
    h("div", { class: "field" },
      h("div", { class: "label" }, "Playing with"),
      choices("playing with", MODES, spec.mode, (v) => {
        spec.mode = v;
        strength.hidden = v !== "bot";
        showClock(v);
      }),
      strength, clockBox),
    h("div", { class: "row" }, startBtn),
    h("div", { class: "row", style: "margin-top:18px" },
      h("button", { class: "btn", type: "button", onclick: () => go("/#book") }, "Exercise book"),
      h("button", { class: "btn", type: "button", onclick: () => go("/#how") }, "How to play"))));
  return { name: "cover" };
}

function drawDoodle(canvas) {
  const ctx = canvas.getContext("2d");
  const k = canvas.width / 640;
  ctx.scale(k, k);
  handCircle(ctx, 150, 190, 62, { color: INK.blue, seed: 3 });
  handCircle(ctx, 500, 100, 58, { color: INK.red, seed: 8 });
  const blues = [[130, 170], [165, 175], [150, 205], [120, 205], [180, 210]];
  const reds = [[480, 80], [515, 88], [495, 118], [530, 120]];
  for (const [x, y] of blues) penDot(ctx, x, y, 7, { color: INK.blue, seed: x * y });
  for (const [x, y] of reds) penDot(ctx, x, y, 7, { color: INK.red, seed: x + y });
  penStroke(ctx, [[165, 175], [560, 62]], { color: INK.blue, seed: 5 });
  penCross(ctx, 515, 88, 10, { color: INK.blue, seed: 9 });
}
