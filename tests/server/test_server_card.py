"""Issue 21, item 8: the link preview — words that read ("A Quick page against Dawood-bot: …"), a card
image of the shape its card asks for (1200 × 630 for `summary_large_image`) while the page's picture
stays whole, and preview tags on the cover too."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient
from PIL import Image
from test_server_picture import PUBLIC_URL, meta_tags, new_page, play

from dotfight.engine import RuleSet, apply
from dotfight.engine import new_page as engine_page
from dotfight.server.app import create_app
from dotfight.server.page_view import LoadedPage
from dotfight.server.picture import INK
from dotfight.server.routes.page_html import preview_tags, preview_text
from dotfight.server.settings import Settings
from dotfight.store.records import PageRecord


@pytest.fixture()
def public_client(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(public_url=PUBLIC_URL))) as test_client:
        yield test_client


def _loaded(mode: str, preset: str = "quick") -> LoadedPage:
    state, _ = apply(engine_page(RuleSet.preset(preset), seed=7), "blue", {"type": "quick_setup"})
    meta = PageRecord("abc", mode, preset, {}, "0" * 32, "0" * 64, None, datetime.now(UTC))
    return LoadedPage(meta, state)


@pytest.mark.parametrize(
    ("mode", "preset", "start"),
    [
        ("bot", "quick", "A Quick page against Dawood-bot: "),
        ("local", "quick", "A Quick page played on one phone: "),
        ("link", "classic", "A Classic page played by a shared link: "),
        ("live", "quick", "A Quick page played live: "),
        ("bot", "dawood", "A page of Dawood's own size against Dawood-bot: "),
    ],
)
def test_the_preview_words_read_as_a_sentence_for_every_way_of_playing(
    mode: str, preset: str, start: str
) -> None:
    page = _loaded(mode, preset)
    _, description = preview_text(page)
    assert description.startswith(start), description
    assert " on against " not in description and " on pass " not in description
    tags = meta_tags(preview_tags(page, PUBLIC_URL))
    for key in ("og:description", "twitter:description"):
        assert tags[key] == description
    assert tags["og:image:alt"].endswith(description) and " on against " not in tags["og:image:alt"]


def test_a_shared_links_preview_is_a_card_of_the_shape_its_card_asks_for(public_client: TestClient) -> None:
    page = new_page(public_client, mode="local", seed="0fd0")
    final = play(public_client, page, actions=12)
    tags = meta_tags(public_client.get(f"/p/{page['id']}").text)
    assert tags["twitter:card"] == "summary_large_image"
    image = tags["og:image"]
    assert image == f"{PUBLIC_URL}/api/pages/{page['id']}/card.png?v={final['version']}"
    assert tags["twitter:image"] == image
    assert (tags["og:image:width"], tags["og:image:height"]) == ("1200", "630")
    card = public_client.get(image.removeprefix(PUBLIC_URL))
    assert card.status_code == 200 and card.headers["content-type"] == "image/png"
    with Image.open(io.BytesIO(card.content)) as png:
        assert png.size == (1200, 630)  # 1.91:1, as summary_large_image and Open Graph show it
        colours = {colour for _, colour in png.convert("RGB").getcolors(1 << 16) or []}
    # The page's two inks are on it (the page itself and the score beside it).
    for ink in INK.values():
        rgb = tuple(int(ink[i : i + 2], 16) for i in (1, 3, 5))
        assert any(all(abs(a - b) < 24 for a, b in zip(c, rgb, strict=True)) for c in colours), ink
    # Cached by version like the picture: revalidated while in play, 304 when unchanged.
    assert "no-cache" in card.headers["cache-control"]
    again = public_client.get(image.removeprefix(PUBLIC_URL), headers={"If-None-Match": card.headers["etag"]})
    assert again.status_code == 304
    # "Share the page" keeps the whole page, portrait.
    whole = public_client.get(f"/api/pages/{page['id']}/picture.png")
    with Image.open(io.BytesIO(whole.content)) as png:
        assert png.size == (700, 980)


def test_the_card_of_an_unknown_page_is_refused_with_a_code(public_client: TestClient) -> None:
    unknown = public_client.get("/api/pages/NoSuchPage/card.png")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"


def test_the_cover_has_its_own_preview(public_client: TestClient) -> None:
    cover = public_client.get("/")
    assert cover.status_code == 200 and "<title>Dotfight</title>" in cover.text
    tags = meta_tags(cover.text)
    assert tags["og:title"].startswith("Dotfight") and tags["og:url"] == f"{PUBLIC_URL}/"
    assert "exercise book" in tags["og:description"] and tags["twitter:description"] == tags["og:description"]
    # A square icon: the square `summary` card, not a wide one that would crop it.
    assert tags["twitter:card"] == "summary"
    assert tags["og:image"] == f"{PUBLIC_URL}/icons/icon-512.png" == tags["twitter:image"]
    assert (tags["og:image:width"], tags["og:image:height"]) == ("512", "512")
    # Revalidated like the app's static files.
    assert cover.headers["cache-control"] == "no-cache"
    assert public_client.get("/", headers={"If-None-Match": cover.headers["etag"]}).status_code == 304
