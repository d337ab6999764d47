"""The first load's bytes (issue 21's check, benchmarks/web.py): a page opened by link and played by
touch fetches neither keyplay.js (the keyboard's bases, arranging and sends) nor a summary for its
size (the snapshot's rules name it), and the first keys pressed still work, in their order, once
keyplay.js is in; the service worker's first install asks the server again for nothing the page has
just loaded."""

from __future__ import annotations

from typing import Any

import pytest
from web_helpers import Phone, make_page

pytestmark = pytest.mark.browser


def test_a_page_by_link_loads_the_keys_on_the_first_key(server: str, phone: Any) -> None:
    created = make_page(server, {"preset": "quick", "mode": "link"}, [])
    asked: list[str] = []
    phone.on("request", lambda r: asked.append(r.url.replace(server, "")))
    p = Phone(phone, server)
    p.open_link(created["links"]["blue"])
    p.tap("[aria-label='page menu']")
    assert p.page.locator(".sheet p").first.inner_text() == "Quick · shared link"
    p.page.keyboard.press("Escape")
    assert not [u for u in asked if "keyplay" in u or u.startswith("/api/pages?")], asked

    # Keys pressed at once, before keyplay.js has arrived: the circle shows and moves three steps left
    # from the middle of blue's half, and Enter draws it there.
    p.page.locator("canvas").focus()
    p.page.evaluate(
        """() => {
          const c = document.querySelector('canvas');
          for (const key of ['ArrowLeft', 'ArrowLeft', 'ArrowLeft', 'Enter'])
            c.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true }));
        }"""
    )
    p.page.wait_for_function("window.dotfight.state().bases.some((b) => b.side === 'blue')")
    p.idle()
    bases = [b for b in p.state()["bases"] if b["side"] == "blue"]
    assert [(round(b["x"]), round(b["y"])) for b in bases] == [(440, 1050)]
    assert [u for u in asked if u.endswith("/js/keyplay.js")]
    assert p.errors == []


def test_the_first_install_asks_again_for_no_file_just_loaded(server: str, phone: Any) -> None:
    # Every request of the page and of its worker, as (path, bytes the server sent for it): a second
    # ask for a file the page has just loaded would be a 304 (its headers, some 500 bytes).
    answers: list[tuple[str, int]] = []

    def finished(request: Any) -> None:
        sizes = request.sizes()
        sent = sizes["responseHeadersSize"] + sizes["responseBodySize"]
        answers.append((request.url.replace(server, ""), sent))

    phone.on("requestfinished", finished)
    p = Phone(phone, server)
    p.goto("/")
    p.page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    p.page.wait_for_timeout(300)
    seen: set[str] = set()
    asked_again = []
    for path, sent in answers:
        if path in seen and sent:
            asked_again.append(path)
        seen.add(path)
    assert "/js/api.js" in seen and asked_again == []
    # The shell is whole all the same: how to play (never loaded by the cover) came from the server.
    kept = p.page.evaluate(
        "caches.keys().then((k) => caches.open(k.find((n) => n.startsWith('dotfight-shell-'))))"
        ".then((c) => Promise.all(['/js/api.js', '/js/howto.js', '/']"
        ".map((u) => c.match(u).then((r) => r && r.ok))))"
    )
    assert kept == [True, True, True]
    assert next(sent for path, sent in answers if path == "/js/howto.js") > 1000
    assert p.errors == []
