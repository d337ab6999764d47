// What the side to act may do now — the server's turn options (CONTRACTS C1/C6: the engine's
// `turn_options`, carried by every snapshot and by the last event of every events message). The
// browser never decides who may flick, how steady the hand is, where a convoy may go or who walks in
// it: it reads these, and while they are on their way it offers nothing.

/** The turn options for the model's current turn; null outside play, and while they are on their way. */
export function turnOptions(model) {
  if (!model || model.phase !== "play" || !model.sideToAct) return null;
  if (model.options && !model.optionsStale && model.options.side === model.sideToAct) return model.options;
  return null;
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

/** The ids of the men who may walk from base `baseId` now (C1's `send.men`). */
export function sendMen(options, baseId) {
  return (options && options.send && options.send.men && options.send.men[baseId]) || [];
}

/** Whether the turn allows one kind of flick only (a pending chain: lunge). */
export function kindLocked(options) {
  return !!(options && options.kinds && options.kinds.length === 1);
}

/** The kind a flick is made as: the only one the turn allows, else the one this phone chose. */
export function flickKind(options, chosen) {
  return kindLocked(options) ? options.kinds[0] : chosen;
}
