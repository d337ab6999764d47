// Moving between screens without reloading: the router registers itself here so every screen can
// say "go there" without importing the router (and without import cycles).

let router = () => {};

/** Registers the function that draws the screen for the current URL. */
export function setRouter(fn) {
  router = fn;
}

/** Goes to a URL inside the app (pushes history) and draws its screen. */
export function go(url) {
  // Leaving from a sheet: the new screen takes the sheet's history entry.
  if (history.state && history.state.sheet) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  router();
}

/** A page's path in the app; `view` "replay" opens its replay. */
export function pagePath(id, view = null) {
  return `/p/${encodeURIComponent(id)}${view ? `#view=${view}` : ""}`;
}

/** The absolute URL of a page, for sharing. */
export function pageUrl(id) {
  return `${location.origin}${pagePath(id)}`;
}
