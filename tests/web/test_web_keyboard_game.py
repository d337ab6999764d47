"""Issue 21, item 2: the keyboard plays the whole game. At 1280 × 800 with keys only, a Quick page
against Dawood-bot goes from the cover to the end sheet and its replay: the choices are radio groups
walked by the arrows, the focus stays where the player is after every choice, Start, Ready and send
step, bases are drawn and soldiers arranged by keys, a send is made by keys, the hints name the keys,
and the live region is on the page from load."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from scenarios import seeded_page_with
from web_helpers import Phone, log, make_page, page_ready_to_flick

pytestmark = pytest.mark.browser

# A desktop window, no touch; results drawn at once so the page moves at the keyboard's pace.
DESKTOP: dict[str, Any] = {
    "viewport": {"width": 1280, "height": 800},
    "device_scale_factor": 1,
    "bypass_csp": True,
    "reduced_motion": "reduce",
}

FOCUSED = """(() => { const e = document.activeElement; if (!e || e === document.body) return 'body';
  const d = e.dataset;
  return [e.tagName.toLowerCase(), d.action || d.value || d.kind || d.count || '',
          e.closest('.sheet') ? 'in-sheet' : '', e.textContent.trim().slice(0, 30)].join('|'); })()"""


def focused(p: Phone) -> str:
    """What has the keyboard's focus: tag|data|in-sheet|words ("body" when nothing has)."""
    text: str = p.page.evaluate(FOCUSED)
    return text


def tab_to(p: Phone, part: str, limit: int = 40) -> None:
    """Presses Tab until the focused element's description holds `part` (bounded)."""
    for _ in range(limit):
        if part in focused(p):
            return
        p.page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {part!r}; focus is on {focused(p)!r}")


def press(p: Phone, key: str, times: int = 1) -> None:
    for _ in range(times):
        p.page.keyboard.press(key)


def wait_for(p: Phone, condition: str, timeout: float = 30000) -> None:
    p.page.wait_for_function(
        f"(() => {{ const s = window.dotfight.state(); return {condition}; }})()", timeout=timeout
    )


def hint(p: Phone) -> str:
    text: str = p.page.locator(".bottombar .hint").inner_text()
    return text


MY_MOVE = "s.phase === 'over' || (s.sideToAct === 'blue' && s.tool !== 'tap')"


def test_a_whole_quick_page_against_dawood_bot_by_keys(server: str, browser: Any, screens: Path) -> None:
    ctx = browser.new_context(**DESKTOP)
    try:
        p = Phone(ctx, server)
        p.goto("/")
        # The live region is there from load, before anything has been said.
        assert p.page.evaluate("!!document.querySelector('#said[aria-live=polite]')")
        tab_to(p, "more-sizes")
        press(p, "Enter")
        assert "more-sizes" in focused(p)
        press(p, "Tab")  # into the sizes group: its one tab stop is the size chosen
        assert focused(p).startswith("button|classic")
        press(p, "ArrowRight")  # the radio group's arrow: Quick chosen, the focus with it
        assert focused(p).startswith("button|quick")
        assert p.page.locator(".choice[data-value=quick]").get_attribute("aria-checked") == "true"
        press(p, "Tab")  # the next group (past the sizes' other buttons, one tab stop each)
        assert focused(p).startswith("button|local")
        press(p, "ArrowRight")
        assert focused(p).startswith("button|bot")
        press(p, "Tab")
        assert focused(p).startswith("button|normal")
        press(p, "ArrowLeft")  # steady, the level between easy and normal (issue 23's ladder)
        assert focused(p).startswith("button|steady")
        press(p, "ArrowLeft")
        assert focused(p).startswith("button|easy")
        p.shot(screens, "keyboard-game-cover")
        tab_to(p, "start")
        press(p, "Enter")
        p.page.wait_for_url("**/p/*")
        p.idle()
        page_id = p.state()["id"]
        # The page screen opens with the keyboard on the page, and its hints name the keys.
        assert focused(p).startswith("canvas")
        assert "Enter" in hint(p) and "Arrows" in hint(p)

        # Bases by keys: a circle in the middle of blue's half, moved by the arrows, drawn by Enter.
        for lefts, rights in ((15, 0), (0, 0), (0, 15)):
            wait_for(p, MY_MOVE)
            assert p.state()["tool"] == "draw_base"
            press(p, "ArrowLeft", lefts)
            press(p, "ArrowRight", rights)
            press(p, "Enter")
            if not lefts and not rights:
                press(p, "Enter")  # the first Enter shows the circle where it starts; the second draws it
            p.idle()
        wait_for(p, "s.phase === 'positioning' && s.tool === 'arrange'")
        bases = [b for b in p.state()["bases"] if b["side"] == "blue"]
        assert sorted(round(b["x"]) for b in bases) == [200, 500, 800]
        assert "picks a soldier" in hint(p)
        assert focused(p).startswith("canvas")

        # Arranging by keys: the first soldier (top to bottom) moved a little towards his base's centre.
        press(p, "n")
        st = p.state()
        mine = sorted((s for s in st["soldiers"] if s["side"] == "blue"), key=lambda s: (s["y"], s["x"]))
        first = mine[0]
        home = min(bases, key=lambda b: math.hypot(b["x"] - first["x"], b["y"] - first["y"]))
        dx, dy = home["x"] - first["x"], home["y"] - first["y"]
        across = "ArrowRight" if dx > 0 else "ArrowLeft"
        arrow = across if abs(dx) > abs(dy) else ("ArrowDown" if dy > 0 else "ArrowUp")
        press(p, f"Shift+{arrow}")
        assert "Soldier 1 of" in p.page.locator("#said").inner_text()
        press(p, "Enter")
        p.idle()
        last = log(server, page_id)["entries"][-1]
        assert last["action"]["type"] == "position" and last["action"]["soldiers"][0]["id"] == first["id"]
        p.shot(screens, "keyboard-game-arranged")
        tab_to(p, "ready")
        press(p, "Enter")
        wait_for(p, MY_MOVE)
        # Ready is gone once play begins: the focus is back on the page, not on the body.
        assert focused(p).startswith("canvas")

        sent = False
        for _ in range(300):
            wait_for(p, MY_MOVE)
            p.idle()
            st = p.state()
            if st["phase"] == "over":
                break
            if st["sideToAct"] != "blue" or st["tool"] == "tap":
                continue
            opts = st["options"] or {}
            if not sent and opts.get("send") and not st["turn"].get("flicked"):
                # A send by keys: the bar's Send, then the bases by n / Enter and the number by a digit.
                tab_to(p, "send")
                press(p, "Enter")
                assert focused(p).startswith("canvas")
                assert "n picks the base" in hint(p)
                press(p, "n")
                press(p, "Enter")
                assert "Keys 1 to" in hint(p)
                press(p, "1")
                assert "n picks where they walk" in hint(p)
                press(p, "n")
                press(p, "Enter")
                p.idle()
                assert log(server, page_id)["entries"][-1]["action"]["type"] == "send"
                sent = True
                continue
            if opts.get("flickable"):
                press(p, "n")
                press(p, "ArrowUp", 10)  # full power
                assert "Enter flicks" in hint(p) and "slide back" not in hint(p)
                press(p, "Enter")
            elif opts.get("can_stop"):
                tab_to(p, "stop")
                press(p, "Enter")
            p.idle()
        else:
            raise AssertionError("the page did not end in 300 moves")
        assert sent
        # The end sheet opened by itself, with the keyboard in it.
        p.page.wait_for_selector(".sheet.end")
        assert "in-sheet" in focused(p)
        assert "wins" in p.page.locator("#said").inner_text()
        p.shot(screens, "keyboard-game-end-sheet")
        # On to the replay from the sheet, and through it by keys.
        tab_to(p, "|in-sheet|Replay")
        press(p, "Enter")
        p.page.wait_for_selector("input[type=range]")
        p.idle()
        tab_to(p, "input|")
        scrub = p.page.locator("input[type=range]")
        press(p, "Home")
        assert scrub.input_value() == "0"
        press(p, "ArrowRight")
        assert scrub.input_value() == "1"
        p.shot(screens, "keyboard-game-replay")
        assert p.errors == []
    finally:
        ctx.close()


def test_on_one_phone_the_keys_keep_their_place(server: str, browser: Any, screens: Path) -> None:
    page_id, token = page_ready_to_flick(server)
    ctx = browser.new_context(**DESKTOP)
    try:
        p = Phone(ctx, server)
        p.goto(f"/p/{page_id}#seat={token}")
        p.page.evaluate("document.activeElement.blur()")
        assert "Press a soldier" in hint(p)
        tab_to(p, "canvas")
        # Reached by Tab, the page's hint names the keys.
        assert hint(p) == "n picks a soldier, arrows aim, Enter flicks."
        press(p, "n")
        assert hint(p).endswith("Enter flicks · Esc cancels")
        press(p, "Escape")
        # The snipe / lunge switch is a radio group: one tab stop, the arrows switch it, focus kept.
        press(p, "Tab")
        assert focused(p).startswith("button|snipe")
        press(p, "ArrowRight")
        assert focused(p).startswith("button|lunge")
        assert p.page.locator("[data-kind=lunge]").get_attribute("aria-checked") == "true"
        press(p, "ArrowLeft")
        assert focused(p).startswith("button|snipe")
        # A send put down by Escape: the focus stays on the page.
        if p.state()["options"].get("send"):
            tab_to(p, "send")
            press(p, "Enter")
            assert focused(p).startswith("canvas")
            press(p, "Escape")
            assert "Send put down" in p.page.locator("#said").inner_text()
            assert p.page.locator("[data-action=send]").count() == 1
        tab_to(p, "canvas")
        press(p, "n")
        press(p, "Enter")
        # Blue's turn is over: the hand-over card takes the focus, and gives it back to the page.
        p.page.wait_for_selector(".handover")
        assert focused(p).startswith("button|")
        p.shot(screens, "keyboard-handover")
        press(p, "Enter")
        p.page.wait_for_selector(".handover", state="detached")
        assert focused(p).startswith("canvas")
        assert p.errors == []
    finally:
        ctx.close()


def test_a_lunge_chain_by_keys_and_its_stop(server: str, browser: Any, screens: Path) -> None:
    page_id, token = seeded_page_with(server, "lunge_again")
    ctx = browser.new_context(**DESKTOP)
    try:
        p = Phone(ctx, server)
        p.goto(f"/p/{page_id}#seat={token}")
        chain = p.state()["turn"]["chain"]
        assert chain
        p.page.evaluate("document.activeElement.blur()")
        tab_to(p, "canvas")
        assert hint(p) == "Lunge again: n, arrows, Enter — or Stop."
        # n takes the one soldier the chain allows, already on lunge.
        press(p, "n")
        said = p.page.locator("#said").inner_text()
        assert said.startswith("Lunge with soldier 1 of 1")
        press(p, "Escape")
        tab_to(p, "stop")
        p.shot(screens, "keyboard-chain-stop")
        press(p, "Enter")
        p.idle()
        assert log(server, page_id)["entries"][-1]["action"]["type"] == "stop"
        # The stop ended blue's turn: the hand-over card has the keyboard, then gives it to the page.
        assert focused(p).startswith("button|||I'm Red")
        press(p, "Enter")
        assert focused(p).startswith("canvas")
        assert p.errors == []
    finally:
        ctx.close()


def test_quick_setup_by_keys_leaves_the_focus_on_the_page(server: str, browser: Any, screens: Path) -> None:
    created = make_page(
        server, {"preset": "quick", "mode": "bot", "bot": {"strength": "easy", "side": "red"}}, []
    )
    ctx = browser.new_context(**DESKTOP)
    try:
        p = Phone(ctx, server)
        p.goto(f"/p/{created['id']}#seat={created['seats']['blue']}&side=blue")
        p.page.evaluate("document.activeElement.blur()")
        tab_to(p, "quick_setup")
        press(p, "Enter")
        p.idle()
        wait_for(p, "s.phase === 'positioning' && s.tool === 'arrange'")
        # Quick setup is gone with the blank page: the keyboard is on the page, not on the body.
        assert focused(p).startswith("canvas")
        assert "picks a soldier" in hint(p)
        p.shot(screens, "keyboard-quick-setup")
        assert p.errors == []
    finally:
        ctx.close()
