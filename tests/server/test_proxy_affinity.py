"""Page affinity through the deploy recipe's nginx (issue 22, item 1), without Docker: a real nginx from
Debian's packages, configured from deploy/nginx.conf (`tests/support/nginx_proxy.py`: a loopback
listener, no TLS, its own prefix), in front of two `dotfight serve` processes on one throwaway
PostgreSQL database. Every request and socket naming a page lands on one process; requests naming no
page are balanced; killing the process that holds a page moves it, and both seats reconnect through
nginx to the other process, catch up and play on with no acknowledged move lost; the recipe's edge
limits answer before any instance does.

Which process answered is nginx's own word: the tests' config adds `$upstream_addr` as a response header
(the recipe itself does not), so the server needs no change to be told apart.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.store.conftest import PostgresCluster, postgres_cluster  # noqa: F401  (the fixture)
from tests.support.nginx_proxy import UPSTREAM_HEADER, NginxProxy, find_nginx, page_paths
from tests.support.page_client import create_page, snapshot
from tests.support.players import nearest_snipe_action
from tests.support.server_process import RELAXED_ACTION_BUDGET, ServerProcess

# Generous: the machine is shared.
HEARD_WITHIN_S = 20.0
SERVER_ENV = {
    **RELAXED_ACTION_BUDGET,
    "DOTFIGHT_PAGE_CREATION_BURST": "1000",
    "DOTFIGHT_WS_MESSAGES_PER_SECOND": "10000",
    "DOTFIGHT_WS_MESSAGE_BURST": "10000",
}
# deploy/nginx.conf's page creation per address: `limit_req … burst=20` on top of the first request.
CREATION_BURST = 20
JSON = {"Content-Type": "application/json"}
# Made-up page ids: each names a page to nginx (the app answers 404), so the ring's spread is seen.
MADE_UP_PAGES = [f"spread{number}" for number in range(40)]


class HeaderLookup(Protocol):
    """httpx's and websockets' headers alike."""

    def get(self, key: str) -> str | None: ...


def answered_by(headers: HeaderLookup) -> str:
    """The instance ("127.0.0.1:port") that gave the answer: the last of `$upstream_addr`'s list (nginx
    names every instance it tried, a failed one first)."""
    value = headers.get(UPSTREAM_HEADER)
    assert value, f"no {UPSTREAM_HEADER} header: the answer did not come from an instance"
    last: str = value.replace(" : ", ", ").split(", ")[-1]
    return last


@dataclass
class Stack:
    """nginx in front of two `dotfight serve` processes on one database, by their upstream address."""

    proxy: NginxProxy
    servers: dict[str, ServerProcess]

    def holder(self, page_id: str) -> str:
        """The instance nginx sends the page's snapshot request to."""
        return answered_by(self.proxy.http.get(f"/api/pages/{page_id}").headers)

    def other_than(self, address: str) -> str:
        (other,) = set(self.servers) - {address}
        return other


@pytest.fixture
def stack(postgres_cluster: PostgresCluster, tmp_path: Path) -> Iterator[Stack]:  # noqa: F811
    if find_nginx() is None:
        pytest.skip("nginx is not installed: `apt-get install nginx-light` (scripts/test.sh does it)")
    url = postgres_cluster.new_database()
    servers = [
        ServerProcess(
            url,
            tmp_path / f"server-{name}.log",
            extra_args=["--forwarded-allow-ips", "127.0.0.1"],  # as deploy/compose.yaml runs them
            extra_env=SERVER_ENV,
            start_timeout_s=60,
        )
        for name in ("a", "b")
    ]
    proxy = NginxProxy([f"127.0.0.1:{server.port}" for server in servers], tag_upstream=True)
    try:
        servers[0].start()  # one at a time: both would migrate at once otherwise (tested elsewhere)
        servers[1].start()
        proxy.start()
        yield Stack(proxy, {f"127.0.0.1:{server.port}": server for server in servers})
    finally:
        proxy.stop()
        for server in servers:
            server.stop()


class Seat:
    """One seat's page socket through the proxy, read on the test's own thread as it waits; like the
    browser it says in its hello the version it holds, and is caught up from there."""

    def __init__(self, proxy: NginxProxy, page_id: str, token: str, version: int = 0) -> None:
        self.connection: ClientConnection = connect(
            proxy.ws_url(page_id), open_timeout=HEARD_WITHIN_S, legacy=True
        )
        assert self.connection.response is not None
        self.instance = answered_by(self.connection.response.headers)
        self.messages: list[dict[str, Any]] = []
        self.version = version
        self.connection.send(json.dumps({"type": "hello", "token": token, "version": version}))
        self.wait_for(lambda message: message["type"] in ("state", "events"))

    def _take(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        if message["type"] == "state":
            self.version = message["snapshot"]["version"]
        elif message["type"] == "events":
            self.version = max(self.version, message["version"])

    def wait_for(self, test: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """Reads until a message passing `test` (the first since the socket opened) has come."""
        deadline = time.monotonic() + HEARD_WITHIN_S
        while True:
            for message in self.messages:
                if test(message):
                    return message
            left = deadline - time.monotonic()
            assert left > 0, f"not heard in time; heard {self.messages[-5:]}"
            try:
                self._take(json.loads(self.connection.recv(timeout=left)))
            except TimeoutError:
                continue

    def reach(self, version: int) -> None:
        """Reads until the seat holds `version` (its catch-up, or the move's events, came)."""
        self.wait_for(lambda _message: self.version >= version)

    def act(self, action: dict[str, Any], version: int, move_id: str) -> None:
        self.connection.send(
            json.dumps({"type": "action", "action": action, "version": version, "move_id": move_id})
        )

    def ack(self, move_id: str) -> int:
        """Waits for the answer to `move_id`; returns the version it acknowledged (fails on an error)."""
        answer = self.wait_for(lambda m: m.get("move_id") == move_id and m["type"] in ("ack", "error"))
        assert answer["type"] == "ack", answer
        version: int = answer["version"]
        return version

    def closed_by_the_server(self) -> bool:
        """Reads what is left; tells whether the connection is gone (its instance died)."""
        try:
            self._take(json.loads(self.connection.recv(timeout=HEARD_WITHIN_S)))
        except ConnectionClosed:
            return True
        except TimeoutError:
            return False
        return self.closed_by_the_server()

    def close(self) -> None:
        self.connection.close()


def play(stack: Stack, page_id: str, seats: dict[str, Seat], moves: int, tag: str) -> list[int]:
    """Plays `moves` actions, each by the seat whose turn it is over its socket; each is heard by the
    other seat. Returns the versions acknowledged."""
    acknowledged: list[int] = []
    for number in range(moves):
        page = snapshot(stack.proxy, page_id)  # type: ignore[arg-type]  # the same client shape
        if page["phase"] == "over":
            break
        side = page["side_to_act"]
        move_id = f"{tag}{number}"
        seats[side].act(nearest_snipe_action(page), page["version"], move_id)
        version = seats[side].ack(move_id)
        other = seats["red" if side == "blue" else "blue"]
        other.wait_for(lambda m, v=version: m["type"] == "events" and m["version"] == v)  # type: ignore[misc]
        acknowledged.append(version)
    return acknowledged


def test_every_request_and_socket_of_a_page_lands_on_the_instance_its_id_names(stack: Stack) -> None:
    proxy = stack.proxy
    created = create_page(proxy, preset="quick", mode="link")  # type: ignore[arg-type]
    page_id, tokens = created["id"], created["seats"]
    holder = stack.holder(page_id)
    # Every route naming the page, whatever it answers (a picture, a refusal of an empty body, 404 for
    # a method it does not take), is answered by the page's instance.
    paths = page_paths(page_id)
    assert {path for _, path in paths} >= {
        f"/api/pages/{page_id}",
        f"/api/pages/{page_id}/log",
        f"/api/pages/{page_id}/actions",
        f"/api/pages/{page_id}/ws",
        f"/api/pages/{page_id}/push",
        f"/api/pages/{page_id}/picture.svg",
        f"/api/pages/{page_id}/picture.png",
        f"/api/pages/{page_id}/card.png",
        f"/p/{page_id}",
    }
    for method, path in paths:
        answer = proxy.http.request(method, path, json={} if method != "GET" else None, timeout=30)
        assert answered_by(answer.headers) == holder, (method, path, answer.status_code)
    # Both seats' sockets too, and a move by either reaches the other in that one process.
    seats = {side: Seat(proxy, page_id, tokens[side]) for side in ("blue", "red")}
    assert {seat.instance for seat in seats.values()} == {holder}
    assert len(play(stack, page_id, seats, moves=8, tag="m")) == 8
    for seat in seats.values():
        seat.close()
    # Pages spread over both instances by their ids, each id always to the same one.
    owners = {made_up: stack.holder(made_up) for made_up in MADE_UP_PAGES}
    assert set(owners.values()) == set(stack.servers)
    assert all(stack.holder(made_up) == owner for made_up, owner in list(owners.items())[:10])
    # Requests naming no page are balanced across both (least_conn: idle instances take turns).
    for path in ("/api/health", "/", f"/api/pages?ids={page_id}", "/api/push/key"):
        heard = {answered_by(proxy.http.get(path).headers) for _ in range(4)}
        assert heard == set(stack.servers), path


def test_killing_the_instance_holding_a_page_moves_the_page_and_loses_no_acknowledged_move(
    stack: Stack,
) -> None:
    proxy = stack.proxy
    created = create_page(proxy, preset="quick", mode="link")  # type: ignore[arg-type]
    page_id, tokens = created["id"], created["seats"]
    holder = stack.holder(page_id)
    seats = {side: Seat(proxy, page_id, tokens[side]) for side in ("blue", "red")}
    acknowledged = play(stack, page_id, seats, moves=6, tag="before")
    # One more move is sent and its instance killed at once: acknowledged or not, it is in flight.
    page = snapshot(proxy, page_id)  # type: ignore[arg-type]
    side = page["side_to_act"]
    in_flight = (nearest_snipe_action(page), page["version"], "in-flight")
    seats[side].act(*in_flight)
    stack.servers[holder].kill()
    for seat in seats.values():
        assert seat.closed_by_the_server()
    survivor = stack.other_than(holder)
    # The browser reconnects, naming the version it holds: nginx moves the page to the survivor.
    held = {name: seat.version for name, seat in seats.items()}
    seats = {name: Seat(proxy, page_id, tokens[name], version=held[name]) for name in ("blue", "red")}
    assert {seat.instance for seat in seats.values()} == {survivor}
    assert stack.holder(page_id) == survivor
    # The move in flight is sent again with its move_id: applied once, whether it was committed or not.
    seats[side].act(*in_flight)
    acknowledged.append(seats[side].ack("in-flight"))
    for seat in seats.values():
        seat.reach(acknowledged[-1])
    acknowledged += play(stack, page_id, seats, moves=6, tag="after")
    # The log is exactly the acknowledged moves, in order: none lost, the one in flight applied once.
    log = proxy.http.get(f"/api/pages/{page_id}/log").json()
    assert [entry["version"] for entry in log["entries"]] == acknowledged
    for seat in seats.values():
        assert seat.version == acknowledged[-1]
        seat.close()


def test_the_recipes_edge_limits_answer_before_any_instance(stack: Stack) -> None:
    """The rendered config keeps the recipe's limits (the instances' own are raised here): a body over
    `client_max_body_size` and page creation past the burst are refused by nginx itself."""
    proxy = stack.proxy
    oversized = proxy.http.post("/api/pages", content=b"{" + b" " * 9000 + b"}", headers=JSON)
    assert oversized.status_code == 413
    assert UPSTREAM_HEADER not in oversized.headers  # no instance saw it
    statuses = []
    for _ in range(CREATION_BURST + 2):
        answer = proxy.http.post("/api/pages", json={"preset": "quick", "mode": "link"})
        statuses.append((answer.status_code, UPSTREAM_HEADER in answer.headers))
    # The first of the burst and the burst itself reach an instance; then nginx answers 429 alone.
    assert statuses[: CREATION_BURST + 1] == [(201, True)] * (CREATION_BURST + 1)
    assert statuses[-1] == (429, False)
