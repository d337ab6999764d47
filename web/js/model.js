// The render-only page model: what is on the paper right now. It is built from a server snapshot and
// moved forward by server events; it never decides whether anything is legal.

/** Returns the other side. */
export function otherSide(side) {
  return side === "blue" ? "red" : "blue";
}

/** Builds a page model from a PROTOCOL.md snapshot (deep-copied, so the snapshot stays untouched). */
export function modelFromSnapshot(snap) {
  const s = structuredClone(snap);
  const model = {
    id: s.id ?? null,
    mode: s.mode ?? null,
    version: s.version ?? 0,
    phase: s.phase ?? "bases",
    rules: s.rules ?? {},
    sideToAct: s.side_to_act ?? null,
    turn: s.turn ?? null,
    bases: new Map(),
    soldiers: new Map(),
    ink: s.ink ?? [],
    convoys: s.convoys ?? [],
    setup: s.setup ?? { bases_drawn: { blue: 0, red: 0 }, ready: { blue: false, red: false } },
    winner: s.winner ?? null,
    endReason: s.end_reason ?? null,
    seedSha256: s.seed_sha256 ?? null,
    bot: s.bot ?? null,
    // What setup's marks show (the server's: the halves' line, the rings to arrange in); null in a
    // replay, which draws none.
    setupMarks: s.setup_marks ?? null,
    // The server's turn options (C6): each events message's last event brings the page's after it; an
    // event on the way there (ink, a bonus, a send, a new turn) makes them stale until they come.
    options: s.options ?? null,
    optionsStale: false,
  };
  for (const b of s.bases ?? []) model.bases.set(b.id, b);
  for (const so of s.soldiers ?? []) model.soldiers.set(so.id, so);
  return model;
}

/** Builds the model of a blank page (before any base) for the given rules: the start of a replay. */
export function blankModel(rules, id = null, mode = null) {
  return modelFromSnapshot({
    id, mode, version: 0, phase: "bases", rules, side_to_act: "blue",
    turn: null, bases: [], soldiers: [], ink: [], convoys: [], winner: null,
    setup: { bases_drawn: { blue: 0, red: 0 }, ready: { blue: false, red: false } },
  });
}

/** Returns the base id whose ring holds the point (x, y), or null (walls count as inside). */
export function baseAt(model, x, y, side = null) {
  let best = null;
  let bestD = Infinity;
  for (const b of model.bases.values()) {
    if (side && b.side !== side) continue;
    const d = Math.hypot(x - b.x, y - b.y);
    if (d <= b.r && d < bestD) { best = b; bestD = d; }
  }
  return best;
}

/**
 * Applies one PROTOCOL.md event to the model, in place. Events the model does not know are ignored,
 * so a newer server can add some without breaking older pages.
 */
export function applyEvent(model, ev) {
  switch (ev.type) {
    case "base_drawn": {
      const b = { capacity: ev.soldiers.length, ...ev.base };
      model.bases.set(b.id, b);
      for (const p of ev.soldiers) {
        model.soldiers.set(p.id, { id: p.id, side: b.side, x: p.x, y: p.y, alive: true, on_road: false, cross: null });
      }
      const drawn = model.setup.bases_drawn ?? (model.setup.bases_drawn = { blue: 0, red: 0 });
      drawn[b.side] = (drawn[b.side] ?? 0) + 1;
      break;
    }
    case "positioned":
      for (const p of ev.soldiers) {
        const s = model.soldiers.get(p.id);
        if (s) { s.x = p.x; s.y = p.y; }
      }
      break;
    case "phase":
      model.phase = ev.phase;
      if (ev.phase === "over") model.sideToAct = null;
      break;
    case "ink":
      model.ink.push({ side: ev.side, kind: ev.kind, soldier: ev.soldier, points: ev.points, power: ev.power, reach: ev.reach });
      if (model.turn) { model.turn.flicked = true; model.turn.bonus = false; }
      model.optionsStale = true;
      break;
    case "crossed_out": {
      const s = model.soldiers.get(ev.soldier);
      if (!s) break;
      s.alive = false;
      // Whose cross it is, the server's word (the engine's Cross.side, sent with every crossed_out).
      s.cross = { by: ev.by, cause: ev.cause, side: ev.side ?? null };
      // A lunger shot where he landed or run off the page is crossed out where he stopped; a man hit
      // by a line stays where he stood (the event's point is where the line first touched him).
      if (ev.cause === "shot" || ev.cause === "off_page") { s.x = ev.at[0]; s.y = ev.at[1]; }
      break;
    }
    case "landed": {
      const s = model.soldiers.get(ev.soldier);
      if (s) { s.x = ev.at[0]; s.y = ev.at[1]; }
      break;
    }
    case "bonus":
      model.optionsStale = true;
      if (model.turn && ev.reason === "lunge_again") {
        // Credits 0: the chain was stopped (or ran out).
        const last = model.ink[model.ink.length - 1];
        const link = ((model.turn.chain && model.turn.chain.link) || 0) + 1;
        model.turn.chain = ev.credits > 0 ? { soldier: last ? last.soldier : null, credits: ev.credits, link } : null;
      }
      if (model.turn && ev.reason === "two_with_one_bullet") model.turn.bonus = true;
      break;
    case "send": {
      for (const p of ev.soldiers) {
        const s = model.soldiers.get(p.id);
        if (s) { s.x = p.x; s.y = p.y; s.on_road = true; }
      }
      const from = model.bases.get(ev.from);
      model.convoys.push({ side: from ? from.side : null, from: ev.from, to: ev.to, soldiers: ev.soldiers.map((p) => p.id) });
      if (model.turn) model.turn.sent = true;
      model.optionsStale = true;
      break;
    }
    case "arrived":
      for (const p of ev.soldiers) {
        const s = model.soldiers.get(p.id);
        if (s) { s.x = p.x; s.y = p.y; s.on_road = false; }
      }
      model.convoys = model.convoys.filter((c) => c.to !== ev.to);
      break;
    case "turn":
      model.sideToAct = ev.side;
      model.turn = {
        side: ev.side, number: ev.number ?? null, flicks_left: ev.flicks,
        chain: null, sent: false, last_stand: !!ev.last_stand, flicked: false, bonus: false,
      };
      model.optionsStale = true;
      break;
    case "game_over":
      // The page is over from this event on (its `phase: over` follows): nothing may read it as a
      // page in play whose side to act is gone ("to flick" with no name, issue 21 item 6).
      model.winner = ev.winner;
      model.endReason = ev.reason;
      model.sideToAct = null;
      model.phase = "over";
      break;
    default:
      break;
  }
  // The last event of a message from the server carries what the page after it allows.
  if ("options" in ev) {
    model.options = ev.options ?? null;
    model.optionsStale = false;
  }
}
