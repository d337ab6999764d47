"""A phone in a test: real touch drags through the DevTools protocol, the app's test hook, pixels."""

from __future__ import annotations

import itertools
import math
import time
from pathlib import Path
from typing import Any

import httpx

from tests.support.pages import SETUP_MOVES


class Phone:
    """One browser page of the app, driven like a finger on a phone."""

    def __init__(self, ctx: Any, base: str) -> None:
        self.ctx = ctx
        self.base = base
        self.page = ctx.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(f"{e}\n{e.stack}"))
        self.cdp = ctx.new_cdp_session(self.page)

    def goto(self, path: str) -> None:
        """Opens a path of the app and waits until it has settled."""
        self.open_link(self.base + path)

    def open_link(self, url: str) -> None:
        """Opens a whole address (a shared seat or watch link) and waits until the app has settled."""
        self.page.goto(url)
        self.page.wait_for_function("window.dotfight !== undefined")
        self.idle()

    def start_page(self, preset: str, mode: str) -> list[str]:
        """Starts a page from the cover; returns the links the share sheet offers (opponent's, watch)."""
        self.goto("/")
        self.tap("[data-action=more-sizes]")
        self.tap(f".choice[data-value={preset}]")
        self.tap(f".choice[data-value={mode}]")
        self.tap("[data-action=start]")
        self.page.wait_for_url("**/p/*")
        self.idle()
        links: list[str] = self.page.locator(".sheet .link").all_inner_texts()
        return links

    def set_up_against_the_bot(self) -> None:
        """Sets blue up at once and says ready; waits until Dawood-bot has done the same and blue flicks."""
        self.tap("[data-action=quick_setup]")
        self.idle()
        self.tap("[data-action=ready]")
        self.page.wait_for_function(
            "(() => { const s = window.dotfight.state(); "
            "return s.phase === 'play' && s.tool === 'flick'; })()",
            timeout=20000,
        )

    def idle(self) -> None:
        """Waits until nothing is animating, sending or syncing."""
        settled = self.page.evaluate(
            "Promise.race([window.dotfight.idle().then(() => true), "
            "new Promise((ok) => setTimeout(() => ok(false), 15000))])"
        )
        if not settled:
            st = self.state()
            raise AssertionError(
                f"the app did not settle within 15 s: {st.get('waiting')} phase={st.get('phase')} "
                f"turn={st.get('turn')} errors={self.errors}"
            )

    def state(self) -> dict[str, Any]:
        """The app's view of the page (the test hook)."""
        result: dict[str, Any] = self.page.evaluate("window.dotfight.state()")
        return result

    def client(self, x: float, y: float) -> tuple[float, float]:
        """Where a page point (page units) is drawn, in CSS pixels of the viewport."""
        p = self.page.evaluate("([x, y]) => window.dotfight.toPage(x, y)", [x, y])
        return p["x"], p["y"]

    def touch(self, kind: str, x: float | None = None, y: float | None = None) -> None:
        points = [] if x is None or y is None else [{"x": x, "y": y}]
        self.cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

    def drag(self, path: list[tuple[float, float]], steps: int = 8, release: bool = True) -> None:
        """Drags a finger along page points (a real trusted touch: start, moves, end)."""
        pts = [self.client(x, y) for x, y in path]
        self.touch("touchStart", *pts[0])
        for (x0, y0), (x1, y1) in itertools.pairwise(pts):
            for k in range(1, steps + 1):
                f = k / steps
                self.touch("touchMove", x0 + (x1 - x0) * f, y0 + (y1 - y0) * f)
        if release:
            self.touch("touchEnd")

    def tap_page(self, x: float, y: float) -> None:
        """Taps the page at a page point."""
        cx, cy = self.client(x, y)
        self.touch("touchStart", cx, cy)
        self.touch("touchEnd")

    def tap(self, selector: str) -> None:
        """Taps a button or anything else on screen."""
        self.page.locator(selector).first.tap()

    def dismiss_handover(self) -> bool:
        """Taps the hand-over card away if it is showing; returns whether it was."""
        card = self.page.locator(".handover")
        if card.count():
            card.first.tap()
            self.idle()
            return True
        return False

    def ink_near(self, x: float, y: float, side: str, radius_px: int = 6) -> bool:
        """Whether the canvas shows that side's ink within a few device pixels of a page point."""
        found: bool = self.page.evaluate(
            """([x, y, side, rad]) => {
                const c = document.querySelector('.stage canvas');
                // Through the page's own transform (the page may be turned for red, or zoomed).
                const at = window.dotfight.toPage(x, y), rect = c.getBoundingClientRect();
                const k = c.width / rect.width;
                const cx = Math.round((at.x - rect.left) * k), cy = Math.round((at.y - rect.top) * k);
                const d = c.getContext('2d').getImageData(cx - rad, cy - rad, 2 * rad + 1, 2 * rad + 1).data;
                for (let i = 0; i < d.length; i += 4) {
                    const [r, g, b] = [d[i], d[i + 1], d[i + 2]];
                    if (side === 'blue' && b > r + 50 && b > 90 && r < 150) return true;
                    if (side === 'red' && r > b + 50 && r > 120 && g < 120) return true;
                }
                return false;
            }""",
            [x, y, side, radius_px],
        )
        return found

    def shot(self, folder: Path, name: str) -> None:
        """Saves a screenshot of the screen as it is now."""
        self.page.screenshot(path=str(folder / f"{name}.png"))


def log(base: str, page_id: str) -> dict[str, Any]:
    """The page's stored log, straight from the server."""
    result: dict[str, Any] = httpx.get(f"{base}/api/pages/{page_id}/log", timeout=10).json()
    return result


def wait_for_entries(base: str, page_id: str, count: int) -> list[dict[str, Any]]:
    """Polls the page's log until it holds `count` entries (bounded); returns them."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        entries: list[dict[str, Any]] = log(base, page_id)["entries"]
        if len(entries) >= count:
            return entries
        time.sleep(0.05)
    raise AssertionError(f"the log never reached {count} entries")


def page_ready_to_flick(base: str) -> tuple[str, str]:
    """A local Quick page set up over HTTP (quick setup, both ready); returns its id and token."""
    with httpx.Client(base_url=base, timeout=10) as http:
        created = http.post("/api/pages", json={"preset": "quick", "mode": "local"}).json()
        page_id, token = created["id"], created["seats"]["blue"]
        for version, action in enumerate([{"type": "quick_setup"}, {"type": "ready"}, {"type": "ready"}]):
            res = http.post(
                f"/api/pages/{page_id}/actions",
                json={"action": action, "version": version},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert res.status_code == 200, res.text
    return page_id, token


def aim_at_nearest_enemy(state: dict[str, Any]) -> tuple[dict[str, Any], tuple[float, float]]:
    """Picks a soldier of the side to act that may flick and the unit direction to its nearest enemy."""
    side = state["sideToAct"]
    chain = (state.get("turn") or {}).get("chain")
    mine = [s for s in state["soldiers"] if s["side"] == side and s["alive"] and not s["on_road"]]
    if chain:
        mine = [s for s in mine if s["id"] == chain["soldier"]]
    enemies = [s for s in state["soldiers"] if s["side"] != side and s["alive"]]
    best = min(
        ((m, e) for m in mine for e in enemies),
        key=lambda pair: math.hypot(pair[0]["x"] - pair[1]["x"], pair[0]["y"] - pair[1]["y"]),
    )
    m, e = best
    d = math.hypot(e["x"] - m["x"], e["y"] - m["y"]) or 1.0
    return m, ((e["x"] - m["x"]) / d, (e["y"] - m["y"]) / d)


def flick_path(
    soldier: dict[str, Any], direction: tuple[float, float], pull: float
) -> list[tuple[float, float]]:
    """The finger's path for a flick: press the soldier, pull back away from the shot by `pull` units."""
    x, y = soldier["x"], soldier["y"]
    return [
        (x, y),
        (x - direction[0] * pull * 0.5, y - direction[1] * pull * 0.5),
        (x - direction[0] * pull, y - direction[1] * pull),
    ]


# The setup of a page ready to flick, as (side, action): blue's quick setup, then both sides ready.
SETUP = list(SETUP_MOVES)


def make_page(base: str, body: dict[str, Any], actions: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Creates a page and plays `actions` [(side, action)]; returns the creation answer."""
    with httpx.Client(base_url=base, timeout=10) as http:
        created: dict[str, Any] = http.post("/api/pages", json=body).json()
        for version, (side, action) in enumerate(actions):
            res = http.post(
                f"/api/pages/{created['id']}/actions", json={"action": action, "version": version},
                headers={"Authorization": f"Bearer {created['seats'][side]}"},
            )  # fmt: skip
            assert res.status_code == 200, res.text
    return created
