"""A pull longer than full power is sent at full power, so a drag that wandered far is never refused."""

from __future__ import annotations

import math
from typing import Any

import httpx
import pytest
from web_helpers import Phone, aim_at_nearest_enemy, flick_path, log, page_ready_to_flick

from tests.support.chromium import PHONE

pytestmark = pytest.mark.browser


def test_a_very_long_pull_flicks_at_full_power(browser: Any, server: str) -> None:
    page_id, token = page_ready_to_flick(server)
    ctx = browser.new_context(**PHONE)
    try:
        p = Phone(ctx, server)
        p.goto(f"/p/{page_id}#seat={token}")
        soldier, direction = aim_at_nearest_enemy(p.state())
        pull_max = httpx.get(f"{server}/api/pages/{page_id}", timeout=10).json()["rules"]["pull_max"]
        p.drag(flick_path(soldier, direction, 3 * pull_max))  # far past full power, off the page
        p.idle()
        assert p.errors == []
        entries = log(server, page_id)["entries"]
        flick = entries[-1]
        assert flick["action"]["type"] == "flick"
        dx, dy = flick["action"]["vector"]
        assert pull_max < math.hypot(dx, dy) <= pull_max + 1.5
        # the direction is kept: the shot goes the way the finger aimed
        assert math.atan2(dy, dx) == pytest.approx(math.atan2(direction[1], direction[0]), abs=0.02)
        ink = flick["events"][0]
        assert ink["type"] == "ink" and ink["power"] == 1.0
    finally:
        ctx.close()
