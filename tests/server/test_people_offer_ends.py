"""A rematch offer's end is told (issue 19, item 5): when a standing offer's lifetime ends, both seats'
sockets hear `{type: "rematch", offered_by: null, page: null, ended: true}` — from the process's one alarm,
armed by its poll of the earliest offers' ends, so a process started after the offer (a restart) tells
it too — and an offer withdrawn, made again or accepted meanwhile is not told as ended."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient
from starlette.testclient import WebSocketTestSession

from dotfight.server.app import create_app
from dotfight.server.people.rematch import OFFER_LIFETIME_S
from dotfight.server.settings import Settings
from tests.server.test_people_offers import answered, finished_page, rematch, set_clock

T = 1_796_083_200.0
LIVE_S = OFFER_LIFETIME_S["live"]
ENDED = {"type": "rematch", "offered_by": None, "page": None, "ended": True}


def greeted(socket: WebSocketTestSession, token: str) -> None:
    socket.send_json({"type": "hello", "token": token})
    while socket.receive_json()["type"] != "presence":  # the state, then the presence
        pass


def next_of(socket: WebSocketTestSession, *kinds: str) -> dict[str, Any]:
    while True:
        message: dict[str, Any] = socket.receive_json()
        if message["type"] in kinds:
            return message


def at(client: TestClient, seconds: float) -> None:
    """Sets the server's time (the offers' and the alarm's authority) to `seconds`."""
    set_clock(client, seconds)
    client.app.state.services.authority.now = lambda: seconds  # type: ignore[attr-defined]


def poll(client: TestClient) -> None:
    """Reads the earliest offers' ends as the process does every poll."""
    client.portal.call(client.app.state.timeouts.poll)  # type: ignore[attr-defined,union-attr]


def driven_by_hand(client: TestClient) -> None:
    """Stops the process's own alarm: the test runs what it would (`poll`, `end_due`) at the times it
    sets. The alarm waits on the wall clock, which is past T + LIVE_S, so left running it fired each end
    the poll armed at once, and its telling raced the test's own `end_due` (on a loaded CI run the phrase
    said after the end came first)."""
    client.portal.call(client.app.state.timeouts._alarm.stop)  # type: ignore[attr-defined,union-attr]


def end_due(client: TestClient, page_id: str) -> None:
    """Runs what the process's alarm runs for the end of the page's offer."""
    timeouts = client.app.state.timeouts  # type: ignore[attr-defined]
    client.portal.call(timeouts._due, f"offer:{page_id}")  # type: ignore[union-attr]


def say(client: TestClient, page: dict[str, Any], side: str) -> None:
    """A phrase: what a socket hears after it shows that nothing came before."""
    headers = {"Authorization": f"Bearer {page['seats'][side]}"}
    answered(client.post(f"/api/pages/{page['id']}/say", json={"phrase": "good_game"}, headers=headers))


def test_an_offer_running_out_is_told_to_both_seats_even_after_a_restart(
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings()
    with TestClient(create_app(settings)) as client:
        page = finished_page(client, mode="live")
        at(client, T)
        answered(rematch(client, page, "POST", "red"))
    # The server restarts; both phones come back to the page.
    with TestClient(create_app(settings)) as client:
        driven_by_hand(client)
        page_id, seats = page["id"], page["seats"]
        with (
            client.websocket_connect(f"/api/pages/{page_id}/ws") as blue,
            client.websocket_connect(f"/api/pages/{page_id}/ws") as red,
        ):
            greeted(blue, seats["blue"])
            greeted(red, seats["red"])
            at(client, T + 1)
            poll(client)
            at(client, T + LIVE_S - 1)
            end_due(client, page_id)  # woken early: nothing is told, the alarm is set again
            say(client, page, "blue")
            for socket in (blue, red):
                assert next_of(socket, "rematch", "said")["type"] == "said"
            at(client, T + LIVE_S)
            end_due(client, page_id)
            say(client, page, "red")  # heard after the end (a server that tells none fails, not hangs)
            for socket in (blue, red):
                assert next_of(socket, "rematch", "said") == ENDED
        assert answered(rematch(client, page, "GET")) == {"offered_by": None, "page": None}
        # Blue's tap now is an offer of its own.
        assert answered(rematch(client, page, "POST", "blue")) == {"offered_by": "blue", "page": None}


def test_an_offer_withdrawn_or_accepted_is_not_told_as_ended(make_settings: Callable[..., Settings]) -> None:
    with TestClient(create_app(make_settings())) as client:
        driven_by_hand(client)
        withdrawn, accepted = finished_page(client, mode="live"), finished_page(client, mode="live")
        at(client, T)
        for page in (withdrawn, accepted):
            answered(rematch(client, page, "POST", "red"))
        poll(client)
        answered(rematch(client, withdrawn, "DELETE", "red"))
        made = answered(rematch(client, accepted, "POST", "blue"))["page"]
        with (
            client.websocket_connect(f"/api/pages/{withdrawn['id']}/ws") as one,
            client.websocket_connect(f"/api/pages/{accepted['id']}/ws") as other,
        ):
            greeted(one, withdrawn["seats"]["blue"])
            greeted(other, accepted["seats"]["blue"])
            at(client, T + LIVE_S)
            for page in (withdrawn, accepted):
                end_due(client, page["id"])
                say(client, page, "red")
            assert next_of(one, "rematch", "said")["type"] == "said"
            assert next_of(other, "rematch", "said")["type"] == "said"
        assert answered(rematch(client, accepted, "GET"))["page"] == made
