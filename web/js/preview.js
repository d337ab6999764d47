// The aim preview's numbers — the only formulas the browser keeps (RULES.md §4, the engine's
// dotfight.engine.flick): reach and launch spread of a flick at a given pull. Everything else about
// a turn (who may flick, steadiness, the chain's link, sends) comes from the server's turn options.
// tests/web/test_web_preview_formulas.py checks these against the engine for many rule sets.

/** Power of a pull of `pull` page units: `t = min(1, pull / pull_max)`. */
export function powerOf(rules, pull) {
  return Math.min(1, pull / rules.pull_max);
}

/** Reach of a flick of power t: `L = D × (reach_min_frac + (1 − reach_min_frac) t^reach_curve)`. */
export function reachOf(rules, t) {
  const diagonal = Math.hypot(rules.page_width, rules.page_height);
  return diagonal * (rules.reach_min_frac + (1 - rules.reach_min_frac) * t ** rules.reach_curve);
}

/**
 * Launch spread of power t before steadiness:
 * `σ = wildness_soft + (wildness − wildness_soft) t^wildness_curve`, at most `wildness` (legacy rules:
 * soft 0, curve = reach_curve).
 */
export function wildSpreadOf(rules, t) {
  const shape = t ** (rules.wildness_curve ?? rules.reach_curve);
  if (shape >= 1) return rules.wildness;
  const soft = rules.wildness_soft ?? 0;
  return Math.min(rules.wildness, soft + (rules.wildness - soft) * shape);
}

/** The extra spread of the k-th lunge of a chain, as drawn: `lunge_link_shake × k`. */
export function linkShakeOf(rules, k) {
  return (rules.lunge_link_shake || 0) * k;
}

/** Reach and spread of a flick at pull length `pull`; `steady` and `link` come from the turn options. */
export function flickPreview(rules, pull, { steady = 1, link = 0 } = {}) {
  const t = powerOf(rules, pull);
  return { power: t, reach: reachOf(rules, t), sigma: (wildSpreadOf(rules, t) + linkShakeOf(rules, link)) * steady };
}
