"""The first load's bytes (issue 21's check, benchmarks/web.py): a page opened by link and played by
touch fetches neither keyplay.js (the keyboard's bases, arranging and sends) nor a summary for its
size (the snapshot's rules name it), and the first keys pressed still work, in their order, once
keyplay.js is in; the service worker's first install asks the server again for nothing the page has
just loaded. After issue 19's people met issue 21's frames (the budget over the base again): the cover
and its worker's install fetch no words.js (the offline screen's words are book.js's); a page on one
phone in play fetches neither people.js, yourmove.js nor pageend.js (the first and last come at its
end, with its end sheet and Rematch as before); a seat of a link page asks for people.js only once
its snapshot has come, never up front."""

from __future__ import annotations

from typing import Any

import pytest
from web_helpers import Phone, make_page, page_ready_to_flick

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


def asked_paths(ctx: Any, server: str) -> list[str]:
    """The paths the context's pages and service worker ask for, in order (kept up to date)."""
    asked: list[str] = []
    ctx.on("request", lambda r: asked.append(r.url.replace(server, "")))
    return asked


def test_the_cover_and_its_install_fetch_no_words_js(server: str, phone: Any) -> None:
    asked = asked_paths(phone, server)
    p = Phone(phone, server)
    p.goto("/")
    p.page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    p.page.wait_for_timeout(300)
    assert "/offline.js" in asked and "/js/book.js" in asked
    assert "/js/words.js" not in asked, asked
    assert p.errors == []


def test_a_page_on_one_phone_loads_the_people_and_its_end_only_at_its_end(server: str, phone: Any) -> None:
    page_id, token = page_ready_to_flick(server)
    asked = asked_paths(phone, server)
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#seat={token}")
    p.page.wait_for_timeout(1200)  # past the people's load after the first paint, had it been asked
    p.idle()
    later = {"/js/people.js", "/js/yourmove.js", "/js/pageend.js", "/people.css"}
    assert later.isdisjoint(asked), asked
    assert p.state()["people"] is None

    # The page ends here (resigned from the page menu, asked twice): the end sheet and the bar's Rematch come.
    p.tap("[aria-label='page menu']")
    p.page.locator(".sheet button", has_text="Resign").click()
    p.page.locator(".sheet .btn-red", has_text="Resign").click()
    p.page.locator(".sheet table.numbers").wait_for()
    p.idle()
    assert {"/js/people.js", "/js/pageend.js"} <= set(asked)
    assert "/js/yourmove.js" not in asked
    p.page.keyboard.press("Escape")
    bar = p.page.locator(".bottombar button")
    assert bar.filter(has_text="Rematch").count() == 1, bar.all_inner_texts()
    assert p.errors == []


def test_a_link_pages_seat_asks_for_the_people_once_its_snapshot_has_come(server: str, phone: Any) -> None:
    created = make_page(server, {"preset": "quick", "mode": "link"}, [])
    asked = asked_paths(phone, server)
    p = Phone(phone, server)
    p.open_link(created["links"]["blue"])
    preloaded = p.page.evaluate(
        "[...document.querySelectorAll('link[rel=modulepreload]')].map((l) => new URL(l.href).pathname)"
    )
    assert "/js/people.js" not in preloaded and "/js/yourmove.js" not in preloaded
    snapshot = asked.index(f"/api/pages/{created['id']}")
    assert asked.index("/js/people.js") > snapshot and asked.index("/js/yourmove.js") > snapshot, asked
    assert p.state()["people"] is not None
    assert p.errors == []
