"""Dawood-bot's levels (issue 23): the cover names every level, lowest first, each with its line; the page
remembers the level chosen and the book, the end sheet and the replay show it; the server takes every
level and the old names stored with pages, and refuses an unknown one."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import httpx
import pytest
from web_helpers import Phone

from dotfight.bot import STRENGTHS
from dotfight.server.schemas import Strength

LEVELS = list(STRENGTHS)


def test_the_server_takes_every_level_of_the_bot_and_no_other() -> None:
    assert list(typing.get_args(Strength)) == LEVELS
    assert {"easy", "normal", "hard"} <= set(LEVELS)  # the names stored with older pages


@pytest.mark.parametrize("strength", ["beginner", "easy", "normal"])
def test_a_bot_page_is_made_at_any_level_and_says_which(server: str, strength: str) -> None:
    with httpx.Client(base_url=server, timeout=10) as http:
        created = http.post(
            "/api/pages", json={"preset": "quick", "mode": "bot", "bot": {"strength": strength}}
        )
        assert created.status_code == 201, created.text
        snapshot = http.get(f"/api/pages/{created.json()['id']}").json()
    assert snapshot["bot"] == {"side": "red", "strength": strength}


def test_an_unknown_level_is_refused_with_a_clear_code(server: str) -> None:
    with httpx.Client(base_url=server, timeout=10) as http:
        refused = http.post("/api/pages", json={"mode": "bot", "bot": {"strength": "grandmaster"}})
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "bad_request"


@pytest.mark.browser
def test_the_cover_offers_every_level_and_the_page_shows_the_one_chosen(
    server: str, phone: Any, screens: Path
) -> None:
    p = Phone(phone, server)
    p.goto("/")
    p.tap("[data-action=more-sizes]")
    p.tap(".choice[data-value=quick]")
    p.tap(".choice[data-value=bot]")
    levels = p.page.locator("[aria-label='Dawood-bot strength'] .choice")
    assert [levels.nth(i).get_attribute("data-value") for i in range(levels.count())] == LEVELS
    line = p.page.locator(".level-line")
    lines = {}
    for name in LEVELS:
        p.tap(f".choice[data-value={name}]")
        lines[name] = line.inner_text()
    assert all(lines.values()) and len(set(lines.values())) == len(LEVELS)
    assert "careful" in lines["beginner"]
    p.tap(".choice[data-value=beginner]")
    p.shot(screens, "cover-bot-levels")
    p.tap("[data-action=start]")
    p.page.wait_for_url("**/p/*")
    p.idle()
    page_id = p.state()["id"]
    with httpx.Client(base_url=server, timeout=10) as http:
        assert http.get(f"/api/pages/{page_id}").json()["bot"]["strength"] == "beginner"

    # Resigned at once: the end sheet says at which level the bot played.
    p.tap("[aria-label='page menu']")
    p.page.locator(".sheet button", has_text="Resign").tap()
    p.page.locator(".sheet button.btn-red", has_text="Resign").tap()
    p.idle()
    end = p.page.locator(".sheet.end")
    end.locator(".bot-level").wait_for()
    assert "Dawood-bot played red at beginner" in end.inner_text()

    p.goto("/#book")
    item = p.page.locator(f".book-item[data-id='{page_id}'] .what")
    assert "against Dawood-bot (beginner)" in item.inner_text()

    p.goto(f"/p/{page_id}#view=replay")
    p.page.locator(".replay .bot-level").wait_for()
    assert "Dawood-bot beginner" in p.page.locator(".replay .status .who").inner_text()
    assert p.state()["bot"] == {"side": "red", "strength": "beginner"}
    assert p.errors == []
