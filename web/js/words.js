// The game's own words for what the app shows: sizes, ways to play, and refusals said plainly.

export const MODE_WORDS = { local: "pass one phone", bot: "against Dawood-bot", link: "shared link", live: "real time" };
export const PRESET_WORDS = { classic: "Classic", quick: "Quick", dawood: "Dawood's own", custom: "Custom" };

/** "against Dawood-bot (normal)" for a bot page whose level is known, else the mode's words. */
export function modeWords(mode, bot) {
  const words = MODE_WORDS[mode] || "";
  return mode === "bot" && bot && bot.strength ? `${words} (${bot.strength})` : words;
}

// Plain words for refusals by their code (an illegal move is said by its reason, below).
export const CODE_WORDS = {
  not_your_turn: "It is not your turn.",
  game_over: "This page is finished.",
  bad_token: "This link cannot play this page — it can only watch.",
  stale_version: "The page moved on meanwhile — look again.",
  rate_limited: "Slow down a little.",
  not_found: "This page is not in the exercise book any more.",
  page_expired: "It was never played past setup, so it was cleared away. Start a new page from the cover.",
};

// A player's words for the engine's stable refusal reasons.
export const REASON_WORDS = {
  wrong_half: "A base goes in your own half of the page.",
  too_close_to_base: "Too close to another base.",
  radius_out_of_limits: "That circle is too small or too big for a base.",
  off_page: "That goes off the page.",
  outside_own_bases: "Soldiers stand inside your rings, or just outside a wall.",
  overlapping: "Two soldiers cannot stand on one spot.",
  not_in_base: "Only soldiers inside that base can be sent.",
  chain_pending: "Lunge again with the same soldier — or stop.",
  no_soldier_left: "That would leave you no soldier to flick.",
  quick_setup_impossible: "Quick setup is only for a blank page.",
  wrong_phase: "Not now — the page is at another step.",
  soldier_dead: "That soldier is crossed out.",
  already_sent: "You have already sent a convoy this turn.",
  on_road: "A soldier on the road cannot be flicked.",
};

// How a page ended, for the bar, the end sheet, the book, the replay and the live region: `loser` ended it.
export function endWords(reason, loser) {
  if (reason === "resigned") return `${loser} resigned`;
  if (reason === "time") return `${loser} ran out of time`;
  if (reason === "abandoned") return `${loser} left the page`;
  return `every ${loser} soldier is crossed out`;
}
