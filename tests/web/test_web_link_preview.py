"""Issue 21, item 8, on a phone: a shared link's preview image is the page's 1.91:1 card (not the
portrait picture a chat app crops), its words read as a sentence, and the cover has a preview too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from web_helpers import Phone, page_ready_to_flick

pytestmark = pytest.mark.browser

HEAD_TAGS = (
    "Object.fromEntries([...document.head.querySelectorAll('meta[property], meta[name]')]"
    ".map((m) => [m.getAttribute('property') || m.getAttribute('name'), m.content]))"
)
# Loads an image and answers its natural size.
IMAGE_SIZE = """(url) => new Promise((ok, fail) => {
  const img = new Image();
  img.onload = () => ok([img.naturalWidth, img.naturalHeight]);
  img.onerror = () => fail(new Error('no image at ' + url));
  img.src = url;
})"""


def test_the_link_preview_shows_the_card_and_the_cover_has_one(
    server: str, phone: Any, screens: Path
) -> None:
    page_id, token = page_ready_to_flick(server)
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#seat={token}")
    tags = p.page.evaluate(HEAD_TAGS)
    assert tags["og:description"].startswith("A Quick page played on one phone: blue 24 soldiers standing")
    assert tags["twitter:card"] == "summary_large_image"
    card = tags["og:image"]
    assert "/card.png?v=" in card
    width, height = p.page.evaluate(IMAGE_SIZE, card)
    assert (width, height) == (1200, 630) and abs(width / height - 1.91) < 0.01
    # The card as a chat shows it, on the phone's screen.
    p.page.goto(card)
    p.shot(screens, "issue21-8-link-preview-card")

    p.goto("/")
    cover = p.page.evaluate(HEAD_TAGS)
    assert cover["og:title"].startswith("Dotfight") and cover["twitter:card"] == "summary"
    assert p.page.evaluate(IMAGE_SIZE, cover["og:image"]) == [512, 512]
    p.shot(screens, "issue21-8-cover-with-preview")
    assert p.errors == []
