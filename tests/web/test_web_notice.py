"""Your move, noticed: on shared-link and real-time pages the tab's title and icon say when it is your
move, the phone buzzes when it becomes your move, and the pen is heard only once switched on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from web_helpers import SETUP, Phone, aim_at_nearest_enemy, flick_path, make_page

from tests.support.chromium import PHONE

pytestmark = pytest.mark.browser

# Records buzzes and every sound started, without real hardware.
STUBS = """
window.__buzz = [];
navigator.vibrate = (p) => { window.__buzz.push(p); return true; };
window.__sounds = 0;
const Real = window.AudioContext;
window.AudioContext = class extends Real {
  createBufferSource() { const s = super.createBufferSource(); const start = s.start.bind(s);
    s.start = (...a) => { window.__sounds += 1; return start(...a); }; return s; }
};
"""


def wait_state(phone: Phone, condition: str, timeout: float = 15000) -> None:
    phone.page.wait_for_function(
        f"(() => {{ const s = window.dotfight.state(); return {condition}; }})()", timeout=timeout
    )


def test_your_move_in_title_icon_buzz_and_pen_sound(server: str, browser: Any, screens: Path) -> None:
    created = make_page(server, {"preset": "quick", "mode": "live"}, SETUP)
    page_id, seats = created["id"], created["seats"]
    contexts = [browser.new_context(**PHONE), browser.new_context(**PHONE)]
    try:
        for c in contexts:
            c.add_init_script(STUBS)
        blue, red = Phone(contexts[0], server), Phone(contexts[1], server)
        blue.goto(f"/p/{page_id}#seat={seats['blue']}&side=blue")
        red.goto(f"/p/{page_id}#seat={seats['red']}&side=red")
        assert blue.page.title() == "(1) Your move — Dotfight"
        assert red.page.title() == "Dotfight"
        icon = "document.querySelector('link[rel=icon]').getAttribute('href')"
        assert blue.page.evaluate(icon) != red.page.evaluate(icon)
        # Blue flicks (the pen sound is off: silent); then it becomes red's move on red's phone.
        soldier, direction = aim_at_nearest_enemy(blue.state())
        blue.drag(flick_path(soldier, direction, 150))
        blue.idle()
        if blue.state()["sideToAct"] == "blue":  # two with one bullet: blue flicks again
            blue.tap("[data-action=stop]")
            blue.idle()
        wait_state(red, "s.sideToAct === 'red' && s.tool === 'flick'")
        assert red.page.title() == "(1) Your move — Dotfight" and blue.page.title() == "Dotfight"
        assert red.page.evaluate("window.__buzz.length") == 1
        assert blue.page.evaluate("window.__buzz.length") == 0
        assert blue.page.evaluate("window.__sounds") == 0 and red.page.evaluate("window.__sounds") == 0
        red.shot(screens, "notice-your-move")
        # Blue switches the pen sound on (one toggle in the page menu): red's ink is heard on blue's phone.
        blue.tap("[aria-label='page menu']")
        toggle = blue.page.locator("[data-action=pen-sound]")
        assert toggle.inner_text() == "Pen sound: off"
        toggle.tap()
        assert toggle.inner_text() == "Pen sound: on"
        blue.page.locator(".sheet button", has_text="Close").tap()
        heard = blue.page.evaluate("window.__sounds")
        soldier, direction = aim_at_nearest_enemy(red.state())
        red.drag(flick_path(soldier, direction, 150))
        red.idle()
        wait_state(blue, "s.inkCount === 2")
        blue.idle()
        assert blue.page.evaluate("window.__sounds") > heard
        assert red.page.evaluate("window.__sounds") == 0
        # The choice is kept on the device.
        assert blue.page.evaluate("localStorage.getItem('dotfight.penSound')") == "on"
        assert blue.errors == [] and red.errors == []
    finally:
        for c in contexts:
            c.close()
