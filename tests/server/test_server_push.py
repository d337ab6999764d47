"""Web Push, against a local HTTP server standing in for the push service: the server's VAPID key, the
subscriptions per seat, a push to the seat whose move it became (never the mover), encrypted so that only
that browser reads it, sent off the move's path, and forgotten when the push service says it is gone."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from fastapi.testclient import TestClient
from server_testkit import simple_action

from dotfight.server.app import create_app
from dotfight.server.settings import Settings
from tests.support.push_service import Browser, PushService, Received, push_service_on_loopback, unb64url


def check_vapid(push: Received, server_key: str, audience: str) -> None:
    """Checks the push's `Authorization: vapid t=<JWT>, k=<key>`: the server's key, a valid ES256
    signature by it, the push service's origin as audience, a contact, an expiry to come."""
    scheme, _, fields = push.headers["authorization"].partition(" ")
    assert scheme == "vapid"
    values = dict(part.strip().split("=", 1) for part in fields.split(","))
    assert values["k"] == server_key
    header, claims, signature = values["t"].split(".")
    raw = unb64url(signature)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(server_key))
    public.verify(der, f"{header}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))  # raises if forged
    body = json.loads(unb64url(claims))
    assert body["aud"] == audience and body["sub"].startswith(("mailto:", "https:"))
    assert body["exp"] > time.time()
    assert push.headers["content-encoding"] == "aes128gcm" and int(push.headers["ttl"]) > 0


# --------------------------------------------------------------------------------------------------
# the server


@pytest.fixture
def push_service() -> Iterator[PushService]:
    with push_service_on_loopback() as service:
        yield service


@pytest.fixture
def push_client(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> Iterator[TestClient]:
    monkeypatch.setenv("DOTFIGHT_PUSH_INSECURE_ENDPOINTS", "1")  # the stand-in is plain http on loopback
    # A held push must outlast the moves made while it hangs, however busy the machine running the test.
    monkeypatch.setenv("DOTFIGHT_PUSH_TIMEOUT", "120")
    with TestClient(create_app(make_settings())) as client:
        yield client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def new_page(client: TestClient, mode: str = "link") -> dict[str, Any]:
    response = client.post("/api/pages", json={"preset": "quick", "mode": mode})
    assert response.status_code == 201, response.text
    page: dict[str, Any] = response.json()
    return page


def subscribe(client: TestClient, page: dict[str, Any], side: str, browser: Browser) -> Any:
    return client.post(
        f"/api/pages/{page['id']}/push", json=browser.subscription(), headers=bearer(page["seats"][side])
    )


def red_subscribed(
    client: TestClient, service: PushService, path: str = "push"
) -> tuple[dict[str, Any], Browser]:
    """A new link page whose red seat subscribed at the stand-in's /{path}/red."""
    page = new_page(client)
    red = Browser.at(f"{service.base}/{path}/red")
    assert subscribe(client, page, "red", red).status_code == 201
    return page, red


def red_with_phones(
    client: TestClient, service: PushService, count: int
) -> tuple[dict[str, Any], list[Browser]]:
    """A new link page whose red seat subscribed `count` phones at the stand-in's /push/red-{n}."""
    page = new_page(client)
    phones = [Browser.at(f"{service.base}/push/red-{n}") for n in range(count)]
    for phone in phones:
        assert subscribe(client, page, "red", phone).status_code == 201
    return page, phones


def drain(client: TestClient) -> None:
    """Waits until the server has sent every push it queued."""
    client.portal.call(client.app.state.push.drain)  # type: ignore[union-attr,attr-defined]


def move(client: TestClient, page: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Makes one simple move for the side to act; returns the mover and the snapshot after it."""
    current = client.get(f"/api/pages/{page['id']}").json()
    mover = current["side_to_act"]
    body = {"action": simple_action(current), "version": current["version"]}
    response = client.post(
        f"/api/pages/{page['id']}/actions", json=body, headers=bearer(page["seats"][mover])
    )
    assert response.status_code == 200, response.text
    return mover, client.get(f"/api/pages/{page['id']}").json()


def test_the_server_makes_one_vapid_key_and_keeps_it_across_restarts(
    make_settings: Callable[..., Settings],
) -> None:
    keys = []
    for _ in range(2):
        with TestClient(create_app(make_settings())) as client:
            first = client.get("/api/push/key")
            assert first.status_code == 200 and "max-age" in first.headers["cache-control"]
            assert client.get("/api/push/key").json() == first.json()
            keys.append(first.json()["key"])
    assert keys[0] == keys[1]
    point = unb64url(keys[0])
    assert len(point) == 65 and point[0] == 4  # an uncompressed P-256 point: an applicationServerKey


def test_a_push_reaches_the_seat_whose_move_it_became_and_never_the_mover(
    push_client: TestClient, push_service: PushService
) -> None:
    client = push_client
    page = new_page(client)
    browsers = {side: Browser.at(f"{push_service.base}/push/{side}") for side in ("blue", "red")}
    for side, browser in browsers.items():
        response = subscribe(client, page, side, browser)
        assert response.status_code == 201 and response.json() == {"page": page["id"], "side": side}
    server_key = client.get("/api/push/key").json()["key"]

    expected = 0
    turns_seen = 0
    for _ in range(12):  # quick setup, both ready, then flicks
        before = client.get(f"/api/pages/{page['id']}").json()
        mover, after = move(client, page)
        drain(client)
        if after["side_to_act"] not in (None, mover):
            expected += 1
            pushes = push_service.wait_for(expected)
            push = pushes[-1]
            them = after["side_to_act"]
            assert push.path == f"/push/{them}", (mover, push.path)
            check_vapid(push, server_key, push_service.base)
            assert push.headers["topic"] == page["id"]
            message = browsers[them].read(push)
            assert message["side"] == them and message["page"] == page["id"]
            assert message["url"] == f"/p/{page['id']}" and message["version"] == after["version"]
            assert message["title"] == "Your move — Dotfight"
            with pytest.raises(Exception):  # noqa: B017 — the mover's browser cannot read it
                browsers[mover].read(push)
            if before["phase"] == "play" or after["phase"] == "play":
                turns_seen += 1
                assert "Your turn:" in message["body"]
        assert len(push_service.received) == expected, "a push went to the mover or to nobody's move"
    assert expected >= 6 and turns_seen >= 4


def test_the_end_of_the_page_is_told_to_the_side_that_did_not_end_it(
    push_client: TestClient, push_service: PushService
) -> None:
    client = push_client
    page, red = red_subscribed(client, push_service)
    move(client, page)  # quick setup by blue: still blue's move
    response = client.post(
        f"/api/pages/{page['id']}/actions",
        json={"action": {"type": "resign"}, "version": 1},
        headers=bearer(page["seats"]["blue"]),
    )
    assert response.status_code == 200
    drain(client)
    [push] = push_service.wait_for(1)
    assert red.read(push)["title"] == "Red wins — Dotfight" and red.read(push)["body"] == "Blue resigned."


def test_pushes_leave_the_moves_path_a_stuck_push_service_delays_no_move(
    push_client: TestClient, push_service: PushService
) -> None:
    client = push_client
    page = new_page(client)
    for side in ("blue", "red"):
        assert (
            subscribe(client, page, side, Browser.at(f"{push_service.base}/push/{side}")).status_code == 201
        )
    push_service.hold.clear()  # the push service takes every request and answers none
    # Whether a move passes the turn is the page's dice (a flick may earn another), so the moves go on
    # until three pushes are owed: each seat has one under way and at most one waiting behind it.
    told = {"blue": 0, "red": 0}
    moves = 0
    while sum(min(count, 2) for count in told.values()) < 3:
        mover, after = move(client, page)  # each move is committed and answered while the pushes hang
        moves += 1
        if after["side_to_act"] not in (None, mover):
            told[after["side_to_act"]] += 1
        assert moves < 40 and after["phase"] != "over", told
    assert client.get(f"/api/pages/{page['id']}").json()["version"] == moves
    assert push_service.received == []
    push_service.hold.set()
    drain(client)
    assert len(push_service.wait_for(3, timeout=60)) == 3


def test_an_expired_subscription_is_removed_when_the_push_service_says_gone(
    push_client: TestClient, push_service: PushService
) -> None:
    client = push_client
    page, _ = red_subscribed(client, push_service, "gone")
    move(client, page)  # quick setup
    move(client, page)  # blue ready: red's move — the push service answers 410
    drain(client)
    assert len(push_service.wait_for(1)) == 1
    for _ in range(4):
        move(client, page)
    drain(client)
    assert len(push_service.received) == 1  # never tried again
    # Unsubscribing something already gone removes nothing.
    gone = {"endpoint": f"{push_service.base}/gone/red"}
    response = client.request(
        "DELETE", f"/api/pages/{page['id']}/push", json=gone, headers=bearer(page["seats"]["red"])
    )
    assert response.status_code == 200 and response.json() == {"removed": False}


def test_an_unsubscribed_seat_and_a_seat_watching_the_page_live_get_no_push(
    push_client: TestClient, push_service: PushService
) -> None:
    client = push_client
    page, red = red_subscribed(client, push_service)
    move(client, page)  # quick setup
    with client.websocket_connect(f"/api/pages/{page['id']}/ws") as socket:
        socket.send_json({"type": "hello", "token": page["seats"]["red"], "version": 0})
        assert socket.receive_json()["type"] == "state"
        move(client, page)  # blue ready: red's move, but red has the page open
        drain(client)
        assert push_service.received == []
    response = client.request(
        "DELETE",
        f"/api/pages/{page['id']}/push",
        json={"endpoint": red.endpoint},
        headers=bearer(page["seats"]["red"]),
    )
    assert response.status_code == 200 and response.json() == {"removed": True}
    for _ in range(3):
        move(client, page)
    drain(client)
    assert push_service.received == []


@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        ({"endpoint": "http://push.example/abc"}, 400, "bad_request"),  # production needs https
        ({"keys": {"p256dh": "short", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}, 400, "bad_request"),
        ({"extra": 1}, 400, "bad_request"),
    ],
)
def test_bad_subscriptions_are_refused_with_codes_and_nothing_is_kept(
    client: TestClient, change: dict[str, Any], status: int, code: str
) -> None:
    page = new_page(client)
    body = {**Browser.at("https://push.example/abc").subscription(), **change}
    response = client.post(f"/api/pages/{page['id']}/push", json=body, headers=bearer(page["seats"]["red"]))
    assert response.status_code == status and response.json()["error"]["code"] == code


def test_subscribing_needs_a_seat_of_a_link_or_live_page(client: TestClient) -> None:
    body = Browser.at("https://push.example/abc").subscription()
    page = new_page(client)
    anonymous = client.post(f"/api/pages/{page['id']}/push", json=body)
    assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "bad_token"
    forged = client.post(f"/api/pages/{page['id']}/push", json=body, headers=bearer("x" * 40))
    assert forged.status_code == 401
    local = new_page(client, mode="local")
    refused = client.post(f"/api/pages/{local['id']}/push", json=body, headers=bearer(local["seats"]["blue"]))
    assert refused.status_code == 400 and refused.json()["error"]["reason"] == "no_push"
    unknown = client.post("/api/pages/NoSuchPage/push", json=body, headers=bearer("x" * 40))
    assert unknown.status_code == 404
    assert client.get(f"/api/pages/{page['id']}/push").status_code == 405


def test_a_seat_keeps_its_five_newest_subscriptions_and_one_per_endpoint(
    push_client: TestClient, push_service: PushService
) -> None:
    client = push_client
    page, phones = red_with_phones(client, push_service, 6)
    renewed = Browser.at(phones[5].endpoint)  # the same browser, new keys: renewed, not added
    assert subscribe(client, page, "red", renewed).status_code == 201
    move(client, page)  # quick setup
    move(client, page)  # blue ready: red's move
    drain(client)
    pushes = push_service.wait_for(5)
    assert sorted(push.path for push in pushes) == [f"/push/red-{n}" for n in range(1, 6)]  # the oldest went
    newest = next(push for push in pushes if push.path == "/push/red-5")
    assert renewed.read(newest)["side"] == "red"  # sent with the renewed keys


def test_a_move_with_both_seats_on_the_page_works_out_no_notice(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Presence is asked first: with both seats watching, nobody is absent and no notice text is made."""
    from dotfight.server import push

    made: list[str] = []
    real_notice_for = push.notice_for

    def noting(state: Any, events: Any) -> Any:
        made.append("notice")
        return real_notice_for(state, events)

    monkeypatch.setattr(push, "notice_for", noting)
    with TestClient(create_app(make_settings())) as client:
        page = new_page(client, mode="live")
        move(client, page)  # quick setup, nobody watching: a notice is worked out
        assert made == ["notice"]
        sockets = [client.websocket_connect(f"/api/pages/{page['id']}/ws") for _ in ("blue", "red")]
        with sockets[0] as blue, sockets[1] as red:
            for socket, side in ((blue, "blue"), (red, "red")):
                socket.send_json({"type": "hello", "token": page["seats"][side], "version": 0})
            for socket in (blue, red):  # until both seats' presence is known to the hub
                while (message := socket.receive_json())["type"] != "presence" or not (
                    message["blue"] and message["red"]
                ):
                    pass
            move(client, page)
            move(client, page)
        assert made == ["notice"]


def test_a_seats_devices_are_pushed_to_at_most_two_at_once(
    push_client: TestClient, push_service: PushService
) -> None:
    client = push_client
    page, _ = red_with_phones(client, push_service, 5)
    push_service.hold.clear()  # every push waits for the push service
    move(client, page)  # quick setup
    move(client, page)  # blue ready: red's move, five devices
    deadline = time.monotonic() + 10
    while push_service.open_requests < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)  # a third push under way would have reached the push service by now
    assert push_service.open_requests == 2 and push_service.most_open == 2
    push_service.hold.set()
    drain(client)
    assert sorted(push.path for push in push_service.wait_for(5)) == [f"/push/red-{n}" for n in range(5)]


def test_notices_that_come_while_a_seats_push_is_under_way_are_merged_into_the_newest(
    push_client: TestClient, push_service: PushService
) -> None:
    client = push_client
    page = new_page(client)
    red = Browser.at(f"{push_service.base}/push/red")
    assert subscribe(client, page, "red", red).status_code == 201
    move(client, page)  # quick setup
    push_service.hold.clear()
    told = []
    for _ in range(40):  # blue ready, then play: red is told at every turn of blue's that ends
        mover, after = move(client, page)
        if mover == "blue" and after["side_to_act"] == "red":
            told.append(after["version"])
        if len(told) == 3 or after["side_to_act"] is None:
            break
    assert len(told) == 3
    push_service.hold.set()
    drain(client)
    pushes = push_service.wait_for(2)
    assert [red.read(push)["version"] for push in pushes] == [told[0], told[2]]  # the middle one replaced
    assert len(push_service.received) == 2
