"""The log is read page by page (C4: `from`, `limit`, `next`) by every reader — replay, catch-up and the
move lookup share one reader — and an expired page (C5: HTTP 410 `page_expired`) is said in words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx
import pytest
from test_web_replay import play_some_page
from web_helpers import Phone

pytestmark = pytest.mark.browser


def serve_paged(p: Phone, base: str, page_id: str, limit: int) -> list[int]:
    """Answers the page's log `limit` entries at a time with `next`, as a paging server does; returns
    the `from` of every request seen."""
    whole = httpx.get(f"{base}/api/pages/{page_id}/log", timeout=10).json()
    asked: list[int] = []

    def answer(route: Any) -> None:
        start = int(parse_qs(urlparse(route.request.url).query).get("from", ["1"])[0])
        asked.append(start)
        part = [e for e in whole["entries"] if start <= e["version"] < start + limit]
        last = whole["entries"][-1]["version"] if whole["entries"] else 0
        body = {**whole, "entries": part, "next": start + limit if start + limit <= last else None}
        route.fulfill(status=200, content_type="application/json", body=json.dumps(body))

    p.page.route(f"**/api/pages/{page_id}/log*", answer)
    return asked


def test_replay_and_catch_up_follow_the_pages(server: str, phone: Any) -> None:
    page_id, entries = play_some_page(server, flicks=4)
    p = Phone(phone, server)
    asked = serve_paged(p, server, page_id, limit=3)
    p.goto(f"/p/{page_id}#view=replay")
    st = p.state()
    assert st["moves"] == len(entries) and st["at"] == len(entries)
    assert asked == list(range(1, len(entries) + 1, 3))
    # The reader the catch-up and the move lookup use: from a version on, every entry once, in order.
    got = p.page.evaluate(
        "async ([id]) => (await (await import('/js/api.js')).api.log(id, 4)).entries.map((e) => e.version)",
        [page_id],
    )
    assert got == list(range(4, len(entries) + 1))
    assert p.errors == []


def test_an_expired_page_is_said_in_words(server: str, phone: Any, screens: Path) -> None:
    p = Phone(phone, server)
    body = {"error": {"code": "page_expired", "message": "page expired"}}
    p.page.route(
        "**/api/pages/gone1234**",
        lambda route: route.fulfill(status=410, content_type="application/json", body=json.dumps(body)),
    )
    p.goto("/p/gone1234")
    text = p.page.locator(".topbar").inner_text()
    assert "This page has expired" in text
    assert "never played past setup" in p.page.locator(".bottombar").inner_text()
    p.shot(screens, "expired-page")
    p.goto("/p/gone1234#view=replay")
    assert "This page has expired" in p.page.locator(".topbar").inner_text()
