// The page's numbers for the end sheet, counted from the log's events (the server's record):
// flicks, men crossed out by snipe and by lunge, two-with-one-bullet shots and the longest chain.

/** Counts each side's numbers from log entries [{side, action, events}]. */
export function pageNumbers(entries) {
  const blank = () => ({ flicks: 0, snipeKills: 0, lungeKills: 0, twoWithOne: 0, longestChain: 0 });
  const n = { blue: blank(), red: blank() };
  let inkSide = null;
  let chainSoldier = null;
  let chainOpen = false;
  let chainLength = 0;
  for (const entry of entries) {
    for (const ev of entry.events || []) {
      if (ev.type === "ink") {
        inkSide = ev.side;
        if (!n[inkSide]) continue;
        n[inkSide].flicks += 1;
        if (ev.kind === "lunge") {
          // A lunge continues a chain only when "lunge again" was earned by this same soldier.
          chainLength = chainOpen && chainSoldier === ev.soldier ? chainLength + 1 : 1;
          chainSoldier = ev.soldier;
          n[inkSide].longestChain = Math.max(n[inkSide].longestChain, chainLength);
        } else {
          chainLength = 0;
          chainSoldier = null;
        }
        chainOpen = false;
      } else if (ev.type === "crossed_out" && inkSide && n[inkSide]) {
        if (ev.cause === "snipe") n[inkSide].snipeKills += 1;
        if (ev.cause === "lunge") n[inkSide].lungeKills += 1;
      } else if (ev.type === "bonus") {
        if (ev.reason === "lunge_again") chainOpen = true;
        if (ev.reason === "two_with_one_bullet" && inkSide && n[inkSide]) n[inkSide].twoWithOne += 1;
      } else if (ev.type === "turn") {
        chainOpen = false;
        inkSide = null;
      }
    }
  }
  return n;
}
