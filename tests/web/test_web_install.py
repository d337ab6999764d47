"""Install to the home screen (issue 10): Chrome finds the app installable, the service worker keeps the
app shell, and offline the app shows the exercise book and says that play needs the connection."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_helpers import Phone, page_ready_to_flick

from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS, PHONE
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.browser

WEB = Path(__file__).resolve().parents[2] / "web"
CONTROLLED = "navigator.serviceWorker.controller !== null"
SHELL_CACHES = "caches.keys().then((k) => k.filter((n) => n.startsWith('dotfight-shell-')))"


def wait_controlled(p: Phone) -> None:
    """Waits until the service worker is active, then reloads so that it controls the page."""
    p.page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    p.page.reload()
    p.page.wait_for_function(CONTROLLED)
    p.idle()


def go_offline(p: Phone, offline: bool = True) -> None:
    """Takes the phone off the network (or back): its requests fail and `navigator.onLine` says so.
    (Playwright's offline alone leaves `navigator.onLine` true in a page with a DevTools session of
    its own, as `Phone` has; the app tells a phone offline from a server away by it.)"""
    p.ctx.set_offline(offline)
    p.cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": offline, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )


def test_chrome_reports_the_app_installable(browser: Any, server: str, screens: Path, tmp_path: Path) -> None:
    # Chrome never offers to install from an incognito-like context: this one keeps a profile.
    ctx = browser.browser_type.launch_persistent_context(
        tmp_path / "profile", executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, **PHONE
    )
    try:
        p = Phone(ctx, server)
        p.goto("/")
        p.page.evaluate("navigator.serviceWorker.ready.then(() => true)")
        errors: list[Any] = []
        for _ in range(40):  # the manifest and its icons are fetched in the background
            errors = p.cdp.send("Page.getInstallabilityErrors")["installabilityErrors"]
            if not errors:
                break
            p.page.wait_for_timeout(250)
        assert errors == []
        manifest = p.cdp.send("Page.getAppManifest")
        assert manifest["url"].endswith("/manifest.webmanifest") and manifest["errors"] == []
        p.shot(screens, "install-cover")
        assert p.errors == []
    finally:
        ctx.close()


def test_the_service_worker_controls_the_page_after_a_reload(browser: Any, server: str) -> None:
    ctx = browser.new_context(**PHONE)
    try:
        p = Phone(ctx, server)
        p.goto("/")
        wait_controlled(p)
        script = p.page.evaluate("navigator.serviceWorker.controller.scriptURL")
        assert script == f"{server}/sw.js"
        # The shell is in a cache named after the shell version the server wrote into sw.js.
        names = p.page.evaluate(SHELL_CACHES)
        version = ctx.request.get(f"{server}/sw.js").headers["etag"].strip('"')
        assert names == [f"dotfight-shell-{version}"]
        # The cover's files now come from that cache, not the network.
        from_cache = p.page.evaluate(
            "caches.open(" + repr(names[0]) + ").then((c) => Promise.all("
            "['/', '/app.css', '/js/main.js', '/js/cover.js', '/offline.js'].map((u) => c.match(u))))"
            ".then((all) => all.every(Boolean))"
        )
        assert from_cache
        assert p.state()["screen"] == "cover"
        # A page played under the worker: its modules join the cache, the server's answers never do.
        page_id, token = page_ready_to_flick(server)
        p.goto(f"/p/{page_id}#seat={token}")
        assert p.state()["phase"] == "play"
        kept: list[str] = p.page.evaluate(
            f"caches.open({names[0]!r}).then((c) => c.keys())"
            ".then((k) => k.map((r) => new URL(r.url).pathname))"
        )
        assert "/js/game.js" in kept
        assert [k for k in kept if k.startswith(("/api/", "/p/"))] == []
        assert p.errors == []
    finally:
        ctx.close()


def test_offline_a_reload_shows_the_exercise_book_and_says_so(
    browser: Any, server: str, screens: Path
) -> None:
    page_id, token = page_ready_to_flick(server)
    ctx = browser.new_context(**PHONE)
    try:
        p = Phone(ctx, server)
        p.goto(f"/p/{page_id}#seat={token}")  # the page goes into this phone's exercise book
        wait_controlled(p)
        go_offline(p)
        for path in (f"/p/{page_id}", "/"):
            p.page.goto(server + path)
            note = p.page.locator(".offline-note")
            note.wait_for()
            assert "You are offline" in note.inner_text()
            assert "needs the connection" in note.inner_text()
            assert p.page.locator("h1").inner_text() == "Exercise book"
            assert p.page.locator(f".book-item[data-id='{page_id}']").count() == 1
            assert p.state()["screen"] == "offline"
        p.shot(screens, "install-offline-book")
        # Still offline, "Try again" says so; back online, the app comes back by itself.
        p.tap("[data-action=retry]")
        p.page.locator(".toast", has_text="Still no connection").wait_for()
        go_offline(p, False)
        p.page.wait_for_function("window.dotfight.state().screen === 'cover'")
        assert p.errors == []
    finally:
        ctx.close()


@pytest.fixture()
def own_web_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A server of its own serving a copy of web/ that the test may change (a new deploy)."""
    web = tmp_path / "web"
    shutil.copytree(WEB, web)
    process = ServerProcess.on_sqlite(
        tmp_path, extra_args=["--no-access-log"], extra_env={"DOTFIGHT_WEB_DIR": str(web)}
    )
    try:
        process.start()
        yield process.base_url, web
    finally:
        process.stop()


def test_a_new_deploy_replaces_the_shell_cleanly(browser: Any, own_web_server: tuple[str, Path]) -> None:
    base, web = own_web_server
    ctx = browser.new_context(**PHONE)
    try:
        p = Phone(ctx, base)
        p.goto("/")
        wait_controlled(p)
        [old] = p.page.evaluate(SHELL_CACHES)
        # A deploy changes one file: the next visit installs the new worker, which takes over.
        css = web / "app.css"
        css.write_text(css.read_text() + "\n/* deploy 2 */\n")
        p.page.reload()
        names = [old]
        for _ in range(100):
            names = p.page.evaluate(SHELL_CACHES)
            if names != [old] and len(names) == 1:
                break
            p.page.wait_for_timeout(200)
        assert len(names) == 1 and names != [old], names
        [new] = p.page.evaluate(SHELL_CACHES)
        fresh = p.page.evaluate(
            f"caches.open({new!r}).then((c) => c.match('/app.css')).then((r) => r.text())"
        )
        assert fresh.endswith("/* deploy 2 */\n")
        # The open app loads its next screen whole from the new version (a fresh document).
        p.page.wait_for_function("navigator.serviceWorker.controller.state === 'activated'")
        p.page.evaluate("window.__before = true; history.pushState(null, '', '/#how')")
        p.page.evaluate("dispatchEvent(new PopStateEvent('popstate'))")
        p.page.wait_for_function(
            "window.__before === undefined && window.dotfight && window.dotfight.state().screen === 'howto'"
        )
        assert p.errors == []
    finally:
        ctx.close()
