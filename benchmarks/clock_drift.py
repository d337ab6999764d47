"""The browser's clock drift against the server's over a live page (issue 19, item 8), in Debian's chromium.

Starts a real `dotfight serve` (subprocess, temporary SQLite file), makes a live quick page with a clock
longer than the run (`initial_s` = minutes × 60 + 120, no increment), sets it up and plays blue's first
turn over HTTP, so red's time runs in play, and nobody moves again. Both seats are opened on two phones
(360 × 640, touch); with `--skew-s` (default 3600) red's phone has `Date.now()` wrong by that much (an
init script), to show the offset the phone takes from the server's `now` holds.

Every `--every` seconds it samples at once:

- the server's time left for red: a fresh `GET /api/pages/{id}`, whose `clock.red_s` is as of the
  server's `now`, taken to be the request's midpoint (corrected by half its round trip), run down
  at 1 s/s to each phone's read;
- what each phone counts: the app's exact time left (`window.dotfight.state().people.clocks.red_ms`,
  computed when read from `Date.now()` + the offset: no 1 s rounding), and what its face last drew
  (`data-ms` of `.clock-red`, redrawn every 200 ms, so it is up to 200 ms stale by design), both at the
  read's midpoint.

Prints drift = phone − server (ms) per sample for both phones, then per phone its max |drift| and its
drift at the end, and the load average before and after (the machine is shared).

    python3 benchmarks/clock_drift.py                       # 5 minutes, a sample every 5 s
    python3 benchmarks/clock_drift.py --minutes 1 --every 2 --skew-s 0
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS, PHONE
from tests.support.clock_pages import live_page_at_reds_turn
from tests.support.server_process import RELAXED_ACTION_BUDGET, ServerProcess

SMALL_PHONE = {**PHONE, "viewport": {"width": 360, "height": 640}}
# What a phone counts for red right now (computed at the read) and what red's face last drew.
READ_RED = """(() => {
  const clocks = window.dotfight.state().people.clocks;
  const face = document.querySelector('.clock-red');
  return {
    exact: clocks.red_ms, running: clocks.running, drawn: Number(face.dataset.ms), text: face.textContent,
  };
})()"""


def skew_script(skew_ms: int) -> str:
    """An init script that makes this phone's `Date.now()` wrong by `skew_ms` (the epoch's parse is left
    alone, as a phone whose clock is set wrong still reads the server's ISO times right)."""
    return f"(() => {{ const now = Date.now.bind(Date); Date.now = () => now() + {skew_ms}; }})()"


def server_red_left(server: ServerProcess, page_id: str) -> tuple[float, float, float]:
    """Red's time left (s) by the server, the local time (s) it is as of (the request's midpoint), and
    half the request's round trip (s): how far off that midpoint can be."""
    for attempt in range(3):
        sent = time.time()
        try:
            clock = server.http.get(f"/api/pages/{page_id}").json()["clock"]
            break
        except httpx.RemoteProtocolError:
            # uvicorn closes a keep-alive connection idle for 5 s, the sampling period: a request can
            # meet the close. The GET is safe to repeat; only the attempt that was answered is timed.
            if attempt == 2:
                raise
    answered = time.time()
    assert clock["running"] == "red", clock
    return float(clock["red_s"]), (sent + answered) / 2, (answered - sent) / 2


def read_phone(page: Any) -> tuple[dict[str, Any], float, float]:
    """The phone's red clock, the local time (s) it was read at (the read's midpoint), and half the
    read's duration (s)."""
    before = time.time()
    shown: dict[str, Any] = page.evaluate(READ_RED)
    after = time.time()
    return shown, (before + after) / 2, (after - before) / 2


def summary(name: str, drifts: list[float]) -> str:
    worst = max(drifts, key=abs)
    return f"{name}: max |drift| {abs(worst):.0f} ms ({worst:+.0f}), at the end {drifts[-1]:+.0f} ms"


def run(minutes: float, every: float, skew_s: float) -> None:
    from playwright.sync_api import sync_playwright

    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    initial_s = int(minutes * 60) + 120
    with tempfile.TemporaryDirectory() as folder:
        server = ServerProcess.on_sqlite(
            Path(folder), extra_env=RELAXED_ACTION_BUDGET, extra_args=["--no-access-log"]
        )
        server.start()
        try:
            page = live_page_at_reds_turn(server, initial_s=initial_s)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
                phones: dict[str, Any] = {}
                for side in ("blue", "red"):
                    ctx = browser.new_context(**SMALL_PHONE)
                    if side == "red" and skew_s:
                        ctx.add_init_script(skew_script(round(skew_s * 1000)))
                    tab = ctx.new_page()
                    tab.goto(f"{server.base_url}/p/{page.id}#seat={page.seats[side]}&side={side}")
                    tab.locator(".clock-red.running").wait_for()
                    phones[side] = tab
                skewed = phones["red"].evaluate("Date.now()") / 1000 - time.time()
                print(f"page {page.id}: {initial_s} s each, red running;", end=" ")
                print(f"red phone's Date.now() off by {skewed:+.0f} s")
                print(" t (s)   server red (s)   blue exact / drawn (ms)   red exact / drawn (ms)   red face")
                drifts: dict[str, list[float]] = {
                    f"{side} {kind}": [] for side in phones for kind in ("exact", "drawn")
                }
                uncertainty: list[float] = []  # half of each request's round trip and each read's duration
                start = time.monotonic()
                sample = 0
                while True:
                    left_s, as_of, half_trip = server_red_left(server, page.id)
                    uncertainty.append(half_trip)
                    row = []
                    for side, tab in phones.items():
                        shown, at, half_read = read_phone(tab)
                        uncertainty.append(half_read)
                        assert shown["running"] == "red", shown
                        truth_ms = (left_s - (at - as_of)) * 1000
                        for kind in ("exact", "drawn"):
                            drifts[f"{side} {kind}"].append(shown[kind] - truth_ms)
                        row.append(f"{shown['exact'] - truth_ms:+8.1f} / {shown['drawn'] - truth_ms:+7.1f}")
                    elapsed = time.monotonic() - start
                    print(
                        f"{elapsed:6.1f}   {left_s:12.3f}   {row[0]:>24}   {row[1]:>23}   {shown['text']}",
                        flush=True,
                    )
                    sample += 1
                    if elapsed >= minutes * 60:
                        break
                    time.sleep(max(0.0, start + sample * every - time.monotonic()))
                browser.close()
        finally:
            server.stop()
    uncertainty.sort()
    median_ms, worst_ms = uncertainty[len(uncertainty) // 2] * 1000, uncertainty[-1] * 1000
    print(
        f"{sample} samples over {elapsed:.0f} s (every {every:g} s); each reading's own uncertainty (half its"
    )
    print(f"round trip or read): median {median_ms:.1f} ms, largest {worst_ms:.1f} ms")
    for name, values in drifts.items():
        print(summary(name, values))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=5.0, help="how long the page's clock is watched")
    parser.add_argument("--every", type=float, default=5.0, help="the sampling period (s)")
    parser.add_argument(
        "--skew-s", type=float, default=3600.0, help="red phone's Date.now() error (s; 0: none)"
    )
    args = parser.parse_args()
    run(args.minutes, args.every, args.skew_s)


if __name__ == "__main__":
    main()
