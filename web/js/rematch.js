// A rematch of a finished page, the server's (issue 19, item 5; `/api/pages/{id}/rematch`): either
// seat offers, the other sees the offer at once (the socket's `rematch` message) or when opening the
// page, and accepts or declines; once the server has made the new page, each seat asks it for its own
// new seat with its old token, keeps it in the exercise book and goes there. An offer lasts a while (the
// server's: 10 minutes live, 7 days by link); when it runs out the server tells the sockets and the
// phone offers Rematch again. Against Dawood-bot and on one phone the server starts the new page at
// once. Watchers are never offered a rematch: once there is one, they may watch it. Nothing here makes
// a page of its own (the old client-side rematch seated the invited player as blue of a Classic page
// the other never heard of).

import { request } from "./api.js";
import * as book from "./book.js";
import { go, pagePath } from "./nav.js";
import { rematchButton } from "./people.js";
import { cap, h, say, sheet, toast } from "./ui.js";

export function create(people) {
  return new RematchFlow(people);
}

/** The words of a rematch refused or not sent. */
function refusal(err) {
  return err.code === "offline" ? "there is no connection to the server" : err.message;
}

/** The words for an offer that ran out, from this phone's seat (`mine`). */
function ranOut(by, mine) {
  return by === mine && mine !== "both" ? "Your rematch offer ran out." : `${cap(by)}'s rematch offer ran out.`;
}

/** The rematch of one finished page screen (people.js's part). */
class RematchFlow {
  constructor(people) {
    this.people = people;
    this.screen = people.screen;
    this.buttons = new Set(); // the end sheet's buttons, kept in step with the state
    this.offerSheet = null;
    this.working = null;
    this.entering = null;
    this.loading = this.load();
  }

  get token() {
    return this.screen.token;
  }

  /** This phone's seat for the rematch's words: "blue" / "red", "both" on one phone, null watching. */
  get side() {
    return this.token ? this.screen.side : null;
  }

  /** `/api/pages/{id}/rematch`: GET where it stands (with a seat's token, that seat's new seat too), POST offers or accepts, DELETE withdraws or declines. */
  call(method) {
    return request(method, `/api/pages/${encodeURIComponent(this.screen.id)}/rematch`, { token: this.token });
  }

  /** Where the rematch stands, asked when the page is found finished (an offer waiting, a new page made). */
  async load() {
    try {
      this.take(await this.call("GET"), false);
    } catch {
      // No rematch to tell of (or no answer): the page offers one as usual.
    }
  }

  /**
   * Takes where the rematch stands ({offered_by, page}, from an answer or the socket). `now`: it
   * happened just now on the page this phone shows, so an accepted rematch takes the seat holder there.
   */
  take(state, now) {
    const st = { offered_by: state.offered_by || null, page: state.page || null };
    const before = this.people.rematchState;
    this.people.rematchState = st;
    const mine = this.side;
    // The server says when a standing offer's time ran out (`ended`): Rematch may be tapped again.
    if (state.ended && before && before.offered_by && !before.page) say(ranOut(before.offered_by, mine));
    if (st.offered_by && !st.page && mine && mine !== "both" && st.offered_by !== mine) this.showOffer(st.offered_by);
    else this.closeOffer();
    if (st.page && now && mine) this.enter(st.page);
    this.redraw();
  }

  /** The bar and the end sheet's button follow the state. */
  redraw() {
    const b = rematchButton(this.people.rematchState, this.side);
    for (const el of this.buttons) {
      if (!el.isConnected) {
        this.buttons.delete(el);
        continue;
      }
      el.hidden = !b;
      if (b) {
        el.textContent = b.label;
        el.dataset.action = b.action;
      }
    }
    this.screen.refresh();
  }

  /** The end sheet's rematch button (ending.js): `closeSheet` closes the end sheet before going elsewhere. */
  button(closeSheet) {
    const el = h("button", { class: "btn btn-main", type: "button", "data-action": "rematch", onclick: () => this.tap(closeSheet) }, "Rematch");
    this.buttons.add(el);
    const b = rematchButton(this.people.rematchState, this.side);
    el.hidden = !b;
    if (b) {
      el.textContent = b.label;
      el.dataset.action = b.action;
    }
    return el;
  }

  /** A tap on Rematch (bar or end sheet), whatever its words say now. */
  async tap(closeSheet = () => {}) {
    await this.loading;
    const st = this.people.rematchState || {};
    const mine = this.side;
    if (!mine) {
      if (st.page) {
        closeSheet();
        go(pagePath(st.page));
      }
      return;
    }
    if (st.page) {
      closeSheet();
      return this.enter(st.page);
    }
    if (st.offered_by === mine && mine !== "both") return this.ask("DELETE", "No rematch was withdrawn");
    const made = await this.ask("POST", "No rematch was offered");
    if (made && made.page) closeSheet();
  }

  /** Offers, accepts (POST), withdraws or declines (DELETE); resolves with the server's answer, or null (said). */
  ask(method, failed) {
    if (this.working) return this.working;
    this.working = (async () => {
      try {
        const answer = await this.call(method);
        this.take(answer || {}, true);
        return answer;
      } catch (err) {
        if (!this.screen.gone) toast(`${failed}: ${refusal(err)}`, { kind: "refusal", ms: 6000 });
        return null;
      } finally {
        this.working = null;
      }
    })();
    return this.working;
  }

  /** The other seat's offer, in a quiet sheet like the end sheet: Accept or Decline. */
  showOffer(by) {
    if (this.offerSheet && this.offerSheet.by === by) return;
    this.closeOffer();
    say(`${cap(by)} offers a rematch.`);
    const button = (label, action, cls, fn) => h("button", {
      class: cls, type: "button", "data-action": action, onclick: () => { this.closeOffer(); fn(); },
    }, label);
    const s = sheet(`${cap(by)} offers a rematch`, h("div", { class: "stack" },
      h("p", {}, "A new page of the same size, the colours swapped."),
      h("div", { class: "row" },
        button("Accept", "accept-rematch", "btn btn-main", () => this.ask("POST", "The rematch was not accepted")),
        button("Decline", "decline-rematch", "btn", () => this.ask("DELETE", "The rematch was not declined")))),
    { className: "end rematch-offer", onClose: () => { if (this.offerSheet === s) this.offerSheet = null; } });
    s.by = by;
    this.offerSheet = s;
  }

  closeOffer() {
    const s = this.offerSheet;
    this.offerSheet = null;
    if (s) s.close();
  }

  /** Asks the server for this seat's seat on the new page, keeps it in the book and goes there. */
  enter(page) {
    if (this.entering) return this.entering;
    this.entering = (async () => {
      try {
        const seat = await this.call("GET");
        if (!seat.seat) throw new Error("The new page has no seat for this link.");
        const old = this.screen.entry || {};
        // Both players are already on the old page: the new one needs no sharing (no share sheet).
        book.remember({
          id: seat.page || page, mode: this.screen.mode, preset: old.preset, spec: old.spec, token: seat.seat,
          side: seat.side, links: seat.links, owner: true, shared: true, rematchOf: this.screen.id,
        });
        this.closeOffer();
        if (!this.screen.gone) go(pagePath(seat.page || page));
      } catch (err) {
        if (!this.screen.gone) toast(`The rematch could not be opened: ${refusal(err)}`, { kind: "refusal", ms: 6000 });
      } finally {
        this.entering = null;
      }
    })();
    return this.entering;
  }

  async idle() {
    await this.loading;
    if (this.working) await this.working;
    if (this.entering) await this.entering;
  }

  close() {
    this.closeOffer();
  }
}
