// How to play: the rules in a few words, each with a small picture drawn in the page's own pens.

import { INK, drawPaper, handCircle, penCross, penDot, penStroke } from "./paper.js";
import { go } from "./nav.js";
import { h, mount } from "./ui.js";

const W = 600;
const H = 260;

function figure(label, draw) {
  const dpr = window.devicePixelRatio || 1;
  const c = h("canvas", { class: "howto-fig", role: "img", "aria-label": label, width: Math.round(360 * dpr), height: Math.round((360 * H * dpr) / W) });
  const ctx = c.getContext("2d");
  const k = c.width / W;
  ctx.scale(k, k);
  drawPaper(ctx, W, H, { margin: false });
  draw(ctx);
  return c;
}

function ring(ctx, x, y, r, side, men, seed) {
  handCircle(ctx, x, y, r, { color: INK[side], seed });
  men.forEach(([dx, dy], i) => penDot(ctx, x + dx, y + dy, 7, { color: INK[side], seed: seed * 31 + i }));
}

const EIGHT = [[-22, -22], [0, -28], [22, -22], [-28, 0], [28, 0], [-22, 22], [0, 28], [22, 22]];

const SECTIONS = [
  ["The page", "Two ballpoints, one sheet. Blue owns the bottom half and plays first; red owns the top. Nothing is ever rubbed out: the ink stays and the dead are crossed out.",
    (ctx) => {
      ring(ctx, 170, 175, 55, "blue", EIGHT, 2);
      ring(ctx, 430, 85, 55, "red", EIGHT, 5);
      ctx.setLineDash([8, 10]); ctx.strokeStyle = "rgba(0,0,0,0.25)"; ctx.beginPath(); ctx.moveTo(0, 130); ctx.lineTo(W, 130); ctx.stroke(); ctx.setLineDash([]);
    }],
  ["Setup", "Take turns drawing round bases in your half — press for the centre, drag out the circle. Each base is jotted full of soldiers. Then arrange your soldiers inside a ring or just outside its wall (a dot and a bit), and say Ready. Quick setup draws a fair set for both.",
    (ctx) => {
      ring(ctx, 200, 140, 70, "blue", EIGHT, 11);
      ctx.setLineDash([6, 8]); ctx.strokeStyle = "rgba(29,58,158,0.45)"; ctx.beginPath(); ctx.arc(200, 140, 90, 0, 7); ctx.stroke(); ctx.setLineDash([]);
      penDot(ctx, 283, 150, 7, { color: INK.blue, seed: 4 });
      handCircle(ctx, 430, 140, 60, { color: INK.blue, seed: 12, progress: 0.7 });
    }],
  ["The flick", "Your turn is one flick. Press a soldier, pull back away from the shot, let go. A short pull is short and sure; a long pull reaches corner to corner but goes wild. Slide back into the soldier to cancel.",
    (ctx) => {
      penDot(ctx, 150, 190, 7, { color: INK.blue, seed: 1 });
      ctx.strokeStyle = "rgba(60,60,60,0.4)"; ctx.lineWidth = 2; ctx.beginPath(); ctx.moveTo(150, 190); ctx.lineTo(95, 235); ctx.stroke();
      ctx.fillStyle = "rgba(29,58,158,0.08)"; ctx.beginPath(); ctx.moveTo(150, 190); ctx.arc(150, 190, 380, -0.84, -0.44); ctx.closePath(); ctx.fill();
      ctx.setLineDash([14, 10]); ctx.strokeStyle = INK.blue; ctx.beginPath(); ctx.moveTo(150, 190); ctx.lineTo(150 + 380 * Math.cos(-0.64), 190 + 380 * Math.sin(-0.64)); ctx.stroke(); ctx.setLineDash([]);
    }],
  ["Snipe", "The soldier stays put and shoots a line of ink. Every enemy it crosses is crossed out. Walls and men slow it down. Cross out two or more with one line — two with one bullet — and you flick again.",
    (ctx) => {
      penDot(ctx, 90, 210, 7, { color: INK.blue, seed: 3 });
      penStroke(ctx, [[90, 210], [520, 40]], { color: INK.blue, seed: 6 });
      for (const [x, y] of [[300, 127], [420, 80]]) {
        penDot(ctx, x, y, 7, { color: INK.red, seed: x });
        penCross(ctx, x, y, 10, { color: INK.blue, seed: y });
      }
    }],
  ["Lunge", "Or the soldier runs along his own line and crosses out whoever he runs through; crossing walls and men shakes his hand. Each kill earns a lunge again. Land inside a manned enemy base and he is shot; off the page, he is lost.",
    (ctx) => {
      penStroke(ctx, [[80, 200], [260, 140], [330, 105], [470, 70]], { color: INK.blue, seed: 8, width: 2.2 });
      penDot(ctx, 275, 133, 7, { color: INK.red, seed: 2 });
      penCross(ctx, 275, 133, 10, { color: INK.blue, seed: 5 });
      penDot(ctx, 470, 70, 7, { color: INK.blue, seed: 9 });
    }],
  ["Walls", "A wall is only as strong as the men inside it when the line crosses it: a full base stops almost anything, an empty ring is nearly paper. Thin a base before you storm it.",
    (ctx) => {
      ring(ctx, 400, 120, 62, "red", EIGHT, 21);
      penDot(ctx, 80, 170, 7, { color: INK.blue, seed: 7 });
      penStroke(ctx, [[80, 170], [352, 136]], { color: INK.blue, seed: 10 });
    }],
  ["Send", "Once a turn, free: up to five soldiers walk from one of your bases to another. They spend the enemy's turn on the road, in single file, holding no wall — catch a convoy and cross it out.",
    (ctx) => {
      ring(ctx, 120, 150, 55, "blue", EIGHT.slice(0, 5), 31);
      handCircle(ctx, 480, 120, 55, { color: INK.blue, seed: 33 });
      ctx.setLineDash([3, 9]); ctx.strokeStyle = "rgba(29,58,158,0.4)"; ctx.beginPath(); ctx.moveTo(120, 150); ctx.lineTo(480, 120); ctx.stroke(); ctx.setLineDash([]);
      for (let i = -1; i <= 1; i++) penDot(ctx, 300 + i * 21, 135 - i * 1.75, 7, { color: INK.blue, seed: 40 + i });
    }],
  ["Last stand and the end", "A side down to its last four soldiers flicks twice a turn, with a steadier hand. The moment a side has no soldier left, the other side wins. Every page stays in your exercise book, to replay flick by flick.",
    (ctx) => {
      for (const [x, y] of [[250, 140], [290, 150], [330, 135]]) penDot(ctx, x, y, 7, { color: INK.red, seed: x });
      for (const [x, y] of [[150, 90], [420, 200], [480, 80]]) { penDot(ctx, x, y, 7, { color: INK.red, seed: y }); penCross(ctx, x, y, 10, { color: INK.blue, seed: x }); }
    }],
];

/** Draws the how-to-play screen. */
export function showHowTo() {
  mount(h("div", { class: "sheet-page howto" },
    h("h1", {}, "How to play"),
    SECTIONS.map(([title, words, draw]) => h("section", {}, h("h2", {}, title), figure(title, draw), h("p", {}, words))),
    h("div", { class: "row", style: "margin-top:18px" },
      h("button", { class: "btn btn-main", type: "button", onclick: () => go("/") }, "Start a page"),
      h("button", { class: "btn", type: "button", onclick: () => history.back() }, "Back"))));
  return { name: "howto" };
}
