"""Web app budgets, measured in Debian's chromium: first-load bytes and animation frame times.

Starts a real server (subprocess, temporary SQLite file), then:

- **first load**: opens `/` on a fresh phone-sized context and sums the bytes transferred for every
  response (headers and body as sent, so compression counts), listing each file. Budget: 150 KB.
- **frames while ink is drawn**: a Classic page on one phone (quick setup, both ready), then `--flicks`
  full-power flicks made by real touch drags; while each line is drawn it records the gaps between
  animation frames (requestAnimationFrame) and the time each page redraw takes (`Renderer.draw`).
  Prints median, p95, max and how many frames took longer than 16 ms.

    python3 benchmarks/web.py                 # about 20 s
    python3 benchmarks/web.py --flicks 12
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

# A script, not a package: the shared harness lives in tests/support under the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS, PHONE
from tests.support.server_process import ServerProcess

RECORDER = """() => {
  const rec = { gaps: [], draws: [], on: true };
  const renderer = window.dotfight.screen().renderer;
  const draw = renderer.draw.bind(renderer);
  renderer.draw = () => {
    const t = performance.now();
    draw();
    if (rec.on) rec.draws.push(performance.now() - t);
  };
  let last = null;
  const tick = (now) => {
    if (last !== null && rec.on) rec.gaps.push(now - last);
    last = now;
    if (rec.on) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  window.__rec = rec;
}"""


def first_load(browser: Any, base: str, path: str = "/") -> None:
    ctx = browser.new_context(**PHONE)
    page = ctx.new_page()
    cdp = ctx.new_cdp_session(page)
    cdp.send("Network.enable")
    urls: dict[str, str] = {}
    sizes: dict[str, float] = {}
    cdp.on("Network.responseReceived", lambda e: urls.__setitem__(e["requestId"], e["response"]["url"]))
    cdp.on("Network.loadingFinished", lambda e: sizes.__setitem__(e["requestId"], e["encodedDataLength"]))
    page.goto(base + path, wait_until="networkidle")
    total = sum(sizes.values())
    print(
        f"first load of {path} : {total / 1024:.1f} KB transferred in {len(sizes)} responses"
        " (budget for /: 150 KB)"
    )
    for rid, size in sorted(sizes.items(), key=lambda kv: -kv[1]):
        if path == "/":
            print(f"    {size / 1024:7.1f} KB  {urls.get(rid, '?').replace(base, '')}")
    ctx.close()


def touch(cdp: Any, kind: str, x: float | None = None, y: float | None = None) -> None:
    points = [] if x is None or y is None else [{"x": x, "y": y}]
    cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})


def frames(browser: Any, base: str, flicks: int) -> None:
    with httpx.Client(base_url=base, timeout=10) as http:
        created = http.post("/api/pages", json={"preset": "classic", "mode": "local"}).json()
        page_id, token = created["id"], created["seats"]["blue"]
        for version, action in enumerate([{"type": "quick_setup"}, {"type": "ready"}, {"type": "ready"}]):
            http.post(
                f"/api/pages/{page_id}/actions",
                json={"action": action, "version": version},
                headers={"Authorization": f"Bearer {token}"},
            ).raise_for_status()
    ctx = browser.new_context(**PHONE)
    # The page's token goes into the book the way a link would bring it.
    page = ctx.new_page()
    page.goto(f"{base}/p/{page_id}#seat={token}")
    page.wait_for_function("window.dotfight && window.dotfight.state().phase === 'play'")
    cdp = ctx.new_cdp_session(page)
    gaps: list[float] = []
    draws: list[float] = []
    made = 0
    for _ in range(flicks * 3):
        if made >= flicks:
            break
        page.evaluate("window.dotfight.idle()")
        if page.locator(".handover").count():
            page.locator(".handover").tap()
        st = page.evaluate("window.dotfight.state()")
        if st["phase"] != "play":
            break
        if (st["turn"] or {}).get("chain"):
            page.locator("[data-action=stop]").tap()
            continue
        side = st["sideToAct"]
        mine = [s for s in st["soldiers"] if s["side"] == side and s["alive"] and not s["on_road"]]
        foes = [s for s in st["soldiers"] if s["side"] != side and s["alive"]]
        m, f = min(
            ((a, b) for a in mine for b in foes),
            key=lambda p: math.hypot(p[0]["x"] - p[1]["x"], p[0]["y"] - p[1]["y"]),
        )
        d = math.hypot(f["x"] - m["x"], f["y"] - m["y"]) or 1.0
        # Full power: pull 320 units straight back from the aim.
        fx, fy = m["x"] - (f["x"] - m["x"]) / d * 320, m["y"] - (f["y"] - m["y"]) / d * 320
        pts = [
            page.evaluate("([x, y]) => window.dotfight.toPage(x, y)", [x, y])
            for x, y in ((m["x"], m["y"]), (fx, fy))
        ]
        page.evaluate(RECORDER)
        touch(cdp, "touchStart", pts[0]["x"], pts[0]["y"])
        for k in range(1, 9):
            touch(
                cdp,
                "touchMove",
                pts[0]["x"] + (pts[1]["x"] - pts[0]["x"]) * k / 8,
                pts[0]["y"] + (pts[1]["y"] - pts[0]["y"]) * k / 8,
            )
        touch(cdp, "touchEnd")
        page.evaluate("window.dotfight.idle()")
        rec = page.evaluate("(() => { window.__rec.on = false; return window.__rec; })()")
        gaps += rec["gaps"]
        draws += rec["draws"]
        made += 1
    ctx.close()
    print(f"frames while ink is drawn on a Classic page ({made} full-power flicks):")
    for name, values in (("frame gap (rAF)", gaps), ("page redraw", draws)):
        if not values:
            print(f"    {name}: no frames recorded")
            continue
        values.sort()
        p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
        over = sum(1 for v in values if v > 16.0)
        # At 60 Hz every gap is about 16.7 ms; a gap over 20 ms means a frame was missed.
        missed = sum(1 for v in values if v > 20.0)
        print(
            f"    {name:16s} median {statistics.median(values):5.1f} ms  p95 {p95:5.1f} ms  "
            f"max {values[-1]:6.1f} ms  over 16 ms: {over}  over 20 ms: {missed}  of {len(values)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--flicks", type=int, default=6, help="full-power flicks to time (default 6)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(
            f"sqlite:///{Path(tmp) / 'bench.sqlite3'}",
            Path(tmp) / "server.log",
            extra_args=["--no-access-log", "--log-level", "warning"],
        )
        try:
            server.start()
            base = server.base_url
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
                first_load(browser, base)
                page_id = httpx.post(f"{base}/api/pages", json={"preset": "classic", "mode": "local"}).json()[
                    "id"
                ]
                first_load(browser, base, f"/p/{page_id}")
                frames(browser, base, args.flicks)
                browser.close()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
