"""The page as a picture: the golden SVG and PNG, the picture routes with their caching, and the link
preview (Open Graph and Twitter tags) of `/p/{id}`."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from PIL import Image, ImageChops
from server_testkit import simple_action

from dotfight.engine import Replay, RuleSet, State
from dotfight.server.app import create_app
from dotfight.server.picture import INK, page_svg, png_size, svg_to_png
from dotfight.server.settings import Settings

GOLDEN = Path(__file__).parent / "golden"
PUBLIC_URL = "https://dotfight.example"


def golden_state() -> tuple[str, State]:
    log = json.loads((GOLDEN / "picture_page.json").read_text())
    replay = Replay(RuleSet.from_json(log["rules"]), int(log["seed"], 16), log["actions"])
    assert replay.error is None and replay.state.phase == "over"
    return log["page_id"], replay.state


# --------------------------------------------------------------------------------------------------
# the drawing


def test_the_finished_golden_page_is_drawn_byte_for_byte_as_the_golden_svg() -> None:
    page_id, state = golden_state()
    assert page_svg(state, page_id) == (GOLDEN / "picture.svg").read_text()


def test_the_png_matches_the_golden_png_within_a_pixel_tolerance() -> None:
    page_id, state = golden_state()
    made = Image.open(io.BytesIO(svg_to_png(page_svg(state, page_id), png_size(state.rules)))).convert("RGB")
    golden = Image.open(GOLDEN / "picture.png").convert("RGB")
    assert made.size == golden.size == (700, 980)
    difference = ImageChops.difference(made, golden).convert("L")
    histogram = difference.histogram()
    pixels = made.size[0] * made.size[1]
    off = sum(histogram[24:])  # pixels that differ by more than a faint anti-aliasing shade
    mean = sum(level * count for level, count in enumerate(histogram)) / pixels
    assert off / pixels < 0.005 and mean < 1.5, (off, mean)


def test_the_png_is_small_and_holds_both_inks_on_the_paper() -> None:
    page_id, state = golden_state()
    png = svg_to_png(page_svg(state, page_id), png_size(state.rules))
    assert png.startswith(b"\x89PNG") and len(png) < 400_000
    image = Image.open(io.BytesIO(png)).convert("RGB")
    raw = image.tobytes()
    colours = Counter(zip(raw[0::3], raw[1::3], raw[2::3], strict=True))
    paper = colours.most_common(1)[0][0]
    assert max(abs(a - b) for a, b in zip(paper, (0xFB, 0xF6, 0xE9), strict=True)) <= 4

    def near(ink: str) -> int:
        target = tuple(int(ink[i : i + 2], 16) for i in (1, 3, 5))
        return sum(n for c, n in colours.items() if sum(map(abs, map(int.__sub__, c, target))) < 90)

    assert near(INK["blue"]) > 2000 and near(INK["red"]) > 2000


def test_every_ring_line_and_cross_is_drawn_in_its_own_colour_and_every_soldier_has_a_dot() -> None:
    page_id, state = golden_state()
    svg = page_svg(state, page_id)
    strokes = Counter(re.findall(r'<g stroke="(#[0-9a-f]{6})"', svg))
    for side, colour in INK.items():
        rings = sum(base.side == side for base in state.bases)
        lines = sum(ink.side == side for ink in state.ink)
        crosses = sum(s.cross is not None and s.cross.side == side for s in state.soldiers)
        assert strokes[colour] == rings + lines + 2 * crosses, side  # a cross is two strokes
    assert svg.count("<ellipse") == len(state.soldiers)
    crossed_by_the_other_side = [s for s in state.soldiers if s.cross and s.cross.side != s.side]
    assert crossed_by_the_other_side  # the killer's colour is not simply the victim's


def test_the_wobble_is_the_page_ids_so_two_pages_differ_and_one_page_never_changes() -> None:
    page_id, state = golden_state()
    assert page_svg(state, page_id) == page_svg(state, page_id)
    assert page_svg(state, "another") != page_svg(state, page_id)


# --------------------------------------------------------------------------------------------------
# over HTTP


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def new_page(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/api/pages", json={"preset": "quick", "mode": "link", **body})
    assert response.status_code == 201, response.text
    page: dict[str, Any] = response.json()
    return page


def play(client: TestClient, page: dict[str, Any], actions: int | None = None) -> dict[str, Any]:
    """Plays simple actions (all of the page when `actions` is None); returns the snapshot after."""
    current: dict[str, Any] = client.get(f"/api/pages/{page['id']}").json()
    done = 0
    while current["phase"] != "over" and (actions is None or done < actions):
        token = page["seats"][current["side_to_act"]]
        body = {"action": simple_action(current), "version": current["version"]}
        response = client.post(f"/api/pages/{page['id']}/actions", json=body, headers=bearer(token))
        assert response.status_code == 200, response.text
        current = client.get(f"/api/pages/{page['id']}").json()
        done += 1
    return current


def replayed(client: TestClient, page_id: str, seed: str) -> State:
    log = client.get(f"/api/pages/{page_id}/log").json()
    entries = [{"side": e["side"], "action": e["action"]} for e in log["entries"]]
    return Replay(RuleSet.from_json(log["rules"]), int(seed, 16), entries).state


@pytest.fixture
def public_client(make_settings: Callable[..., Settings]) -> Any:
    with TestClient(create_app(make_settings(public_url=PUBLIC_URL))) as test_client:
        yield test_client


def test_the_svg_route_draws_the_page_from_its_log_and_is_cached_by_version(client: TestClient) -> None:
    page = new_page(client, mode="local", seed="5eed")
    final = play(client, page)
    url = f"/api/pages/{page['id']}/picture.svg"
    response = client.get(url)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("image/svg+xml")
    assert response.text == page_svg(replayed(client, page["id"], final["seed"]), page["id"])
    etag = response.headers["etag"]
    assert page["id"] in etag and str(final["version"]) in etag
    assert "max-age=86400" in response.headers["cache-control"]  # a finished page never changes
    assert response.headers["content-security-policy"] == "default-src 'none'"  # no script, no loads
    again = client.get(url, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""


def test_an_open_pages_picture_changes_with_each_move_and_is_revalidated(client: TestClient) -> None:
    page = new_page(client)
    url = f"/api/pages/{page['id']}/picture.png"
    first = client.get(url)
    assert first.status_code == 200 and first.headers["content-type"] == "image/png"
    assert "no-cache" in first.headers["cache-control"]
    assert Image.open(io.BytesIO(first.content)).size == (700, 980)
    play(client, page, actions=1)  # quick setup: six rings and their soldiers appear
    second = client.get(url, headers={"If-None-Match": first.headers["etag"]})
    assert second.status_code == 200 and second.headers["etag"] != first.headers["etag"]
    assert second.content != first.content
    assert client.get(url, headers={"If-None-Match": second.headers["etag"]}).status_code == 304


def test_a_custom_page_of_any_shape_gets_a_bounded_picture(client: TestClient) -> None:
    rules = {"page_width": 3000, "page_height": 60000, "base_radius_max": 400}
    response = client.post("/api/pages", json={"preset": "custom", "mode": "local", "rules": rules})
    assert response.status_code == 201, response.text
    page = response.json()
    play(client, page, actions=1)
    png = Image.open(io.BytesIO(client.get(f"/api/pages/{page['id']}/picture.png").content))
    assert png.size == (70, 1400)  # the page's shape, inside the 700 × 1400 box
    svg = client.get(f"/api/pages/{page['id']}/picture.svg").text
    assert 'viewBox="0 0 3000.0 60000.0"' in svg


def test_pictures_of_unknown_pages_and_bad_ids_are_refused_with_codes(client: TestClient) -> None:
    for kind in ("svg", "png"):
        unknown = client.get(f"/api/pages/NoSuchPage/picture.{kind}")
        assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
        assert client.get(f"/api/pages/bad%20id!/picture.{kind}").status_code in (400, 404, 422)
    wrong = client.post("/api/pages/NoSuchPage/picture.png")
    assert wrong.status_code == 405 and wrong.json()["error"]["code"] == "method_not_allowed"


class MetaTags(HTMLParser):
    """Collects the `<meta property|name=… content=…>` tags of a document."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        fields = dict(attrs)
        key = fields.get("property") or fields.get("name")
        if tag == "meta" and key and fields.get("content") is not None:
            self.tags[key] = str(fields["content"])


def meta_tags(html: str) -> dict[str, str]:
    parser = MetaTags()
    parser.feed(html)
    return parser.tags


def test_a_shared_link_carries_the_pages_preview_with_an_absolute_image(public_client: TestClient) -> None:
    page = new_page(public_client, mode="local", seed="0fd0")
    final = play(public_client, page)
    response = public_client.get(f"/p/{page['id']}")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    assert "<title>Dotfight</title>" in response.text  # still the app
    tags = meta_tags(response.text)
    winner = final["winner"].capitalize()
    assert tags["og:title"] == f"Dotfight — {winner} wins!"
    assert tags["og:description"].startswith("A Quick page played on one phone: blue ")
    assert f"after {len(final['ink'])} lines of ink" in tags["og:description"]
    image = tags["og:image"]
    # The preview's image is the page's 1.91:1 card (issue 21, item 8; tests/server/test_server_card.py).
    assert image == f"{PUBLIC_URL}/api/pages/{page['id']}/card.png?v={final['version']}"
    assert tags["og:url"] == f"{PUBLIC_URL}/p/{page['id']}"
    assert tags["twitter:card"] == "summary_large_image" and tags["twitter:image"] == image
    assert (tags["og:image:width"], tags["og:image:height"]) == ("1200", "630")
    fetched = public_client.get(image.removeprefix(PUBLIC_URL))
    assert fetched.status_code == 200 and fetched.content.startswith(b"\x89PNG")


def test_the_preview_follows_the_page_and_escapes_nothing_unsafe(client: TestClient) -> None:
    page = new_page(client)
    tags = meta_tags(client.get(f"/p/{page['id']}").text)
    assert tags["og:title"] == "Dotfight — a page being set up"
    assert tags["og:image"].startswith("http://testserver/api/pages/")  # the request's own base
    play(client, page, actions=3)  # quick setup, both sides ready: play begins
    tags = meta_tags(client.get(f"/p/{page['id']}").text)
    assert tags["og:title"] == "Dotfight — a war in progress"
    assert tags["og:image"].endswith("?v=3")


def test_a_link_to_an_unknown_page_still_opens_the_app_without_a_preview(client: TestClient) -> None:
    response = client.get("/p/NoSuchPage")
    assert response.status_code == 200 and "<title>Dotfight</title>" in response.text
    assert "og:image" not in response.text
