"""Sharing the page as a picture, at phone size: the end sheet's and the page menu's "Share the page"
hand the server's PNG to the phone's share sheet where it takes files, and download it where it cannot
(headless Chromium has no share sheet)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from web_helpers import Phone

pytestmark = pytest.mark.browser

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from server_testkit import simple_action  # noqa: E402


def finished_page(base: str) -> tuple[str, str]:
    """A local Quick page set up and played a little over HTTP, then resigned (few requests: the shared
    server keeps its rate limit); returns its id and token."""
    with httpx.Client(base_url=base, timeout=10) as http:
        created = http.post("/api/pages", json={"preset": "quick", "mode": "local"}).json()
        page_id, token = created["id"], created["seats"]["blue"]
        current = created["snapshot"]
        for _ in range(12):
            action = simple_action(current) if current["version"] < 11 else {"type": "resign"}
            body = {"action": action, "version": current["version"]}
            res = http.post(
                f"/api/pages/{page_id}/actions", json=body, headers={"Authorization": f"Bearer {token}"}
            )
            assert res.status_code == 200, res.text
            current = http.get(f"/api/pages/{page_id}").json()
            if current["phase"] == "over":
                break
    assert current["phase"] == "over"
    return page_id, token


def picture(base: str, page_id: str) -> bytes:
    return httpx.get(f"{base}/api/pages/{page_id}/picture.png", timeout=30).content


def test_the_end_sheet_downloads_the_page_as_a_picture_where_there_is_no_share_sheet(
    server: str, phone: Any, screens: Path
) -> None:
    page_id, token = finished_page(server)
    me = Phone(phone, server)
    me.open_link(f"{server}/p/{page_id}#seat={token}")
    button = me.page.locator(".sheet.end [data-action=share-page]")
    button.wait_for()
    assert me.page.evaluate(
        "!(navigator.canShare && navigator.canShare({files: [new File([''], 'x.png', {type: 'image/png'})]}))"
    )
    box = button.bounding_box()
    assert box is not None and box["height"] >= 44  # a thumb's target
    me.shot(screens, "share-page-end-sheet")
    with me.page.expect_download() as download:
        button.tap()
    saved = download.value
    assert saved.suggested_filename == f"dotfight-page-{page_id}.png"
    assert Path(saved.path()).read_bytes() == picture(server, page_id)
    assert me.page.locator(".toast", has_text="saved as a picture").count() == 1
    assert me.page.locator(".sheet.end").count() == 0  # the sheet made way
    assert me.errors == []


def test_the_page_menu_shares_the_picture_file_where_the_phone_can_share_files(
    server: str, phone: Any, screens: Path
) -> None:
    # The phone's share sheet, as a page sees it: canShare accepts files, share records what it was given.
    phone.add_init_script(
        """
        window.__shared = [];
        navigator.canShare = (data) => !!(data && data.files && data.files.length);
        navigator.share = async (data) => {
          const file = data.files[0];
          const head = new Uint8Array(await file.slice(0, 8).arrayBuffer());
          window.__shared.push({name: file.name, type: file.type, size: file.size, head: Array.from(head),
                                title: data.title, text: data.text});
        };
        """
    )
    with httpx.Client(base_url=server, timeout=10) as http:
        created = http.post("/api/pages", json={"preset": "quick", "mode": "link"}).json()
    page_id = created["id"]
    me = Phone(phone, server)
    me.open_link(created["links"]["blue"] + "&side=blue")
    me.tap("[aria-label='page menu']")
    button = me.page.locator(".sheet [data-action=share-page]")
    button.wait_for()
    me.shot(screens, "share-page-menu")
    button.tap()
    me.page.wait_for_function("window.__shared.length === 1")
    [shared] = me.page.evaluate("window.__shared")
    assert shared["name"] == f"dotfight-page-{page_id}.png" and shared["type"] == "image/png"
    assert bytes(shared["head"]) == b"\x89PNG\r\n\x1a\n" and shared["size"] == len(picture(server, page_id))
    assert shared["text"].endswith(f"/p/{page_id}")
    assert me.errors == []
