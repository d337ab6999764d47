// The words of pages between two people (issue 19): how a page ended, and the phrases a player may
// say. Apart from words.js, which the cover loads: only the screens that say these load them.

// How a page ended, for the bar, the end sheet, the exercise book and the replay: `winner` won, the
// other side `loser` ended it (issue 19: on time, or by leaving a live page).
export function endWords(reason, loser) {
  if (reason === "resigned") return `${loser} resigned`;
  if (reason === "time") return `${loser} ran out of time`;
  if (reason === "abandoned") return `${loser} left the page`;
  return `every ${loser} soldier is crossed out`;
}

// The phrases a player may say to the other (PROTOCOL.md's fixed list; no free text to moderate).
export const PHRASE_WORDS = {
  hello: "Hello!", good_luck: "Good luck!", have_fun: "Have fun!", nice_shot: "Nice shot!",
  well_played: "Well played!", thanks: "Thanks!", good_game: "Good game!",
};
