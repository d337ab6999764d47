"""Live play across two `dotfight serve` processes on one throwaway PostgreSQL cluster (issue 11):
sockets of one page on both processes hear every action once and in order, presence crosses processes,
a dropped LISTEN connection catches up, and a killed process's seats leave while no acknowledged action
is lost.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from websockets.sync.client import ClientConnection, connect

from tests.support.page_client import act, create_page, page_in_positioning, snapshot, two_places
from tests.support.players import nearest_snipe_action
from tests.support.server_process import RELAXED_ACTION_BUDGET, ServerProcess

if TYPE_CHECKING:
    from conftest import PostgresCluster

# Generous: the machine is shared; speed belongs to benchmarks/server.py.
HEARD_WITHIN_S = 20.0
# A killed process's heartbeat is 3 s old at most before its peers clear its seats (TTL 3 s + 1 s beat).
PRESENCE_CLEARED_WITHIN_S = 10.0
SERVER_ENV = {
    **RELAXED_ACTION_BUDGET,
    "DOTFIGHT_PAGE_CREATION_BURST": "1000",
    "DOTFIGHT_WS_MESSAGES_PER_SECOND": "10000",
    "DOTFIGHT_WS_MESSAGE_BURST": "10000",
}


class LiveSocket:
    """A page's WebSocket read on a thread of its own: every message kept in order."""

    def __init__(self, server: ServerProcess, page_id: str, token: str | None) -> None:
        self.connection: ClientConnection = connect(server.ws_url(page_id), legacy=True)
        self.messages: list[dict[str, Any]] = []
        # What ended the reader other than a clean close (a message that is not JSON, a connection
        # dropped by the server): raised by the next wait, so that it fails the test at its cause.
        self.failure: Exception | None = None
        self._changed = threading.Condition()
        self.connection.send(json.dumps({"type": "hello", "token": token}))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.wait_for(lambda message: message["type"] == "state")

    def _read(self) -> None:
        try:
            for text in self.connection:
                with self._changed:
                    self.messages.append(json.loads(text))
                    self._changed.notify_all()
        except Exception as error:  # kept for the test's thread, which raises it
            with self._changed:
                self.failure = error
                self._changed.notify_all()

    def _raise_failure(self) -> None:
        """Fails the test with what ended the reader, if anything did (call holding `_changed`)."""
        if self.failure is not None:
            raise AssertionError(f"the socket's reader failed: {self.failure!r}") from self.failure

    def wait_for(self, test: Any, timeout: float = HEARD_WITHIN_S) -> dict[str, Any]:
        """Waits for a message (since the start) passing `test`; returns the latest such."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = [message for message in self.messages if test(message)]
                if found:
                    return found[-1]
                self._raise_failure()
                left = deadline - time.monotonic()
                assert left > 0, f"not heard in time; heard {self.messages[-5:]}"
                self._changed.wait(left)

    def versions(self) -> list[int]:
        """The versions of the `events` messages heard, in order."""
        with self._changed:
            self._raise_failure()
            return [message["version"] for message in self.messages if message["type"] == "events"]

    def presence(self) -> tuple[bool, bool] | None:
        with self._changed:
            self._raise_failure()
            last = [message for message in self.messages if message["type"] == "presence"]
        return (last[-1]["blue"], last[-1]["red"]) if last else None

    def wait_presence(self, wanted: tuple[bool, bool], timeout: float = HEARD_WITHIN_S) -> float:
        """Waits until the latest presence heard is `wanted`; returns the seconds waited."""
        start = time.monotonic()
        while self.presence() != wanted:
            assert time.monotonic() - start < timeout, f"presence {self.presence()}, wanted {wanted}"
            time.sleep(0.05)
        return time.monotonic() - start

    def send_action(self, action: dict[str, Any], version: int, move_id: str) -> dict[str, Any]:
        """Sends an action and returns its ack (fails on an error)."""
        self.connection.send(
            json.dumps({"type": "action", "action": action, "version": version, "move_id": move_id})
        )
        answer = self.wait_for(
            lambda message: message.get("move_id") == move_id and message["type"] in ("ack", "error")
        )
        assert answer["type"] == "ack", answer
        return answer

    def close(self) -> None:
        """Closes the socket; fails if its reader had failed since the last wait."""
        with self._changed:
            self._raise_failure()
        self.connection.close()


@pytest.fixture
def two_servers(
    postgres_cluster: PostgresCluster, tmp_path: Path
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two `dotfight serve` processes on one fresh PostgreSQL database."""
    url = postgres_cluster.new_database()
    servers = [
        ServerProcess(url, tmp_path / f"server-{name}.log", extra_env=SERVER_ENV, start_timeout_s=60)
        for name in ("a", "b")
    ]
    servers[0].start()  # one at a time: both would migrate at once otherwise (tested elsewhere)
    servers[1].start()
    try:
        yield servers[0], servers[1]
    finally:
        for server in servers:
            server.stop()


def assert_heard_in_order(socket: LiveSocket, first: int, last: int) -> None:
    """Every version from `first` to `last` heard once, in order, nothing else."""
    deadline = time.monotonic() + HEARD_WITHIN_S
    while socket.versions()[-1:] != [last] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert socket.versions() == list(range(first, last + 1))


def test_a_link_page_across_two_processes(two_servers: tuple[ServerProcess, ServerProcess]) -> None:
    a, b = two_servers
    created = create_page(a, preset="quick", mode="link")
    page_id, seats = created["id"], created["seats"]
    blue = LiveSocket(a, page_id, seats["blue"])
    red = LiveSocket(b, page_id, seats["red"])
    watcher = LiveSocket(b, page_id, None)
    # Presence crosses processes: each seat sees the other, the watcher on B sees both.
    for socket in (blue, red, watcher):
        socket.wait_presence((True, True))
    sockets = {"blue": blue, "red": red}
    for number in range(30):
        page = snapshot(a, page_id)
        action = nearest_snipe_action(page, resign_from_version=28)
        side = page["side_to_act"]
        sockets[side].send_action(action, page["version"], f"m{number}")
        # Each socket, on either process, hears the move with what the page now allows (C6): the last
        # event carries the options of the page after it, as the snapshot does.
        now = snapshot(b, page_id)
        for socket in (blue, red, watcher):
            heard = socket.wait_for(lambda m, v=now["version"]: m["type"] == "events" and m["version"] == v)
            assert heard["events"][-1]["options"] == now["options"]
        if action["type"] == "resign":
            break
    end = snapshot(b, page_id)["version"]
    for socket in (blue, red, watcher):
        assert_heard_in_order(socket, 1, end)
    # Blue leaves A: B hears it.
    blue.close()
    watcher.wait_presence((False, True))
    red.close()
    watcher.close()


def test_random_interleaved_moves_from_both_processes(
    two_servers: tuple[ServerProcess, ServerProcess],
) -> None:
    a, b = two_servers
    page_id, token, state = page_in_positioning(a)
    home, away = two_places(state)
    start = snapshot(a, page_id)["version"]
    players = [LiveSocket(a, page_id, token), LiveSocket(b, page_id, token)]
    watchers = [LiveSocket(a, page_id, None), LiveSocket(b, page_id, None)]
    chance = random.Random(11)
    version = start
    for number in range(200):
        player = chance.choice(players)
        ack = player.send_action(away if number % 2 == 0 else home, version, f"r{number}")
        version = ack["version"]
    for socket in players + watchers:
        assert_heard_in_order(socket, start + 1, version)


def test_a_dropped_listen_connection_catches_up(
    two_servers: tuple[ServerProcess, ServerProcess], postgres_cluster: PostgresCluster
) -> None:
    a, b = two_servers
    page_id, token, state = page_in_positioning(a)
    home, away = two_places(state)
    start = snapshot(a, page_id)["version"]
    on_b = LiveSocket(b, page_id, None)
    database = a.database_url.split("@/")[1].split("?")[0]
    version = start
    for round_number in range(3):
        # Every LISTEN connection of the database is cut; moves are made on A meanwhile.
        postgres_cluster.execute(
            [
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                f"WHERE datname = '{database}' AND query LIKE 'LISTEN%'"
            ]
        )
        for number in range(5):
            action = away if version % 2 == start % 2 else home
            answer = act(a, page_id, token, action, version, move_id=f"d{round_number}-{number}")
            assert answer.status_code == 200, answer.text
            version = answer.json()["version"]
        assert_heard_in_order(on_b, start + 1, version)
    assert "LISTEN connection dropped" in b.log_text()


def test_a_killed_process_leaves_and_loses_nothing(two_servers: tuple[ServerProcess, ServerProcess]) -> None:
    a, b = two_servers
    created = create_page(a, preset="quick", mode="link")
    page_id, seats = created["id"], created["seats"]
    blue = LiveSocket(a, page_id, seats["blue"])
    watcher = LiveSocket(b, page_id, None)
    watcher.wait_presence((True, False))
    acked = [blue.send_action({"type": "quick_setup"}, 0, "k0")["version"]]
    a.kill()
    waited = watcher.wait_presence((False, False), timeout=PRESENCE_CLEARED_WITHIN_S)
    assert waited < PRESENCE_CLEARED_WITHIN_S
    # Every acknowledged action is in the log B serves.
    log = b.http.get(f"/api/pages/{page_id}/log").json()
    assert [entry["version"] for entry in log["entries"]] == acked
    assert watcher.versions() == acked
    watcher.close()
