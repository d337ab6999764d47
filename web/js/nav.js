// Moving between screens without reloading: the router registers itself here so every screen can
// say "go there" without importing the router (and without import cycles).

let router = () => {};

/** Registers the function that draws the screen for the current URL. */
export function setRouter(fn) {
  router = fn;
}

// Back steps the app takes itself (a closed sheet dropping its history entry), not yet arrived. The
// browser steps through history later, off the page's thread (on a loaded phone, after a server's
// answer): a `go` made meanwhile waits for them, or the late step would take the address back to the
// page left, under the new screen.
let ownSteps = 0;
let stepsDone = null;
let allStepsDone = () => {};

/** Takes one step back in history on the app's own account (it will not be routed). */
export function stepBack() {
  if (ownSteps === 0) stepsDone = new Promise((resolve) => { allStepsDone = resolve; });
  ownSteps += 1;
  history.back();
}

/** True (once) for a Back step the app took itself: it has arrived, and changes no screen. */
export function ownPop() {
  if (ownSteps === 0) return false;
  ownSteps -= 1;
  if (ownSteps === 0) allStepsDone();
  return true;
}

/** Goes to a URL inside the app (pushes history) and draws its screen (after the app's own Back steps). */
export function go(url) {
  if (ownSteps > 0) {
    stepsDone.then(() => go(url));
    return;
  }
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
