// Moving between screens without reloading: the router registers itself here so every screen can
// say "go there" without importing the router (and without import cycles).

let router = () => {};

/** Registers the function that draws the screen for the current URL. */
export function setRouter(fn) {
  router = fn;
}

/** Goes to a URL inside the app (pushes history) and draws its screen. */
export function go(url, { replace = false } = {}) {
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  router();
}

/** The absolute URL of a page, for sharing. */
export function pageUrl(id) {
  return `${location.origin}/p/${encodeURIComponent(id)}`;
}
