"""Bot pages over HTTP: Dawood-bot's seat moves server-side, stored and logged like a person's."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager, suppress
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from server_testkit import simple_action

from tests.support.server_process import ServerProcess

# Generous: Dawood-bot thinks in a worker thread, and the machine is shared.
WAIT_SECONDS = 60.0


def wait_for_turn(client: TestClient, page_id: str, side: str) -> dict[str, Any]:
    """Polls the page until it is `side`'s move or the page is over."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        current: dict[str, Any] = client.get(f"/api/pages/{page_id}").json()
        if current["phase"] == "over" or current["side_to_act"] == side:
            return current
        time.sleep(0.01)
    raise AssertionError(f"the bot did not move within {WAIT_SECONDS} s")


def test_a_bot_page_is_played_to_the_end_over_http(client: TestClient) -> None:
    created = client.post(
        "/api/pages", json={"preset": "quick", "mode": "bot", "bot": {"strength": "normal"}}
    ).json()
    page_id, seats = created["id"], created["seats"]
    assert seats["red"] is None and created["links"]["red"] is None and seats["blue"]
    assert created["snapshot"]["bot"] == {"side": "red", "strength": "normal"}
    current = wait_for_turn(client, page_id, "blue")
    while current["phase"] != "over":
        response = client.post(
            f"/api/pages/{page_id}/actions",
            json={"action": simple_action(current), "version": current["version"]},
            headers={"Authorization": f"Bearer {seats['blue']}"},
        )
        assert response.status_code == 200, response.text
        current = wait_for_turn(client, page_id, "blue")
    log = client.get(f"/api/pages/{page_id}/log").json()
    sides = {entry["side"] for entry in log["entries"]}
    assert sides == {"blue", "red"}
    assert current["winner"] in ("blue", "red") and log["seed"] is not None


def test_a_bot_playing_blue_moves_first_without_being_asked(client: TestClient) -> None:
    body = {"preset": "quick", "mode": "bot", "bot": {"side": "blue", "strength": "normal"}}
    created = client.post("/api/pages", json=body).json()
    assert created["seats"]["blue"] is None and created["seats"]["red"]
    current = wait_for_turn(client, created["id"], "red")
    assert current["version"] >= 1
    entries = client.get(f"/api/pages/{created['id']}/log").json()["entries"]
    assert entries and entries[0]["side"] == "blue"


def stored_log(server: ServerProcess) -> list[tuple[int, str]]:
    """Reads (version, side) of every logged action straight from the stopped server's SQLite file."""
    path = server.database_url.removeprefix("sqlite:///")
    with closing(sqlite3.connect(path)) as database:
        return list(database.execute("SELECT version, side FROM actions ORDER BY version"))


def descendants(pid: int) -> list[int]:
    """The ids of every process below `pid` (read from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                # The parent id is the 4th field, after "(command)" (which may hold spaces).
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, its_parent in parents.items() if its_parent == parent]
        found += children
        frontier += children
    return found


def bot_workers(server: ServerProcess) -> list[int]:
    """The server's Dawood-bot worker processes and their forkserver (their command line names the
    module they preload)."""
    assert server.process is not None
    workers = []
    for pid in descendants(server.process.pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"dotfight.server.bot_process" in command:
            workers.append(pid)
    return workers


@contextmanager
def bot_frozen(server: ServerProcess) -> Iterator[None]:
    """Stops the server's bot workers (SIGSTOP), so that the bot cannot answer; on leaving, kills them
    (the server is killed meanwhile, and a stopped worker cannot notice that its server is gone)."""
    workers = bot_workers(server)
    assert workers, "the server's bot workers were not found"
    for pid in workers:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in workers:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_restart_lets_the_bot_answer_a_move_without_anyone_looking(fresh_server: ServerProcess) -> None:
    fresh_server.start()
    created = fresh_server.http.post("/api/pages", json={"preset": "quick", "mode": "bot"}).json()
    page_id, blue = created["id"], created["seats"]["blue"]
    headers = {"Authorization": f"Bearer {blue}"}
    url = f"/api/pages/{page_id}/actions"
    setup = fresh_server.http.post(
        url, json={"action": {"type": "quick_setup"}, "version": 0}, headers=headers
    )
    assert setup.status_code == 200, setup.text
    # Blue's `ready` hands the positioning to the bot, whose workers are frozen: the server dies before
    # the bot can answer, every time.
    with bot_frozen(fresh_server):
        answer = fresh_server.http.post(
            url, json={"action": {"type": "ready"}, "version": 1}, headers=headers
        )
        fresh_server.kill()
    assert answer.status_code == 200, answer.text
    assert stored_log(fresh_server) == [(1, "blue"), (2, "blue")]
    fresh_server.start()
    # Only the log is read: neither a GET of the page nor a hello wakes the bot.
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        entries = fresh_server.http.get(f"/api/pages/{page_id}/log").json()["entries"]
        if len(entries) > 2:
            assert entries[2]["side"] == "red" and entries[2]["version"] == 3
            return
        time.sleep(0.05)
    raise AssertionError(f"the bot did not move within {WAIT_SECONDS} s of the restart")
