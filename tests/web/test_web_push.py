"""Web Push from end to end at phone size: red taps "Tell me when it's my move" on a shared-link page
and leaves; blue moves; the server's encrypted push reaches the push service (a local stand-in) for red
only; handed to red's service worker (as the browser's push service would), it shows the notification.

Headless Chromium reaches no real push service, so the one hop between the push service and the
browser is stood in for: `pushManager.subscribe` answers a subscription whose endpoint is the local
stand-in and whose keys the test holds, and the push is delivered to the service worker over the
DevTools protocol (`ServiceWorker.deliverPushMessage`) with the payload the stand-in received.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from web_helpers import Phone

from tests.support.chromium import PHONE
from tests.support.push_service import Browser, PushService, push_service_on_loopback, unb64url
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.browser


@pytest.fixture
def push_service() -> Iterator[PushService]:
    with push_service_on_loopback() as service:
        yield service


@pytest.fixture
def push_server(tmp_path: Path) -> Iterator[str]:
    """A server of its own that may push to plain http on loopback (the stand-in push service)."""
    process = ServerProcess.on_sqlite(tmp_path, extra_env={"DOTFIGHT_PUSH_INSECURE_ENDPOINTS": "1"})
    process.start()
    try:
        yield process.base_url
    finally:
        process.stop()


FAKE_PUSH_MANAGER = """
([subscription]) => {
  window.__subscribed = [];
  let current = null;
  const asSubscription = () => ({
    endpoint: subscription.endpoint,
    toJSON: () => subscription,
    unsubscribe: async () => { current = null; return true; },
  });
  PushManager.prototype.getSubscription = async function () { return current; };
  PushManager.prototype.subscribe = async function (options) {
    const key = new Uint8Array(options.applicationServerKey);
    window.__subscribed.push({ userVisibleOnly: options.userVisibleOnly, key: Array.from(key) });
    current = asSubscription();
    return current;
  };
}
"""


def test_red_is_told_when_blue_has_moved_and_the_notification_opens_the_page(
    push_server: str, push_service: PushService, browser: Any, screens: Path
) -> None:
    with httpx.Client(base_url=push_server, timeout=10) as http:
        created = http.post("/api/pages", json={"preset": "quick", "mode": "link"}).json()
        server_key = http.get("/api/push/key").json()["key"]
    page_id, seats = created["id"], created["seats"]
    red_browser = Browser.at(f"{push_service.base}/push/red")

    ctx = browser.new_context(**PHONE)
    ctx.grant_permissions(["notifications"], origin=push_server)
    try:
        ctx.add_init_script(f"({FAKE_PUSH_MANAGER})([{json.dumps(red_browser.subscription())}])")
        red = Phone(ctx, push_server)
        red.open_link(f"{created['links']['red']}&side=red")
        red.tap("[aria-label='page menu']")
        toggle = red.page.locator(".sheet [data-action=push]")
        assert toggle.get_attribute("aria-checked") == "false"
        assert toggle.inner_text() == "Tell me when it's my move"
        toggle.tap()
        red.page.wait_for_function(
            "document.querySelector('[data-action=push]').getAttribute('aria-checked') === 'true'"
        )
        red.shot(screens, "push-toggle-on")
        [subscribed] = red.page.evaluate("window.__subscribed")
        assert subscribed["userVisibleOnly"] is True
        assert bytes(subscribed["key"]) == unb64url(server_key)
        assert red.page.locator(".toast", has_text="told when it's your move").count() == 1

        # Red leaves the page (the cover): with no socket open on it, red is pushed to.
        red.goto("/")
        with httpx.Client(base_url=push_server, timeout=10) as http:
            for version, action in enumerate([{"type": "quick_setup"}, {"type": "ready"}]):
                res = http.post(
                    f"/api/pages/{page_id}/actions",
                    json={"action": action, "version": version},
                    headers={"Authorization": f"Bearer {seats['blue']}"},
                )
                assert res.status_code == 200, res.text
        [push] = push_service.wait_for(1)
        assert push.path == "/push/red"
        message = red_browser.read(push)
        assert message == {
            "title": "Your move — Dotfight",
            "body": "Blue is ready. Arrange your soldiers.",
            "url": f"/p/{page_id}",
            "tag": f"dotfight-{page_id}",
            "page": page_id,
            "side": "red",
            "version": 2,
        }

        # The browser's push service hands the push to red's service worker: it shows the notification.
        cdp = red.cdp
        registrations: list[dict[str, Any]] = []
        cdp.on("ServiceWorker.workerRegistrationUpdated", lambda e: registrations.extend(e["registrations"]))
        versions: list[Any] = []
        cdp.on("ServiceWorker.workerVersionUpdated", lambda e: versions.extend(e["versions"]))
        cdp.send("ServiceWorker.enable")
        red.page.wait_for_function("navigator.serviceWorker.ready.then(() => true)")
        red.page.wait_for_timeout(200)
        [registration] = [r for r in registrations if not r.get("isDeleted")]
        # Read until it is there, the whole list each time. Headless Chromium now and then drops a push
        # handed in over CDP (the worker running and activated, no error, no notification: about one run
        # in four here; the second hand-in showed it each time), so the test hands it in again. Whether
        # a push from a real push service can be dropped this way is not known; the service worker's
        # code has no path that returns without showing it for a page that is not open.
        notes: list[dict[str, Any]] = []
        for _ in range(4):
            cdp.send(
                "ServiceWorker.deliverPushMessage",
                {
                    "origin": push_server,
                    "registrationId": registration["registrationId"],
                    "data": json.dumps(message),
                },
            )
            for _ in range(30):
                notes = red.page.evaluate(
                    """navigator.serviceWorker.ready.then((r) => r.getNotifications()).then((ns) =>
                         ns.map((n) => ({title: n.title, body: n.body, tag: n.tag, url: n.data.url})))"""
                )
                if notes:
                    break
                red.page.wait_for_timeout(100)
            if notes:
                break
        assert notes, (
            registrations,
            red.errors,
            [(v["runningStatus"], v["status"], v["scriptURL"]) for v in versions],
        )
        [shown] = notes
        assert shown == {
            "title": "Your move — Dotfight",
            "body": "Blue is ready. Arrange your soldiers.",
            "tag": f"dotfight-{page_id}",
            "url": f"/p/{page_id}",
        }
        assert red.errors == []
    finally:
        ctx.close()
