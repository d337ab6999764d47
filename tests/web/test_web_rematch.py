"""Rematch from the end sheet always opens the new page — its address and its screen — however the
phone's history step (the sheet's closing Back) and the server's answer to the new page race, and says
plainly when the server refuses the new page. The new page is the real server's (`/rematch`, issue 19:
on one phone it starts at once, the same size), never one the phone asks for itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from web_helpers import SETUP, Phone, make_page

pytestmark = pytest.mark.browser

# Chromium steps through history off the page's thread: on a loaded phone a Back the app takes can land
# well after a quick answer from the server. This slows every Back the app itself takes by `ms`.
SLOW_BACK = "ms => { const back = history.back.bind(history); history.back = () => setTimeout(back, ms); }"


def finished_page(server: str, p: Phone) -> str:
    """A Quick page on one phone, finished; its rematch (the server's) starts at once."""
    local = {"preset": "quick", "mode": "local"}
    created = make_page(server, local, [*SETUP, ("blue", {"type": "resign"})])
    created_pages: list[str] = []  # the pages this phone asks the server to create itself (none)
    p.page.on(
        "request",
        lambda req: (
            created_pages.append(req.url) if req.method == "POST" and req.url.endswith("/api/pages") else None
        ),
    )
    p.created_pages = created_pages  # type: ignore[attr-defined]
    p.goto(f"/p/{created['id']}#seat={created['seats']['blue']}")
    p.page.locator(".sheet.end [data-action=rematch]").wait_for()
    return str(created["id"])


def assert_on_new_page(p: Phone, old: str) -> None:
    p.page.wait_for_function(
        f"location.pathname.startsWith('/p/') && !location.pathname.endsWith('{old}')", timeout=15000
    )
    p.idle()
    st = p.state()
    assert st["screen"] == "page" and st["id"] != old and st["phase"] == "bases"
    assert p.page.url.endswith(f"/p/{st['id']}")
    # It stays there: no late history step takes the address (or the screen) back to the old page.
    p.page.wait_for_timeout(1500)
    assert p.page.url.endswith(f"/p/{st['id']}") and p.state()["id"] == st["id"]
    assert p.page.locator(".sheet.end").count() == 0
    # The server made it (/rematch), the same size on one phone; the phone asked for no page of its own.
    assert p.created_pages == []  # type: ignore[attr-defined]
    made = httpx.get(f"{p.base}/api/pages/{old}/rematch", timeout=10).json()["page"]
    assert made == st["id"]
    new = httpx.get(f"{p.base}/api/pages/{made}", timeout=10).json()
    assert (new["mode"], new["rules"]["preset"]) == ("local", "quick")


@pytest.mark.parametrize("back_ms", [0, 1000])
def test_rematch_opens_the_new_page_whatever_the_history_step_takes(
    server: str, phone: Any, screens: Path, back_ms: int
) -> None:
    p = Phone(phone, server)
    old = finished_page(server, p)
    p.page.evaluate(SLOW_BACK, back_ms)
    p.tap(".sheet.end [data-action=rematch]")
    assert_on_new_page(p, old)
    # Back from the new page goes to the finished page (the sheet left no entry behind).
    p.page.go_back()
    p.page.wait_for_function(f"location.pathname.endsWith('{old}')")
    p.idle()
    assert p.state()["id"] == old
    assert p.errors == []
    p.shot(screens, f"rematch-back-{back_ms}ms")


def test_rematch_with_a_slow_server_answer(server: str, phone: Any) -> None:
    p = Phone(phone, server)
    old = finished_page(server, p)

    def slow(route: Any) -> None:
        if route.request.method == "POST":
            p.page.wait_for_timeout(1500)
        route.fallback()

    p.page.route("**/rematch", slow)
    p.tap(".sheet.end [data-action=rematch]")
    assert_on_new_page(p, old)
    assert p.errors == []


def test_a_refused_rematch_is_said_plainly(server: str, phone: Any, screens: Path) -> None:
    p = Phone(phone, server)
    old = finished_page(server, p)
    words = "the server is busy; wait a moment"

    def refuse(route: Any) -> None:
        if route.request.method != "POST":
            route.fallback()
        else:
            error = {"error": {"code": "rate_limited", "message": words}}
            route.fulfill(status=429, json=error, headers={"Retry-After": "60"})

    def offline(route: Any) -> None:
        if route.request.method == "POST":
            route.abort()
        else:
            route.fallback()

    p.page.route("**/rematch", refuse)
    p.tap(".sheet.end [data-action=rematch]")
    toast = p.page.locator("#toasts .toast-refusal")
    toast.wait_for()
    assert toast.inner_text() == f"No rematch was offered: {words}"
    assert p.page.url.endswith(f"/p/{old}") and p.state()["id"] == old
    p.shot(screens, "rematch-refused")
    # Without a connection, it says that instead.
    p.page.unroute("**/rematch", refuse)
    p.page.route("**/rematch", offline)
    # The end sheet stays up (nothing was made): its Rematch is tried again.
    p.tap(".sheet.end [data-action=rematch]")
    p.page.locator("#toasts .toast-refusal", has_text="no connection to the server").wait_for()
    assert p.state()["id"] == old and p.errors == []
