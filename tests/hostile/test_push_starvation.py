"""Issue 18, item 4: one seat's dead push services delay nobody else's pushes. Attackers subscribe their
seats to push services that take the connection and never answer; with twelve such deliveries under
way a victim's subscription is stored at once and its push still leaves within 2 s; and an endpoint
that keeps not answering is forgotten."""

from __future__ import annotations

import time
from typing import Any

from tests.hostile.conftest import StartServer
from tests.support.page_client import create_page, snapshot
from tests.support.players import nearest_snipe_action
from tests.support.push_service import (
    Browser,
    PushService,
    SilentService,
    make_it_reds_move,
    push_service_on_loopback,
    silent_service_on_loopback,
    stored_endpoints,
    subscribe_seat,
)
from tests.support.server_process import ServerProcess

ATTACKERS = 12  # the figure: 111.5 s for a victim's push behind 12 attacking deliveries
ENDPOINTS_PER_SEAT = 5  # the most a seat keeps
PUSH_ENV = {"DOTFIGHT_PUSH_INSECURE_ENDPOINTS": "1", "DOTFIGHT_HTTP_REQUEST_BURST": "1000"}


def victim_timings(
    server: ServerProcess, service: PushService, silent: SilentService, *, wait_s: float
) -> tuple[float, float]:
    """Starts `ATTACKERS` deliveries to silent push services, then times a victim's subscription and the
    victim's push (from its move's answer to the push service's receipt); returns both in seconds."""
    attackers = [create_page(server, preset="quick", mode="link") for _ in range(ATTACKERS)]
    for number, page in enumerate(attackers):
        for endpoint in range(ENDPOINTS_PER_SEAT):
            silent_browser = Browser.at(f"{silent.base}/attacker-{number}/{endpoint}")
            assert subscribe_seat(server, page, "red", silent_browser.subscription()).status_code == 201
    victim = create_page(server, preset="quick", mode="link")
    for page in attackers:
        make_it_reds_move(server, page)  # a delivery to five silent push services
    deadline = time.monotonic() + 10
    while len(silent.connections) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert silent.connections, "the attacking deliveries never reached their push services"

    started = time.monotonic()
    answer = subscribe_seat(
        server, victim, "red", Browser.at(f"{service.base}/victim").subscription(), wait_s
    )
    subscribed = time.monotonic() - started
    assert answer.status_code == 201, answer.text
    make_it_reds_move(server, victim)
    moved = time.monotonic()
    [push] = service.wait_for(1, timeout=wait_s)
    assert push.path == "/victim"
    return subscribed, time.monotonic() - moved


def test_a_victims_push_leaves_at_once_behind_twelve_deliveries_to_silent_push_services(
    start_server: StartServer,
) -> None:
    with push_service_on_loopback() as service, silent_service_on_loopback() as silent:
        server = start_server(extra_env=PUSH_ENV)  # the deadlines and limits as they ship
        subscribed, pushed = victim_timings(server, service, silent, wait_s=30)
        assert subscribed < 1.0, f"subscribing waited {subscribed:.1f} s behind the deliveries"
        assert pushed < 2.0, f"the victim's push left after {pushed:.1f} s"
        assert server.http.get("/api/health").status_code == 200


def red_notices(server: ServerProcess, page: dict[str, Any], service: PushService, count: int) -> None:
    """Plays a link page (both seats from here) until red has been told `count` times that it is its
    move, waiting for each push to reach `service` before going on (so no two are ever merged)."""
    told = len(service.received)
    for _ in range(200):
        if told >= count:
            return
        current = snapshot(server, page["id"])
        mover = current["side_to_act"]
        assert mover is not None, "the page ended before red was told enough"
        answer = server.http.post(
            f"/api/pages/{page['id']}/actions",
            json={"action": nearest_snipe_action(current), "version": current["version"]},
            headers={"Authorization": f"Bearer {page['seats'][mover]}"},
        )
        assert answer.status_code == 200, answer.text
        if mover == "blue" and snapshot(server, page["id"])["side_to_act"] == "red":
            told += 1
            service.wait_for(told)
    raise AssertionError("red was not told often enough")


def test_a_push_service_that_keeps_not_answering_is_forgotten(start_server: StartServer) -> None:
    with push_service_on_loopback() as service, silent_service_on_loopback() as silent:
        server = start_server(extra_env={**PUSH_ENV, "DOTFIGHT_PUSH_TIMEOUT": "0.5"})
        page = create_page(server, preset="quick", mode="link")
        dead, alive = f"{silent.base}/dead", f"{service.base}/alive"
        for endpoint in (dead, alive):
            assert subscribe_seat(server, page, "red", Browser.at(endpoint).subscription()).status_code == 201
        red_notices(server, page, service, 3)  # three pushes the dead push service leaves unanswered
        deadline = time.monotonic() + 10
        while dead in stored_endpoints(server, page["id"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert stored_endpoints(server, page["id"]) == [alive]
        assert len(silent.connections) == 3
        red_notices(server, page, service, 4)
        assert len(silent.connections) == 3, "a forgotten endpoint was pushed to again"
