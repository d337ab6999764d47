"""Rematch from either seat and phrases (issue 19, items 5 and 6), over HTTP and real sockets: the offer
heard at once by the other seat, the new page the same page with the colours swapped, each seat given
only its own new seat, at once against Dawood-bot and on one phone, refused to watchers and to pages in
play, one per page, kept across a restart, lasting the model's time (a controllable clock), outside the
page-creation limit, pushed to the other seat; phrases from the list only, capped per side, heard on
every socket, kept with the page, never moving its version."""

from __future__ import annotations

import doctest
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from server_testkit import SocketClient
from websockets.asyncio.client import connect

from dotfight.server import fair_dice, offers
from dotfight.server.app import create_app
from dotfight.server.people.phrases import PHRASE_CAP_PER_SIDE
from dotfight.server.people.rematch import OFFER_LIFETIME_S
from dotfight.server.settings import Settings
from tests.support.push_service import Browser, PushService, push_service_on_loopback
from tests.support.server_process import ServerProcess

Client = TestClient | httpx.Client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def new_page(http: Client, **body: Any) -> dict[str, Any]:
    response = http.post("/api/pages", json={"preset": "quick", "mode": "link", **body})
    assert response.status_code == 201, response.text
    page: dict[str, Any] = response.json()
    return page


def finished_page(http: Client, **body: Any) -> dict[str, Any]:
    """A new page that blue resigned at once (over: a rematch may be offered)."""
    page = new_page(http, **body)
    token = page["seats"]["blue"]
    response = http.post(
        f"/api/pages/{page['id']}/actions",
        json={"action": {"type": "resign"}, "version": 0},
        headers=bearer(token),
    )
    assert response.status_code == 200, response.text
    return page


def rematch(http: Client, page: dict[str, Any], method: str, side: str | None = None) -> httpx.Response:
    headers = bearer(page["seats"][side]) if side else {}
    return http.request(method, f"/api/pages/{page['id']}/rematch", headers=headers)


def answered(response: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    return body


def refused(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code, error
    return error


def page_of(http: Client, page_id: str, token: str | None = None) -> dict[str, Any]:
    return answered(http.get(f"/api/pages/{page_id}", headers=bearer(token) if token else {}))


@asynccontextmanager
async def seat_socket(server: ServerProcess, page_id: str, token: str | None) -> AsyncIterator[SocketClient]:
    """A socket on the page, greeted (with the seat's token, or watching)."""
    async with connect(server.ws_url(page_id)) as connection:
        client = SocketClient(connection)
        greeted = await client.hello(token)
        assert greeted["type"] == "state", greeted
        yield client


async def next_of(socket: SocketClient, kind: str) -> dict[str, Any]:
    """The next message of a kind (the events of the resignation, say, are let by)."""
    while True:
        message = await socket.receive()
        if message["type"] == kind:
            return message


# --------------------------------------------------------------------------------------------------
# the rematch over real sockets: the invited seat of a Quick link page offers


async def test_red_offers_on_a_quick_link_page_blue_hears_it_accepts_and_each_gets_only_its_own_seat(
    live_server: ServerProcess,
) -> None:
    http = live_server.http
    clock = {"per_move_s": 86_400}
    page = new_page(http, clock=clock)
    old_id, seats = page["id"], page["seats"]
    async with (
        seat_socket(live_server, old_id, seats["blue"]) as blue,
        seat_socket(live_server, old_id, seats["red"]) as red,
    ):
        answered(http.post(f"/api/pages/{old_id}/actions", json={"action": {"type": "resign"}, "version": 0},
                           headers=bearer(seats["blue"])))  # fmt: skip
        offered = answered(rematch(http, page, "POST", "red"))
        assert offered == {"offered_by": "red", "page": None}
        assert await next_of(blue, "rematch") == {"type": "rematch", "offered_by": "red", "page": None}
        assert await next_of(red, "rematch") == {"type": "rematch", "offered_by": "red", "page": None}
        # Opening the page later, blue (and anyone) reads the offer.
        assert answered(rematch(http, page, "GET")) == {"offered_by": "red", "page": None}
        assert answered(rematch(http, page, "GET", "blue")) == {"offered_by": "red", "page": None}

        accepted = answered(rematch(http, page, "POST", "blue"))
        new_id = accepted["page"]
        assert accepted == {"offered_by": "red", "page": new_id} and new_id != old_id
        for socket in (blue, red):
            assert await next_of(socket, "rematch") == {
                "type": "rematch",
                "offered_by": "red",
                "page": new_id,
            }

    old = page_of(http, old_id)
    as_red = answered(rematch(http, page, "GET", "red"))
    as_blue = answered(rematch(http, page, "GET", "blue"))
    # Colours swapped: the invited red is blue now, and each hears only its own token.
    assert as_red["side"] == "blue" and as_blue["side"] == "red"
    assert as_red["seat"] != as_blue["seat"]
    assert as_blue["seat"] not in str(as_red) and as_red["seat"] not in str(as_blue)
    assert seats["blue"] not in str(as_red) and seats["red"] not in str(as_blue)
    assert as_red["links"]["blue"].endswith(f"/p/{new_id}#seat={as_red['seat']}")
    assert as_red["links"]["red"] is None and as_red["links"]["watch"].endswith(f"/p/{new_id}")
    assert as_blue["links"]["blue"] is None and as_blue["links"]["red"].endswith(f"#seat={as_blue['seat']}")
    # Without a token, and with a token of no seat: where it stands, no seat.
    assert answered(rematch(http, page, "GET")) == {"offered_by": "red", "page": new_id}
    stranger = http.get(f"/api/pages/{old_id}/rematch", headers=bearer("not-a-seat"))
    assert answered(stranger) == {"offered_by": "red", "page": new_id}
    # Each new token is a seat of the new page, the side the GET said.
    assert page_of(http, new_id, as_red["seat"])["seat"] == "blue"
    assert page_of(http, new_id, as_blue["seat"])["seat"] == "red"
    new = page_of(http, new_id)
    assert (new["rules"], new["mode"], new["phase"], new["version"]) == (old["rules"], "link", "bases", 0)
    assert new["rules"]["preset"] == "quick" and new["seed_sha256"] != old["seed_sha256"]
    [summary] = answered(http.get("/api/pages", params={"ids": new_id}))  # type: ignore[arg-type]
    assert summary["preset"] == "quick" and summary["clock"] == clock


async def test_phrases_are_heard_on_every_socket_kept_with_the_page_and_never_move_it(
    live_server: ServerProcess,
) -> None:
    http = live_server.http
    page = new_page(http, mode="live")
    page_id, seats = page["id"], page["seats"]
    async with (
        seat_socket(live_server, page_id, seats["blue"]) as blue,
        seat_socket(live_server, page_id, seats["red"]) as red,
        seat_socket(live_server, page_id, None) as watcher,
    ):
        await red.send({"type": "say", "phrase": "good_luck"})
        heard = [await next_of(socket, "said") for socket in (blue, red, watcher)]
        assert all(message == heard[0] for message in heard)
        assert (
            heard[0]["side"] == "red" and heard[0]["phrase"] == "good_luck" and heard[0]["at"].endswith("Z")
        )
        said = http.post(
            f"/api/pages/{page_id}/say", json={"phrase": "have_fun"}, headers=bearer(seats["blue"])
        )
        kept = answered(said)
        for socket in (blue, red, watcher):
            assert await next_of(socket, "said") == {
                "type": "said", "side": "blue", "phrase": "have_fun", "at": kept["at"],
            }  # fmt: skip
        # Refusals go to the sender alone, and keep nothing.
        await red.send({"type": "say", "phrase": "you are bad"})
        error = await red.receive()
        assert (
            error["type"] == "error"
            and error["code"] == "bad_request"
            and error["reason"] == "unknown_phrase"
        )
        await watcher.send({"type": "say", "phrase": "hello"})
        assert (await watcher.receive())["code"] == "bad_token"
    listed = answered(http.get(f"/api/pages/{page_id}/said"))["said"]
    assert [(p["side"], p["phrase"], p["version"]) for p in listed] == [
        ("red", "good_luck", 0),
        ("blue", "have_fun", 0),
    ]
    assert listed[0]["at"] == heard[0]["at"] and listed[1] == kept
    assert page_of(http, page_id)["version"] == 0


def test_two_accepts_at_once_and_two_offers_at_once_make_one_page(live_server: ServerProcess) -> None:
    http = live_server.http
    # Red's accept sent twice at once (a retry): one page, both answers name it.
    page = finished_page(http)
    answered(rematch(http, page, "POST", "blue"))
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: answered(rematch(http, page, "POST", "red")), range(4)))
    assert len({answer["page"] for answer in answers}) == 1 and answers[0]["page"] is not None
    # Both seats tapping Rematch at once: one offer, the other's becomes its accept.
    page = finished_page(http)
    with ThreadPoolExecutor(2) as pool:
        both = list(pool.map(lambda side: answered(rematch(http, page, "POST", side)), ["blue", "red"]))
    made = answered(rematch(http, page, "GET"))["page"]
    assert made is not None and {answer["page"] for answer in both} <= {made, None}
    assert answered(rematch(http, page, "POST", "blue"))["page"] == made


# --------------------------------------------------------------------------------------------------
# in process: a controllable clock, restarts, limits, pushes


@pytest.fixture
def app_client(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings())) as client:
        yield client


def set_clock(client: TestClient, seconds: float) -> None:
    client.app.state.services.offers.clock = lambda: seconds  # type: ignore[attr-defined]


def test_a_bot_page_and_a_one_phone_page_rematch_at_once_same_strength_never_the_chosen_seed(
    app_client: TestClient,
) -> None:
    http = app_client
    page = finished_page(http, mode="bot", bot={"strength": "hard", "side": "red"})
    made = answered(rematch(http, page, "POST", "blue"))
    assert made["page"] is not None and made["offered_by"] == "blue"
    mine = answered(rematch(http, page, "GET", "blue"))
    assert mine["side"] == "red" and mine["links"]["blue"] is None
    new = page_of(http, made["page"], mine["seat"])
    assert new["bot"] == {"side": "blue", "strength": "hard"} and new["seat"] == "red"
    assert new["rules"] == page_of(http, page["id"])["rules"]

    local = finished_page(http, mode="local", seed=5)
    made = answered(rematch(http, local, "POST", "blue"))
    assert made["page"] is not None
    mine = answered(rematch(http, local, "GET", "red"))  # one token holds both seats
    assert mine["side"] == "both" and mine["links"]["blue"] == mine["links"]["red"]
    new = page_of(http, made["page"], mine["seat"])
    assert new["seat"] == "both" and new["mode"] == "local"
    assert new["seed_sha256"] != fair_dice.seed_commitment(5)
    # Its one rematch: tapping again names the same page.
    assert answered(rematch(http, local, "POST", "blue"))["page"] == made["page"]


def test_watchers_and_pages_in_play_are_refused_and_nothing_is_written(app_client: TestClient) -> None:
    http = app_client
    page = new_page(http)
    refused(rematch(http, page, "POST", "red"), 422, "illegal_action")
    assert answered(rematch(http, page, "GET")) == {"offered_by": None, "page": None}
    refused(rematch(http, page, "POST"), 401, "bad_token")
    refused(http.post(f"/api/pages/{page['id']}/rematch", headers=bearer("a-watcher")), 401, "bad_token")
    refused(http.delete(f"/api/pages/{page['id']}/rematch"), 401, "bad_token")
    refused(http.post("/api/pages/nosuchpage/rematch", headers=bearer("x")), 404, "not_found")
    finished = finished_page(http)
    refused(rematch(http, finished, "POST"), 401, "bad_token")
    assert answered(rematch(http, finished, "GET")) == {"offered_by": None, "page": None}


def test_a_page_has_one_rematch_declined_withdrawn_or_made(app_client: TestClient) -> None:
    http = app_client
    page = finished_page(http)
    answered(rematch(http, page, "POST", "red"))
    assert answered(rematch(http, page, "POST", "red")) == {"offered_by": "red", "page": None}  # repeated
    assert answered(rematch(http, page, "DELETE", "blue")) == {"offered_by": None, "page": None}  # declined
    answered(rematch(http, page, "POST", "blue"))
    assert answered(rematch(http, page, "DELETE", "blue")) == {"offered_by": None, "page": None}  # withdrawn
    answered(rematch(http, page, "POST", "red"))
    made = answered(rematch(http, page, "POST", "blue"))["page"]
    for side in ("blue", "red"):
        assert answered(rematch(http, page, "POST", side)) == {"offered_by": "red", "page": made}
        error = refused(rematch(http, page, "DELETE", side), 422, "illegal_action")
        assert error["reason"] == "rematch_made"
    assert answered(rematch(http, page, "GET")) == {"offered_by": "red", "page": made}


def test_an_offer_lasts_the_models_time(app_client: TestClient) -> None:
    http = app_client
    live = finished_page(http, mode="live")
    set_clock(http, 1_000.0)
    answered(rematch(http, live, "POST", "red"))
    set_clock(http, 1_000.0 + OFFER_LIFETIME_S["live"] - 1)
    assert answered(rematch(http, live, "GET")) == {"offered_by": "red", "page": None}
    set_clock(http, 1_000.0 + OFFER_LIFETIME_S["live"])
    assert answered(rematch(http, live, "GET")) == {"offered_by": None, "page": None}
    # Blue's tap after red's offer ran out is an offer of its own, not an accept.
    assert answered(rematch(http, live, "POST", "blue")) == {"offered_by": "blue", "page": None}

    link = finished_page(http)
    set_clock(http, 2_000.0)
    answered(rematch(http, link, "POST", "blue"))
    set_clock(http, 2_000.0 + OFFER_LIFETIME_S["link"] - 60)  # six days and more later: still standing
    assert answered(rematch(http, link, "POST", "red"))["page"] is not None


def test_an_offer_survives_a_restart(make_settings: Callable[..., Settings]) -> None:
    settings = make_settings()
    with TestClient(create_app(settings)) as http:
        page = finished_page(http)
        answered(rematch(http, page, "POST", "red"))
    with TestClient(create_app(settings)) as http:
        assert answered(rematch(http, page, "GET")) == {"offered_by": "red", "page": None}
        made = answered(rematch(http, page, "POST", "blue"))
        assert made["page"] is not None and answered(rematch(http, page, "GET", "red"))["side"] == "blue"


def test_an_offer_survives_a_killed_server(fresh_server: ServerProcess) -> None:
    fresh_server.start()
    page = finished_page(fresh_server.http)
    answered(rematch(fresh_server.http, page, "POST", "red"))
    fresh_server.kill()  # SIGKILL: nothing is written on the way out
    fresh_server.start()
    assert answered(rematch(fresh_server.http, page, "GET", "blue")) == {"offered_by": "red", "page": None}
    assert answered(rematch(fresh_server.http, page, "POST", "blue"))["page"] is not None


def test_a_rematch_is_outside_the_page_creation_limit(make_settings: Callable[..., Settings]) -> None:
    with TestClient(create_app(make_settings(page_creation_burst=2, page_creations_per_minute=1))) as http:
        pages = [finished_page(http, mode="bot"), finished_page(http)]
        refused(http.post("/api/pages", json={"mode": "link"}), 429, "rate_limited")
        assert answered(rematch(http, pages[0], "POST", "blue"))["page"] is not None
        answered(rematch(http, pages[1], "POST", "red"))
        assert answered(rematch(http, pages[1], "POST", "blue"))["page"] is not None
        refused(http.post("/api/pages", json={"mode": "link"}), 429, "rate_limited")


def test_a_chain_of_rematches_is_held_to_a_rate_of_its_own(make_settings: Callable[..., Settings]) -> None:
    with TestClient(create_app(make_settings(rematch_burst=2, rematches_per_minute=0.01))) as http:
        page = finished_page(http, mode="local")
        for _ in range(2):  # a rematch of the rematch, and so on: each a page
            made = answered(rematch(http, page, "POST", "blue"))["page"]
            token = answered(rematch(http, page, "GET", "blue"))["seat"]
            page = {"id": made, "seats": {"blue": token}}
            resign = {"action": {"type": "resign"}, "version": 0}
            answered(http.post(f"/api/pages/{made}/actions", json=resign, headers=bearer(token)))
        error = refused(rematch(http, page, "POST", "blue"), 429, "rate_limited")
        assert "rematches" in error["message"]
        assert answered(rematch(http, page, "GET")) == {"offered_by": None, "page": None}
        new_page(http)  # the creation limit is its own


def test_phrases_from_the_list_only_capped_per_side_and_only_by_seats_of_two_people(
    app_client: TestClient,
) -> None:
    http = app_client
    page = new_page(http)
    page_id, seats = page["id"], page["seats"]

    def say(phrase: object, token: str | None) -> httpx.Response:
        return http.post(
            f"/api/pages/{page_id}/say", json={"phrase": phrase}, headers=bearer(token) if token else {}
        )

    assert refused(say("you are bad", seats["red"]), 400, "bad_request")["reason"] == "unknown_phrase"
    refused(say(5, seats["red"]), 400, "bad_request")
    refused(say("hello", None), 401, "bad_token")
    refused(say("hello", "a-watcher"), 401, "bad_token")
    assert answered(http.get(f"/api/pages/{page_id}/said")) == {"said": []}
    for _ in range(PHRASE_CAP_PER_SIDE):
        answered(say("nice_shot", seats["red"]))
    refused(say("thanks", seats["red"]), 429, "rate_limited")
    answered(say("thanks", seats["blue"]))  # the cap is per side
    said = answered(http.get(f"/api/pages/{page_id}/said"))["said"]
    assert [p["side"] for p in said] == ["red"] * PHRASE_CAP_PER_SIDE + ["blue"]
    assert page_of(http, page_id)["version"] == 0
    refused(http.get("/api/pages/nosuchpage/said"), 404, "not_found")
    for mode in ("bot", "local"):
        other = new_page(http, mode=mode)
        response = http.post(f"/api/pages/{other['id']}/say", json={"phrase": "hello"},
                             headers=bearer(other["seats"]["blue"]))  # fmt: skip
        refused(response, 401, "bad_token")


def test_a_socket_says_nothing_before_its_hello_nor_from_one_phone(app_client: TestClient) -> None:
    http = app_client
    for mode, seat in (("link", "red"), ("local", "blue")):
        page = new_page(http, mode=mode)
        with http.websocket_connect(f"/api/pages/{page['id']}/ws") as socket:
            socket.send_json({"type": "say", "phrase": "hello"})
            assert socket.receive_json()["code"] == "bad_request"  # hello first
            socket.send_json({"type": "hello", "token": page["seats"][seat]})
            assert socket.receive_json()["type"] == "state"
            assert socket.receive_json()["type"] == "presence"
            socket.send_json({"type": "say", "phrase": "hello", "extra": 1})
            assert socket.receive_json()["code"] == "bad_request"
            socket.send_json({"type": "say", "phrase": "hello"})
            if mode == "local":  # nobody else to hear it
                error = socket.receive_json()
                assert (error["code"], error["reason"]) == ("bad_token", "no_listener")
            else:
                assert socket.receive_json()["type"] == "said"
        expected = [] if mode == "local" else [("red", "hello")]
        said = answered(http.get(f"/api/pages/{page['id']}/said"))["said"]
        assert [(p["side"], p["phrase"]) for p in said] == expected


@pytest.fixture
def push_service() -> Iterator[PushService]:
    with push_service_on_loopback() as service:
        yield service


def test_the_other_seat_is_pushed_the_offer_and_the_offerer_the_acceptance(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch, push_service: PushService
) -> None:
    monkeypatch.setenv("DOTFIGHT_PUSH_INSECURE_ENDPOINTS", "1")  # the stand-in is plain http on loopback
    with TestClient(create_app(make_settings())) as http:
        page = finished_page(http)
        phones = {side: Browser.at(f"{push_service.base}/push/{side}") for side in ("blue", "red")}
        for side, phone in phones.items():
            subscribed = http.post(f"/api/pages/{page['id']}/push", json=phone.subscription(),
                                   headers=bearer(page["seats"][side]))  # fmt: skip
            assert subscribed.status_code == 201
        answered(rematch(http, page, "POST", "red"))
        http.portal.call(http.app.state.push.drain)  # type: ignore[attr-defined]
        [offer] = push_service.wait_for(1)
        told = phones["blue"].read(offer)
        assert offer.path == "/push/blue" and told["title"] == "Rematch? — Dotfight"
        assert told["body"] == "Red offers a rematch. Open the page to accept."
        assert told["url"] == f"/p/{page['id']}"
        answered(rematch(http, page, "POST", "blue"))
        http.portal.call(http.app.state.push.drain)  # type: ignore[attr-defined]
        accepted = push_service.wait_for(2)[-1]
        assert accepted.path == "/push/red"
        assert phones["red"].read(accepted)["body"] == "Blue accepted your rematch: you play blue."
        assert len(push_service.received) == 2


def test_a_seat_with_the_page_open_is_told_on_its_socket_not_pushed(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    with TestClient(create_app(make_settings())) as http:
        page = finished_page(http)
        told: list[Any] = []
        monkeypatch.setattr(http.app.state.push, "_queue", lambda *args: told.append(args))  # type: ignore[attr-defined]
        with http.websocket_connect(f"/api/pages/{page['id']}/ws") as blue:
            blue.send_json({"type": "hello", "token": page["seats"]["blue"]})
            assert blue.receive_json()["type"] == "state"
            assert blue.receive_json()["type"] == "presence"
            answered(rematch(http, page, "POST", "red"))
            assert blue.receive_json() == {"type": "rematch", "offered_by": "red", "page": None}
        assert told == []
        answered(rematch(http, page, "DELETE", "red"))
        answered(rematch(http, page, "POST", "red"))
        assert [args[:2] for args in told] == [(page["id"], "blue")]


def test_the_examples_of_the_offers_module_run() -> None:
    result = doctest.testmod(offers, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
