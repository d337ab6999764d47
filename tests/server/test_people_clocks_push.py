"""Web Push for clocks (issue 19, item 2): a link page's side to act is reminded when a fifth of its time
is left (not while it has the page open), and both seats are told when a page ends on time."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dotfight.server.app import create_app
from dotfight.server.settings import Settings
from tests.support.push_service import Browser, PushService, push_service_on_loopback


@pytest.fixture
def push_service() -> Iterator[PushService]:
    with push_service_on_loopback() as service:
        yield service


@pytest.fixture
def push_client(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> Iterator[TestClient]:
    monkeypatch.setenv("DOTFIGHT_PUSH_INSECURE_ENDPOINTS", "1")  # the stand-in is plain http on loopback
    with TestClient(create_app(make_settings())) as client:
        yield client


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _link_page_both_subscribed(
    client: TestClient, service: PushService
) -> tuple[dict[str, Any], dict[str, Browser]]:
    page: dict[str, Any] = client.post(
        "/api/pages", json={"preset": "quick", "mode": "link", "clock": {"per_move_s": 3600}}
    ).json()
    phones = {}
    for side in ("blue", "red"):
        phones[side] = Browser.at(f"{service.base}/push/{side}")
        answer = client.post(
            f"/api/pages/{page['id']}/push",
            json=phones[side].subscription(),
            headers=_bearer(page["seats"][side]),
        )
        assert answer.status_code == 201, answer.text
    return page, phones


def _drain(client: TestClient) -> None:
    client.portal.call(client.app.state.push.drain)  # type: ignore[union-attr,attr-defined,call-arg]


def test_a_reminder_reaches_the_side_to_act_unless_it_has_the_page_open(
    push_client: TestClient, push_service: PushService
) -> None:
    client = push_client
    page, phones = _link_page_both_subscribed(client, push_service)
    services = client.app.state.services  # type: ignore[attr-defined]
    loaded = client.portal.call(services.authority.page, page["id"])  # type: ignore[union-attr]
    remind = client.app.state.push.remind  # type: ignore[attr-defined]
    client.portal.call(remind, loaded, "blue", 12 * 60)  # type: ignore[union-attr]
    _drain(client)
    [push] = push_service.wait_for(1)
    told = phones["blue"].read(push)
    assert (told["title"], told["body"]) == (
        "Your move — Dotfight",
        "A fifth of your time for this move is left: 12 minutes.",
    )
    with client.websocket_connect(f"/api/pages/{page['id']}/ws") as socket:
        socket.send_json({"type": "hello", "token": page["seats"]["blue"], "version": 0})
        assert socket.receive_json()["type"] == "state"
        client.portal.call(remind, loaded, "blue", 60)  # type: ignore[union-attr]
        _drain(client)
        assert len(push_service.received) == 1  # blue has the page open: no push


def test_both_seats_are_told_when_a_page_ends_on_time(
    push_client: TestClient, push_service: PushService
) -> None:
    client = push_client
    page, phones = _link_page_both_subscribed(client, push_service)
    state = client.app.state  # type: ignore[attr-defined]
    authority = state.services.authority
    later = authority.now() + 3600 + 5
    authority.now = lambda: later  # blue's hour is up
    state.timeouts._trusted = lambda: True
    written = client.portal.call(state.timeouts.time_out, page["id"])  # type: ignore[union-attr]
    assert written is not None and not written.duplicate
    _drain(client)
    pushes = push_service.wait_for(2)
    told = {}
    for push in pushes:
        side = push.path.rsplit("/", 1)[-1]
        told[side] = phones[side].read(push)
    assert {side: (message["title"], message["body"]) for side, message in told.items()} == {
        side: ("Red wins — Dotfight", "Blue's time ran out.") for side in ("blue", "red")
    }
