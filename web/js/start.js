// Starting a page: asks the server for a new page, keeps its seat in the exercise book, opens it.

import { api } from "./api.js";
import * as book from "./book.js";
import { go, pagePath } from "./nav.js";

/** Starts a new page on the server, records it in the book and opens it. */
export async function startPage(spec) {
  const res = await api.createPage(spec);
  const mode = spec.mode;
  let side = "blue";
  let token = res.seats.blue;
  if (mode === "local") side = "both";
  if (mode === "bot") {
    side = res.seats.blue ? "blue" : "red";
    token = res.seats[side];
  }
  book.remember({ id: res.id, mode, preset: spec.preset, spec, token, side, links: res.links, owner: true });
  go(pagePath(res.id));
  return res;
}
