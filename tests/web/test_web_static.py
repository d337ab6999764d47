"""How the web app's files are served and what the page screen's markup says (issue 10, defect 8 and
install): deliberate caching, the manifest and its icons, the service worker's version, screen module
preloads, the page screen's h1 and the end sheet's table."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from PIL import Image
from web_helpers import Phone, page_ready_to_flick

from dotfight.server.static import WebFiles, shell_version
from tests.support.chromium import PHONE

WEB = Path(__file__).resolve().parents[2] / "web"
STATIC = [
    "/",
    "/app.css",
    "/js/main.js",
    "/js/game.js",
    "/offline.js",
    "/manifest.webmanifest",
    "/icons/icon-192.png",
]


@pytest.mark.parametrize("path", STATIC)
def test_static_files_are_revalidated_with_their_etag(server: str, path: str) -> None:
    with httpx.Client(base_url=server, timeout=10) as http:
        first = http.get(path)
        assert first.status_code == 200
        assert first.headers["cache-control"] == "no-cache"
        etag = first.headers["etag"]
        again = http.get(path, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b""
        assert again.headers["cache-control"] == "no-cache" and again.headers["etag"] == etag


def test_the_manifest_names_icons_chrome_and_launchers_can_use(server: str) -> None:
    res = httpx.get(f"{server}/manifest.webmanifest", timeout=10)
    assert res.headers["content-type"].startswith("application/manifest+json")
    manifest = res.json()
    assert manifest["start_url"] == "/" and manifest["display"] == "standalone"
    found = set()
    for icon in manifest["icons"]:
        png = httpx.get(f"{server}{icon['src']}", timeout=10)
        assert png.status_code == 200 and png.headers["content-type"] == "image/png"
        image = Image.open(io.BytesIO(png.content))
        assert f"{image.width}x{image.height}" == icon["sizes"]
        found.add((icon["sizes"], icon["purpose"]))
    # Chrome needs 192 and 512; Android's launchers crop a maskable icon to their shape.
    assert {("192x192", "any"), ("512x512", "any"), ("192x192", "maskable"), ("512x512", "maskable")} <= found
    index = httpx.get(f"{server}/", timeout=10).text
    assert '<link rel="manifest" href="/manifest.webmanifest">' in index
    touch = re.search(r'<link rel="apple-touch-icon" href="([^"]+)">', index)
    assert touch, "iOS Safari takes its home-screen icon from apple-touch-icon"
    apple = Image.open(io.BytesIO(httpx.get(f"{server}{touch.group(1)}", timeout=10).content))
    assert apple.size == (180, 180) and apple.mode != "RGBA"  # iOS shows transparency as black


def test_the_service_worker_is_stamped_with_the_shell_version(server: str) -> None:
    with httpx.Client(base_url=server, timeout=10) as http:
        sw = http.get("/sw.js")
        assert sw.status_code == 200 and sw.headers["content-type"].startswith("text/javascript")
        assert sw.text.startswith('importScripts("/push-sw.js");')  # contract C7
        version = sw.headers["etag"].strip('"')
        assert f'const VERSION = "{version}";' in sw.text and "__SHELL_VERSION__" not in sw.text
        assert version == shell_version(WEB)
        assert http.get("/sw.js", headers={"If-None-Match": f'"{version}"'}).status_code == 304
        assert http.get("/push-sw.js").status_code == 200
        # Every file the worker keeps at install is there (one missing file would fail the install).
        shell = json.loads(
            re.search(r"const SHELL = (\[.*?\]);", sw.text, re.S).group(1).replace(",\n]", "]")
        )
        assert "/" in shell and "/offline.js" in shell
        for path in shell:
            assert http.get(path).status_code == 200, path


def test_a_changed_file_changes_the_service_worker(tmp_path: Path) -> None:
    web = tmp_path / "web"
    shutil.copytree(WEB, web)
    app = FastAPI()
    app.mount("/", WebFiles(web))
    with TestClient(app) as client:
        before = client.get("/sw.js").text
        assert client.get("/sw.js").text == before  # stable while nothing changes
        (web / "js" / "nav.js").write_text((web / "js" / "nav.js").read_text() + "\n// deploy 2\n")
        after = client.get("/sw.js").text
        assert after != before and 'const VERSION = "' in after


def loaded_modules(p: Phone) -> tuple[set[str], set[str]]:
    """The /js/ modules the page fetched, and those asked for up front (modulepreload)."""
    fetched: list[str] = p.page.evaluate(
        "performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname)"
    )
    preloaded: list[str] = p.page.evaluate(
        "[...document.querySelectorAll('link[rel=modulepreload]')].map((l) => new URL(l.href).pathname)"
    )
    return {f for f in fetched if f.startswith("/js/") and f != "/js/main.js"}, set(preloaded)


@pytest.mark.browser
def test_a_page_screen_asks_for_all_its_modules_at_once_and_not_the_covers(browser: Any, server: str) -> None:
    page_id, token = page_ready_to_flick(server)
    ctx = browser.new_context(**PHONE)
    try:
        p = Phone(ctx, server)
        p.goto(f"/p/{page_id}#seat={token}")
        fetched, preloaded = loaded_modules(p)
        assert "/js/game.js" in fetched and "/js/cover.js" not in fetched
        assert fetched - preloaded == set(), "modules found only one import level at a time"
        p.goto("/")
        fetched, preloaded = loaded_modules(p)
        assert "/js/cover.js" in fetched and "/js/game.js" not in fetched
        assert fetched - preloaded == set()
        assert p.errors == []
    finally:
        ctx.close()


@pytest.mark.browser
def test_the_page_screen_has_one_h1_and_the_end_sheet_labels_its_rows(browser: Any, server: str) -> None:
    page_id, token = page_ready_to_flick(server)
    res = httpx.post(
        f"{server}/api/pages/{page_id}/actions",
        json={"action": {"type": "resign"}, "version": 3},
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    assert res.status_code == 200, res.text
    ctx = browser.new_context(**PHONE)
    try:
        p = Phone(ctx, server)
        p.goto(f"/p/{page_id}")
        assert p.page.locator("h1").count() == 1
        assert p.page.locator("h1").inner_text().strip() != ""
        table = p.page.locator(".sheet table.numbers")
        table.wait_for()
        rows = table.locator("tbody tr")
        assert rows.count() == 5
        for i in range(rows.count()):
            first = rows.nth(i).locator(":scope > *").first
            assert first.evaluate("(c) => c.tagName") == "TH" and first.get_attribute("scope") == "row"
        headers = table.locator("th")
        for i in range(headers.count()):
            assert headers.nth(i).inner_text().strip() != "", "an empty header cell"
        assert table.locator("thead th[scope=col]").all_inner_texts() == ["Blue", "Red"]
        assert p.errors == []
    finally:
        ctx.close()
