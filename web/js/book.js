// The exercise book: the pages played on this device (and pages opened by link), kept in
// localStorage with their seat tokens, newest first, and the words its lists name a page's size and
// way of playing by. Tokens never leave the device except to the server in an Authorization header
// or a WebSocket hello.

// Here, not in words.js: the offline screen (in sw.js's shell) then needs no words.js, and the
// cover's first load, which installs the shell, carries none of the page's words.
export const MODE_WORDS = { local: "pass one phone", bot: "against Dawood-bot", link: "shared link", live: "real time" };
export const PRESET_WORDS = { classic: "Classic", quick: "Quick", dawood: "Dawood's own", custom: "Custom" };

/** "against Dawood-bot (normal)" for a bot page whose level is known, else the mode's words. */
export function modeWords(mode, bot) {
  const words = MODE_WORDS[mode] || "";
  return mode === "bot" && bot && bot.strength ? `${words} (${bot.strength})` : words;
}

const KEY = "dotfight.book.v1";
const MAX_PAGES = 200;

function load() {
  try {
    const pages = JSON.parse(localStorage.getItem(KEY) || "[]");
    return Array.isArray(pages) ? pages.filter((p) => p && typeof p.id === "string") : [];
  } catch {
    return [];
  }
}

function save(pages) {
  try {
    localStorage.setItem(KEY, JSON.stringify(pages.slice(0, MAX_PAGES)));
  } catch {
    // A full or blocked storage only costs the book its memory; the game goes on.
  }
}

/** Every page in the book, newest first. */
export function pages() {
  return load().sort((a, b) => (b.openedAt || 0) - (a.openedAt || 0));
}

/** The book's entry for a page id, or null. */
export function entry(id) {
  return load().find((p) => p.id === id) || null;
}

/**
 * Records (or updates) a page: `{id, mode, preset, rules?, bot?, token?, side?, links?}`. Known
 * fields are kept unless the update names them; the page moves to the front of the book.
 */
export function remember(update) {
  const all = load();
  const old = all.find((p) => p.id === update.id) || { createdAt: Date.now() };
  const merged = { ...old };
  for (const [k, v] of Object.entries(update)) if (v !== undefined && v !== null) merged[k] = v;
  merged.openedAt = Date.now();
  save([merged, ...all.filter((p) => p.id !== update.id)]);
  return merged;
}

/** Removes a page from this device's book (the page itself stays on the server). */
export function forget(id) {
  save(load().filter((p) => p.id !== id));
}
