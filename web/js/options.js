// What the side to act may do now — the server's turn options (CONTRACTS C1/C6: the engine's
// `turn_options`, carried by every snapshot and by each `turn` event). The browser never decides
// who may flick, how steady the hand is, or where a convoy may go: it reads these.
//
// Until every server sends them, `legacyOptions` reads the same answers off the snapshot's own
// fields (turn, chain, sent) so that older servers keep working; it is the only place that does.

import { garrison } from "./model.js";

/** The turn options for the model's current turn, or null outside play. */
export function turnOptions(model) {
  if (!model || model.phase !== "play" || !model.sideToAct) return null;
  if (model.options && !model.optionsStale && model.options.side === model.sideToAct) return model.options;
  return legacyOptions(model);
}

/** The aim's context for the preview: the hand's steadiness and the chain's link (0 outside a chain). */
export function aimContext(options) {
  if (!options) return { steady: 1, link: 0 };
  return { steady: options.steadiness ?? 1, link: options.chain ? options.chain.link ?? 1 : 0 };
}

/** Whether a convoy may leave base `baseId` now (C1's `send.from`). */
export function sendFrom(options, baseId) {
  return !!(options && options.send && options.send.from && options.send.from[baseId]);
}

// An older server's snapshot has no options: the same shape, answered from its fields.
function legacyOptions(model) {
  const t = model.turn || {};
  const side = model.sideToAct;
  const chain = t.chain ? { link: 1, ...t.chain } : null;
  const flickable = [...model.soldiers.values()]
    .filter((s) => s.side === side && s.alive && !s.on_road && (!chain || s.id === chain.soldier))
    .map((s) => s.id);
  const own = [...model.bases.values()].filter((b) => b.side === side);
  const from = {};
  if (!t.sent && own.length > 1) {
    for (const b of own) if (garrison(model, b).length) from[b.id] = own.filter((o) => o.id !== b.id).map((o) => o.id);
  }
  return {
    side, flicks_left: t.flicks_left ?? 0, flickable, kinds: chain ? ["lunge"] : ["snipe", "lunge"], chain,
    steadiness: t.last_stand ? model.rules.last_stand_steady ?? 1 : 1, last_stand: !!t.last_stand,
    // As the engine answers it: more flicks left after a flick than the turn's own allotment.
    bonus: !!t.bonus || (!!t.flicked && (t.flicks_left ?? 0) >= (t.last_stand ? model.rules.last_stand_flicks ?? 2 : 1)),
    can_stop: !!chain || !!t.flicked, can_end_turn: !chain && !!t.flicked,
    send: Object.keys(from).length ? { max: model.rules.send_max, from } : null,
  };
}
