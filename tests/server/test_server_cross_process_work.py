"""What a move costs the other process, on two `dotfight serve` processes sharing one throwaway PostgreSQL
database (issue 22, item 2), counted from each process's debug log, where the page authority names each
piece of work it does for a page (`page P: work: …`: a read of its version or log, a load, an engine step
on a logged or a heard move):

- a process that holds no socket of a page does no work at all for its moves, even with the page in
  memory; the first action it decides afterwards brings that state up from the log, once;
- a process that holds a socket of a page forwards the other's moves from their NOTIFY as they are (no
  read, no engine), and advances its state in memory by the move heard only when it next decides an
  action of the page (one engine step per move heard, still no read), every socket hearing every
  version once, in order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.store.conftest import postgres_cluster  # noqa: F401 — the throwaway cluster, for these tests too
from tests.store.test_multiprocess_live import SERVER_ENV, LiveSocket, assert_heard_in_order
from tests.support.page_client import act, create_page, snapshot
from tests.support.players import nearest_snipe_action
from tests.support.server_process import ServerProcess

if TYPE_CHECKING:
    from tests.store.conftest import PostgresCluster

pytestmark = pytest.mark.slow

# Moves per test: enough to see a per-move cost, few enough for a shared machine.
MOVES = 12
WORK = re.compile(r"page (\S+): work: (.+)")


@pytest.fixture
def two_servers(
    postgres_cluster: PostgresCluster,  # noqa: F811
    tmp_path: Path,
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two `dotfight serve` processes on one fresh PostgreSQL database, logging at debug."""
    url = postgres_cluster.new_database()
    servers = [
        ServerProcess(
            url,
            tmp_path / f"server-{name}.log",
            extra_args=["--log-level", "debug", "--no-access-log"],
            extra_env=SERVER_ENV,
            start_timeout_s=60,
        )
        for name in ("a", "b")
    ]
    servers[0].start()  # one at a time: both would migrate at once otherwise (tested elsewhere)
    servers[1].start()
    try:
        yield servers[0], servers[1]
    finally:
        for server in servers:
            server.stop()


class WorkLog:
    """A server's `work:` lines for one page, counted from a mark in its log on."""

    def __init__(self, server: ServerProcess, page_id: str) -> None:
        self.server = server
        self.page_id = page_id
        self.start = len(server.log_text())

    def lines(self) -> list[str]:
        text = self.server.log_text()[self.start :]
        return [work for page, work in WORK.findall(text) if page == self.page_id]

    def count(self, kind: str) -> int:
        return sum(1 for work in self.lines() if work.startswith(kind))


def play(
    sockets: dict[str, LiveSocket], reader: ServerProcess, page_id: str, moves: int, *others: LiveSocket
) -> list[str]:
    """Plays `moves` actions, each from the socket of the side to act (the snapshot read on `reader`),
    and waits until every socket (the seats' and `others`) heard each; returns the sides that moved."""
    sides = []
    for number in range(moves):
        page = snapshot(reader, page_id)
        side = page["side_to_act"]
        sides.append(side)
        version = sockets[side].send_action(nearest_snipe_action(page), page["version"], f"w{number}")[
            "version"
        ]
        for socket in (*sockets.values(), *others):
            socket.wait_for(
                lambda message, v=version: message["type"] == "events" and message["version"] == v
            )
    return sides


def settled_on(listener: ServerProcess, mover: ServerProcess) -> None:
    """Waits until `listener` has handled every NOTIFY committed on `mover` so far: a move of a page of
    its own made on `mover` afterwards reaches its socket on `listener` (one LISTEN connection hears
    the notices in commit order)."""
    created = create_page(mover, preset="quick", mode="local")
    socket = LiveSocket(listener, created["id"], None)
    answer = act(mover, created["id"], created["seats"]["blue"], {"type": "quick_setup"}, 0, move_id="s")
    assert answer.status_code == 200, answer.text
    socket.wait_for(lambda message: message["type"] == "events")
    socket.close()


def test_a_process_with_no_socket_of_a_page_does_no_work_for_its_moves(
    two_servers: tuple[ServerProcess, ServerProcess],
) -> None:
    a, b = two_servers
    # Made on B (so B holds the page in memory), played on A with both seats' sockets there.
    created = create_page(b, preset="quick", mode="link")
    page_id, seats = created["id"], created["seats"]
    on_b = WorkLog(b, page_id)
    sockets = {side: LiveSocket(a, page_id, seats[side]) for side in ("blue", "red")}
    play(sockets, a, page_id, MOVES)
    last = MOVES  # the page was made at version 0
    settled_on(b, a)
    assert on_b.lines() == []  # no read, no engine, no change to its state in memory
    for socket in sockets.values():
        assert_heard_in_order(socket, 1, last)
    # B's state in memory was left as it was, and is brought up from the log once, when B next decides
    # an action of the page: one read, one engine step per move it did not follow.
    page = snapshot(a, page_id)
    side = page["side_to_act"]
    answer = act(b, page_id, seats[side], nearest_snipe_action(page), last, move_id="on-b")
    assert answer.status_code == 200, answer.text
    assert on_b.count("a read of its log") == 1
    assert on_b.count("an engine step") == MOVES
    for socket in sockets.values():
        socket.close()


def test_a_socket_on_the_other_process_hears_each_move_from_its_notice_without_it_being_worked_out_again(
    two_servers: tuple[ServerProcess, ServerProcess],
) -> None:
    a, b = two_servers
    created = create_page(a, preset="quick", mode="link")
    page_id, seats = created["id"], created["seats"]
    sockets = {"blue": LiveSocket(a, page_id, seats["blue"]), "red": LiveSocket(b, page_id, seats["red"])}
    watcher = LiveSocket(b, page_id, None)
    on_b = WorkLog(b, page_id)  # from here on: the red seat's and the watcher's process at play
    sides = play(sockets, a, page_id, MOVES, watcher)
    assert "blue" in sides and "red" in sides
    # Every move made on A was forwarded to B's sockets from its notice: B read nothing, and worked out
    # each once, when it next decided one of red's (those after red's last, not yet).
    last_red = len(sides) - 1 - sides[::-1].index("red")
    assert on_b.lines() == [
        f"an engine step to version {number + 1} (heard)"
        for number, side in enumerate(sides[:last_red])
        if side == "blue"
    ]
    for socket in (*sockets.values(), watcher):
        assert_heard_in_order(socket, 1, MOVES)
        socket.close()
