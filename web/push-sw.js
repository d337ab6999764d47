// Web Push in the service worker (imported by /sw.js; registered alone where there is no /sw.js):
// a push from the server says it is the player's move on a page — show it, unless that page is already
// in front of the player; a tap on the notification brings the page's tab forward, or opens it.

/** Reads a push's JSON ({title, body, url, tag, page, side, version}); anything else becomes {}. */
function pushMessage(event) {
  try {
    const data = event.data ? event.data.json() : {};
    return data && typeof data === "object" ? data : {};
  } catch {
    return {};
  }
}

/** Only the app's own page paths are opened from a notification. */
function pagePathOf(url) {
  return typeof url === "string" && /^\/p\/[A-Za-z0-9_-]{1,32}$/.test(url) ? url : "/";
}

/** The window clients showing a path of this app. */
async function windowsAt(path) {
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  return windows.filter((c) => new URL(c.url).pathname === path);
}

self.addEventListener("push", (event) => {
  const data = pushMessage(event);
  const url = pagePathOf(data.url);
  event.waitUntil((async () => {
    const open = await windowsAt(url);
    // The page is in front of the player: it shows the move already (and its tab title says so).
    if (url !== "/" && open.some((c) => c.visibilityState === "visible" && c.focused)) return;
    await self.registration.showNotification(typeof data.title === "string" ? data.title : "Dotfight", {
      body: typeof data.body === "string" ? data.body : "",
      tag: typeof data.tag === "string" ? data.tag : "dotfight",
      renotify: true,
      lang: "en",
      data: { url, page: data.page || null, version: data.version || null },
    });
  })());
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = pagePathOf(event.notification.data && event.notification.data.url);
  event.waitUntil((async () => {
    const [open] = await windowsAt(url);
    if (open && "focus" in open) return open.focus();
    return self.clients.openWindow(url);
  })());
});
