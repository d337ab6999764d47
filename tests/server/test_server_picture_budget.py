"""Issue 18, item 1 (the server's side): a picture's drawing is bounded whatever the rules, made in a
worker process within a time and a size budget (503 `unavailable` with a stable reason past either),
kept in a cache bounded in bytes, sent gzipped as the worker made it, and limited per client address."""

from __future__ import annotations

import contextlib
import re
import signal
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from dotfight.engine import RuleSet, apply, new_page
from dotfight.server.app import create_app
from dotfight.server.picture import MAX_RULED_LINES, MAX_STROKE_SAMPLES, page_svg
from dotfight.server.settings import Settings

# Pages a stored database may hold, whatever the new-page limits say now.
SLIVER = {"page_width": 1e-6, "page_height": 100_000, "base_radius_min": 4e-7, "base_radius_max": 4e-7}
STORED_RULES = [
    RuleSet.preset("custom", **SLIVER, dot_radius=1e-8),
    RuleSet.preset(
        "custom",
        **{**SLIVER, "page_width": 1e-300, "base_radius_min": 4e-301}
        | {"base_radius_max": 4e-301, "dot_radius": 1e-302},
    ),
    RuleSet.preset(
        "custom", page_width=1, page_height=100_000, base_radius_min=0.4, base_radius_max=0.4, dot_radius=0.01
    ),
    RuleSet.preset(
        "custom",
        page_width=100_000,
        page_height=1,
        base_radius_min=0.2,
        base_radius_max=0.2,
        dot_radius=0.002,
    ),
]
# A page as large as any may be, with rings as large as fit: its strokes are the longest there are.
HUGE = RuleSet.preset(
    "custom",
    page_width=100_000,
    page_height=100_000,
    bases_per_side=2,
    base_radius_min=5000,
    base_radius_max=20_000,
    dot_radius=200,
)


def ruled_lines(svg: str) -> int:
    rules = re.search(r'<path d="([^"]*)" stroke="#6092cd"', svg)
    return 0 if rules is None else rules.group(1).count("M")


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Interrupts the block with TimeoutError after `seconds` (before the bound, the sliver's ruled lines
    never ended)."""

    def interrupt(_signal: int, _frame: object) -> None:
        raise TimeoutError(f"still drawing after {seconds} s")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("rules", STORED_RULES, ids=["sliver", "thinnest", "tall", "wide"])
def test_a_stored_page_of_any_proportions_is_drawn_small_and_fast(rules: RuleSet) -> None:
    started = time.perf_counter()
    with deadline(5.0):
        svg = page_svg(new_page(rules, seed=7), "stored")
    assert time.perf_counter() - started < 0.5
    assert ruled_lines(svg) <= MAX_RULED_LINES and len(svg) < 50_000


def test_a_huge_pages_rings_are_drawn_with_a_bounded_number_of_points() -> None:
    page, _ = apply(new_page(HUGE, seed=7), "blue", {"type": "quick_setup"})
    svg = page_svg(page, "huge")
    assert svg.count('<g stroke="') == len(page.bases)
    # Each of a stroke's pressure chunks is one path of at least one step: a ring of radius 12 485 was
    # 16 500 of them, drawn 5 units apart.
    chunks = svg[svg.index('<g stroke="') :].count("<path")
    assert chunks <= len(page.bases) * (MAX_STROKE_SAMPLES + 1), chunks


@pytest.fixture
def make_client(make_settings: Callable[..., Settings]) -> Iterator[Callable[..., TestClient]]:
    clients: list[TestClient] = []

    def make(**overrides: object) -> TestClient:
        client = TestClient(create_app(make_settings(**overrides)))
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


def quick_page(client: TestClient) -> str:
    created = client.post("/api/pages", json={"preset": "quick", "mode": "local"}).json()
    auth = {"Authorization": f"Bearer {created['seats']['blue']}"}
    body = {"action": {"type": "quick_setup"}, "version": 0}
    assert client.post(f"/api/pages/{created['id']}/actions", json=body, headers=auth).status_code == 200
    page_id: str = created["id"]
    return page_id


def refusal(answer: httpx.Response) -> dict[str, Any]:
    error: dict[str, Any] = answer.json()["error"]
    return error


def test_picture_gets_are_limited_per_address_with_a_retry_after(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(picture_burst=3, pictures_per_address_per_second=0.01)
    page_id = quick_page(client)
    url = f"/api/pages/{page_id}/picture.svg"
    first = client.get(url)
    assert first.status_code == 200
    assert client.get(url, headers={"If-None-Match": first.headers["etag"]}).status_code == 304  # counts too
    assert client.get(f"/api/pages/{page_id}/picture.png").status_code == 200
    limited = client.get(url)
    assert limited.status_code == 429 and refusal(limited)["code"] == "rate_limited"
    assert int(limited.headers["Retry-After"]) >= 1
    assert client.get(f"/api/pages/{page_id}").status_code == 200  # nothing else is limited


def test_a_picture_over_its_size_budget_is_a_503_remembered(make_client: Callable[..., TestClient]) -> None:
    client = make_client(picture_max_bytes=5000)
    page_id = quick_page(client)
    for kind in ("svg", "png", "svg"):
        answer = client.get(f"/api/pages/{page_id}/picture.{kind}")
        assert answer.status_code == 503, answer.text
        assert refusal(answer) == {
            "code": "unavailable",
            "message": "this page is too large to draw as a picture",
            "reason": "picture_too_large",
        }


def test_a_picture_over_its_time_budget_is_a_503_and_the_server_goes_on(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(picture_timeout_s=0.001)  # not even the worker's start fits
    page_id = quick_page(client)
    answer = client.get(f"/api/pages/{page_id}/picture.png")
    assert answer.status_code == 503 and refusal(answer)["reason"] == "picture_timeout"
    assert "Retry-After" in answer.headers
    started = time.monotonic()
    again = client.get(f"/api/pages/{page_id}/picture.png")  # remembered: no worker is spent on it
    assert refusal(again)["reason"] == "picture_timeout" and time.monotonic() - started < 0.5
    assert client.get("/api/health").status_code == 200


def test_the_svg_is_sent_gzipped_or_plain_and_is_the_pages_drawing(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    page_id = quick_page(client)
    url = f"/api/pages/{page_id}/picture.svg"
    zipped = client.get(url, headers={"Accept-Encoding": "gzip"})
    plain = client.get(url, headers={"Accept-Encoding": "identity"})
    assert zipped.headers["content-encoding"] == "gzip" and "content-encoding" not in plain.headers
    assert zipped.headers["vary"] == plain.headers["vary"] == "Accept-Encoding"
    assert zipped.text == plain.text and plain.text.startswith("<svg")
    assert zipped.headers["etag"] == plain.headers["etag"]


def test_the_picture_cache_is_bounded_in_bytes(make_client: Callable[..., TestClient]) -> None:
    budget = 150_000
    client = make_client(picture_cache_bytes=budget)
    pages = [quick_page(client) for _ in range(6)]
    for page_id in pages:
        assert client.get(f"/api/pages/{page_id}/picture.png").status_code == 200
        assert 0 < client.app.state.pictures.cached_bytes <= budget  # type: ignore[attr-defined]
    # Forgotten pictures are drawn again, the same bytes.
    first = client.get(f"/api/pages/{pages[0]}/picture.svg").text
    assert first == client.get(f"/api/pages/{pages[0]}/picture.svg").text


def test_the_link_preview_card_is_a_picture_in_every_budget(make_client: Callable[..., TestClient]) -> None:
    # The card was drawn in a thread of its own, outside the per-address limit and the size budget.
    client = make_client(picture_burst=2, pictures_per_address_per_second=0.01, picture_max_bytes=5000)
    page_id = quick_page(client)
    too_large = client.get(f"/api/pages/{page_id}/card.png")
    assert too_large.status_code == 503 and refusal(too_large)["reason"] == "picture_too_large"
    assert client.get(f"/api/pages/{page_id}/picture.svg").status_code == 503  # remembered, and counted
    limited = client.get(f"/api/pages/{page_id}/card.png")
    assert limited.status_code == 429 and refusal(limited)["code"] == "rate_limited"
