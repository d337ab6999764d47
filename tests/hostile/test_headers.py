"""Security headers on every answer (the web app's HTML and files, page links, the API, refusals), the
document headers (the policy, framing, referrer) on all but scripts, style sheets, icons and the manifest
(the service worker's scripts keep the policy), HSTS only over TLS through a trusted proxy, HEAD
wherever GET works, and the app running under its CSP in Chromium without one violation."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.hostile.conftest import StartServer
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS, PHONE
from tests.support.players import nearest_snipe_action
from tests.support.server_process import ServerProcess

EXPECTED = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}
DOCUMENT_ONLY = ("content-security-policy", "referrer-policy", "x-frame-options")
# Shown or run only inside a document, under its policy: nosniff alone.
SUBRESOURCES = [
    "/app.css",
    "/people.css",
    "/js/main.js",
    "/offline.js",
    "/manifest.webmanifest",
    "/icons/icon-192.png",
]
WORKER_SCRIPTS = ["/sw.js", "/push-sw.js"]


def page_paths(server: ServerProcess) -> list[str]:
    created = server.http.post("/api/pages", json={"mode": "local"}).json()
    return [
        "/",
        "/index.html",
        f"/p/{created['id']}",
        "/api/health",
        f"/api/pages/{created['id']}",
        "/no-such-file.txt",
        "/api/no-such-route",
        f"/api/pages/{created['id']}/actions",  # 405
    ]


def csp_directives(header: str) -> dict[str, list[str]]:
    directives: dict[str, list[str]] = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            directives[words[0]] = words[1:]
    return directives


def test_every_answer_carries_the_security_headers(start_server: StartServer) -> None:
    server = start_server()
    for path in page_paths(server):
        answer = server.http.get(path)
        for name, value in EXPECTED.items():
            assert answer.headers.get(name) == value, (path, name)
        csp = csp_directives(answer.headers["content-security-policy"])
        assert csp["default-src"] == ["'none'"], path
        assert csp["frame-ancestors"] == ["'none'"], path
        assert csp["script-src"] == ["'self'"]  # no inline script, no eval, no other host
        assert csp["style-src"] == ["'self'"]
        assert csp["img-src"] == ["'self'", "data:", "blob:"]
        assert csp["connect-src"] == ["'self'"]
        assert csp["manifest-src"] == ["'self'"] and csp["worker-src"] == ["'self'"]
        assert "strict-transport-security" not in answer.headers  # plain HTTP: no HSTS


def test_scripts_and_styles_carry_no_document_headers_and_workers_their_policy(
    start_server: StartServer,
) -> None:
    server = start_server()
    for path in SUBRESOURCES:
        answer = server.http.get(path)
        again = server.http.get(path, headers={"If-None-Match": answer.headers["etag"]})
        assert (answer.status_code, again.status_code) == (200, 304), path
        for each in (answer, again):
            assert each.headers["x-content-type-options"] == "nosniff", path
            assert [name for name in DOCUMENT_ONLY if name in each.headers] == [], path
    cover_policy = server.http.get("/").headers["content-security-policy"]
    for path in WORKER_SCRIPTS:
        answer = server.http.get(path)
        assert answer.headers["content-type"].startswith("text/javascript"), path
        assert answer.headers["x-content-type-options"] == "nosniff", path
        assert answer.headers["content-security-policy"] == cover_policy, path
        assert answer.headers["referrer-policy"] == "no-referrer", path
    # A document's revalidation keeps its headers (a copy cached without them gets them).
    cover = server.http.get("/")
    again = server.http.get("/", headers={"If-None-Match": cover.headers["etag"]})
    assert again.status_code == 304
    assert {name: again.headers.get(name) for name in DOCUMENT_ONLY} == {
        name: cover.headers[name] for name in DOCUMENT_ONLY
    }
    # Behind a TLS proxy HSTS goes on every answer, scripts included.
    behind_proxy = start_server(extra_args=["--forwarded-allow-ips", "127.0.0.1"])
    script = behind_proxy.http.get("/js/main.js", headers={"X-Forwarded-Proto": "https"})
    assert script.headers["strict-transport-security"] == "max-age=31536000"


def test_hsts_only_over_tls_said_by_a_trusted_proxy(start_server: StartServer) -> None:
    untrusting = start_server()
    answer = untrusting.http.get("/", headers={"X-Forwarded-Proto": "https"})
    assert "strict-transport-security" not in answer.headers  # anyone can say so; nobody is trusted
    behind_proxy = start_server(extra_args=["--forwarded-allow-ips", "127.0.0.1"])
    answer = behind_proxy.http.get("/", headers={"X-Forwarded-Proto": "https"})
    assert answer.headers["strict-transport-security"] == "max-age=31536000"
    assert "strict-transport-security" not in behind_proxy.http.get("/").headers


def test_head_answers_wherever_get_does(start_server: StartServer) -> None:
    server = start_server()
    for path in [*page_paths(server), *SUBRESOURCES, *WORKER_SCRIPTS]:
        got = server.http.get(path)
        head = server.http.head(path)
        assert head.status_code == got.status_code, path
        assert head.content == b"", path
        assert head.headers.get("content-type") == got.headers.get("content-type"), path
        assert head.headers.get("content-length") == got.headers.get("content-length"), path
        assert head.headers["x-content-type-options"] == "nosniff", path
    assert server.http.head("/api/health").status_code == 200  # today: 405


@pytest.mark.browser
def test_the_app_runs_under_its_csp_in_chromium(start_server: StartServer, tmp_path: Path) -> None:
    if not (Path(CHROMIUM).exists() or shutil.which("chromium")):
        pytest.skip("Debian's chromium is not installed")
    from playwright.sync_api import sync_playwright

    server = start_server()
    # A live page: the game page hears every move over its WebSocket.
    created = httpx.post(f"{server.base_url}/api/pages", json={"mode": "live"}).json()
    game = f"/p/{created['id']}#seat={created['seats']['blue']}"
    violations: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            ctx = browser.new_context(**{**PHONE, "bypass_csp": False})  # the policy is enforced
            page = ctx.new_page()
            page.on(
                "console",
                lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
            )
            page.on("pageerror", lambda e: violations.append(f"error: {e}"))
            page.add_init_script(
                "document.addEventListener('securitypolicyviolation', (e) => {"
                " (window.__csp = window.__csp || []).push(e.violatedDirective + ' ' + e.blockedURI); });"
            )
            seen: list[Any] = []
            for url in ["/", game]:
                page.goto(server.base_url + url)
                wait_for_app(page)
                page.wait_for_timeout(1000)
                seen.append(page.evaluate("window.__csp || []"))
                assert page.locator("#app").inner_text().strip(), url  # the app drew something
            # The game page follows a page played into battle (events over its WebSocket, drawn live).
            for _ in range(12):
                snapshot = server.http.get(f"/api/pages/{created['id']}").json()
                body = {"action": nearest_snipe_action(snapshot), "version": snapshot["version"]}
                for side in ("blue", "red"):  # whoever may act now
                    auth = {"Authorization": f"Bearer {created['seats'][side]}"}
                    answer = server.http.post(f"/api/pages/{created['id']}/actions", json=body, headers=auth)
                    if answer.status_code == 200:
                        break
            deadline = time.monotonic() + 20
            while page.evaluate("window.dotfight.state().phase") != "play":
                assert time.monotonic() < deadline, "the game page did not follow the page into play"
                page.evaluate("window.dotfight.idle()")
                page.wait_for_timeout(200)
            seen.append(page.evaluate("window.__csp || []"))
            # A page of another origin may not frame the app.
            frame_host = ctx.new_page()
            frame_host.set_content(f'<iframe src="{server.base_url}/"></iframe>')
            frame_host.wait_for_timeout(1500)
            for framed in frame_host.frames[1:]:
                try:
                    ran = framed.evaluate("() => window.dotfight !== undefined")
                except Exception:  # the blocked frame holds Chromium's error page, not the app
                    ran = False
                assert ran is False
        finally:
            browser.close()
    assert seen == [[], [], []], seen
    assert violations == []


def wait_for_app(page: Any, timeout_s: float = 15.0) -> None:
    """Waits until the app has started (polled with `evaluate`: the CSP forbids wait_for_function's eval)."""
    deadline = time.monotonic() + timeout_s
    while not page.evaluate("window.dotfight !== undefined"):
        assert time.monotonic() < deadline, "the app did not start"
        page.wait_for_timeout(100)
