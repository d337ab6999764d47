// Sending this phone's moves, one at a time: while a move is on its way the bar says so (and, with
// the line down, that it will be sent when the line is back); a refusal is said near the finger in
// the game's words. The retries themselves are api.js's (same move_id while the page is open).

import { ApiError } from "./api.js";
import { otherSide } from "./model.js";
import { say, toast } from "./ui.js";
import { CODE_WORDS, REASON_WORDS } from "./words.js";

/** What the bar says while a move is on its way (null: nothing for moves other than flicks). */
export function sendingWords(what) {
  return what === "flick" ? "Sending your flick…" : null;
}

/** What the bar says while a move waits for the line (`attempt` counts from 0). */
export function retryWords(what, attempt) {
  return `No connection — your ${what === "flick" ? "flick" : "move"} will be sent when the line is back (try ${attempt + 1})…`;
}

/**
 * The words of a refusal: {toast, ms, say}. The refusal always comes from the server; known reasons
 * are said in the game's words, any other in the server's own message. A flick's says it was not made.
 */
export function refusalWords(err, wasFlick) {
  const not = wasFlick ? "Your flick was not made: " : "";
  if (!(err instanceof ApiError)) return { toast: `${not}something went wrong on this phone.`, ms: undefined, say: null };
  const words = REASON_WORDS[err.reason] || (err.code !== "illegal_action" && CODE_WORDS[err.code]) || err.message;
  return {
    toast: `${not}${wasFlick ? words.charAt(0).toLowerCase() + words.slice(1) : words}`,
    ms: 4200,
    say: wasFlick ? `Your flick was not made: ${words}` : null,
  };
}

/** Sends the moves of the page screen `screen`; `acting` is the move on its way (a promise) or null. */
export class MoveSender {
  constructor(screen) {
    this.screen = screen;
    this.acting = null;
  }

  /** Sends one action; resolves true when the server took it (false: refused, or another is on its way). */
  async send(action, at = null, what = null) {
    if (this.acting) return false;
    const s = this.screen;
    const sideBefore = s.model.sideToAct;
    s.ui.sending = sendingWords(what);
    this.acting = (async () => {
      s.refresh();
      try {
        const res = await s.sync.act(action, {
          onRetry: (attempt) => {
            s.ui.sending = retryWords(what, attempt);
            s.refresh();
          },
        });
        if (s.side === null && sideBefore) s.learnSide(sideBefore);
        if (res.events) s.sync.receive(res.version, res.events);
        return true;
      } catch (err) {
        if (!(err instanceof ApiError && err.code === "gone")) this.refused(err, at, sideBefore, what === "flick");
        return false;
      } finally {
        s.ui.sending = null;
        s.state.mark({ sending: null });
        this.acting = null;
        s.refresh();
      }
    })();
    return this.acting;
  }

  refused(err, at, sideBefore, wasFlick) {
    const s = this.screen;
    const words = refusalWords(err, wasFlick);
    if (err instanceof ApiError) {
      if (err.code === "not_your_turn" && s.side === null && sideBefore) s.learnSide(otherSide(sideBefore));
      if (err.code === "stale_version" && err.body && err.body.snapshot) s.animator.idle().then(() => { if (!s.gone) s.setSnapshot(err.body.snapshot); });
      else if (err.code === "stale_version") s.sync.catchUp();
    }
    toast(words.toast, { at, kind: "refusal", ms: words.ms });
    if (words.say) say(words.say);
  }
}
