// Sharing the page as a picture: the server draws it in the same pen (GET /api/pages/{id}/picture.png);
// the phone's share sheet takes the image where it can (Web Share with files), else it is downloaded.
// The picture is fetched as soon as the button appears, so that a tap shares at once: share sheets need
// the tap's own moment, and a fetch started by the tap could outlast it.

import { pageUrl } from "./nav.js";
import { h, toast } from "./ui.js";

/** Fetches the page's picture as a PNG file (resolves null when it cannot be had). */
async function pictureFile(id) {
  try {
    const res = await fetch(`/api/pages/${encodeURIComponent(id)}/picture.png`);
    if (!res.ok) return null;
    const blob = await res.blob();
    return new File([blob], `dotfight-page-${id}.png`, { type: "image/png" });
  } catch {
    return null;
  }
}

/** Saves a file through a download link (where the phone has no share sheet for files). */
function download(file) {
  const url = URL.createObjectURL(file);
  const a = h("a", { href: url, download: file.name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30000);
  toast("The page is saved as a picture.");
}

/** Shares (or downloads) a picture file of page `id`. */
export async function sharePicture(id, file) {
  if (!file) {
    toast("The page could not be drawn just now — try again.", { kind: "refusal" });
    return "failed";
  }
  const shared = { files: [file], title: "Dotfight", text: `A page of Dotfight: ${pageUrl(id)}` };
  if (navigator.canShare && navigator.canShare({ files: [file] })) {
    try {
      await navigator.share(shared);
      return "shared";
    } catch (err) {
      if (err && err.name === "AbortError") return "cancelled";
      // Refused (e.g. the tap's moment passed): the download still gets the picture to the player.
    }
  }
  download(file);
  return "downloaded";
}

/**
 * A "Share the page" button for page `id`; `before` runs first on a tap (e.g. closing its sheet).
 * The picture is fetched when the button is made.
 */
export function sharePageButton(id, before = null) {
  const file = pictureFile(id);
  return h("button", {
    class: "btn", type: "button", "data-action": "share-page",
    onclick: async () => {
      if (before) before();
      await sharePicture(id, await file);
    },
  }, "Share the page");
}
