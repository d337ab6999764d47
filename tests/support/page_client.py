"""HTTP helpers of the hostile tests: create a page, act on it, read it; and an outside process holding
an SQLite database's write lock."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from typing import Any

import httpx

from dotfight.engine import RuleSet, State, apply, new_page
from tests.support.server_process import ServerProcess

# The seed of the local pages the tests rebuild with the engine.
SEED = 12345


def create_page(server: ServerProcess, **body: Any) -> dict[str, Any]:
    """Creates a page (`POST /api/pages` with `body`) and returns the answer; fails unless 201."""
    answer = server.http.post("/api/pages", json=body)
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


def act(
    server: ServerProcess,
    page_id: str,
    token: str,
    action: dict[str, Any],
    version: int,
    move_id: str | None = None,
    timeout: float = 30.0,
) -> httpx.Response:
    """Sends one action over HTTP and returns the answer, whatever it is."""
    body: dict[str, Any] = {"action": action, "version": version}
    if move_id is not None:
        body["move_id"] = move_id
    headers = {"Authorization": f"Bearer {token}"}
    return server.http.post(f"/api/pages/{page_id}/actions", json=body, headers=headers, timeout=timeout)


def snapshot(server: ServerProcess, page_id: str) -> dict[str, Any]:
    """Reads a page's snapshot; fails unless 200."""
    answer = server.http.get(f"/api/pages/{page_id}")
    assert answer.status_code == 200, answer.text
    page: dict[str, Any] = answer.json()
    return page


def local_page_in_play(server: ServerProcess, **body: Any) -> tuple[str, str, dict[str, Any]]:
    """Creates a local page (quick preset unless `body` says otherwise), sets it up and makes both sides
    ready; returns its id, its token and its snapshot at the first turn of play."""
    created = create_page(server, **{"preset": "quick", "mode": "local", **body})
    page_id, token = created["id"], created["seats"]["blue"]
    for version, action in enumerate(({"type": "quick_setup"}, {"type": "ready"}, {"type": "ready"})):
        answer = act(server, page_id, token, action, version)
        assert answer.status_code == 200, answer.text
    page = snapshot(server, page_id)
    assert page["phase"] == "play", page
    return page_id, token, page


def page_in_positioning(server: ServerProcess) -> tuple[str, str, State]:
    """A local quick page with a known seed, set up and at blue's arranging; and the same page rebuilt
    here by the engine (so the test can find legal places without asking the server)."""
    created = create_page(server, preset="quick", mode="local", seed=SEED)
    page_id, token = created["id"], created["seats"]["blue"]
    assert act(server, page_id, token, {"type": "quick_setup"}, 0).status_code == 200
    state, _ = apply(new_page(RuleSet.preset("quick"), SEED), "blue", {"type": "quick_setup"})
    served = snapshot(server, page_id)
    assert served["soldiers"] == state.snapshot()["soldiers"]
    return page_id, token, state


def two_places(state: State) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two `position` actions that each move blue's first soldier (between where he stands and a free
    spot beside it), so that sending them in turn changes the page every time."""
    soldier = next(s for s in state.soldiers if s.side == "blue")
    home = {"type": "position", "soldiers": [{"id": soldier.id, "x": soldier.x, "y": soldier.y}]}
    for dx, dy in ((0.5, 0), (-0.5, 0), (0, 0.5), (0, -0.5), (2, 0), (-2, 0), (0, 2), (0, -2)):
        away = {
            "type": "position",
            "soldiers": [{"id": soldier.id, "x": soldier.x + dx, "y": soldier.y + dy}],
        }
        try:
            apply(state, "blue", away)
        except ValueError:
            continue
        return home, away
    raise AssertionError("no free spot beside the first soldier")


def store_blue_actions(
    server: ServerProcess, page_id: str, state: State, actions: list[dict[str, Any]], *, cache: bool = False
) -> State:
    """Appends blue's `actions` to a page at `state`'s version straight into the stopped server's
    database, as an older or a long-running server would hold them (the engine applies each one), and
    returns the state after them. With `cache`, the page's cached state moves on too."""
    rows = []
    moment = datetime.now(UTC).isoformat(sep=" ")
    for action in actions:
        state, events = apply(state, "blue", action)
        rows.append((page_id, state.version, "blue", json.dumps(action), json.dumps(events), None, moment))
    path = server.database_url.removeprefix("sqlite:///")
    with closing(sqlite3.connect(path)) as database, database:
        database.executemany(
            "INSERT INTO actions (page_id, version, side, action, events, move_id, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        database.execute("UPDATE pages SET version = ? WHERE id = ?", (state.version, page_id))
        if cache:
            database.execute(
                "UPDATE page_states SET state = ?, version = ? WHERE page_id = ?",
                (json.dumps(state.to_json()), state.version, page_id),
            )
    return state


_HOLD_LOCK = """
import sqlite3, sys, time
database = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
print("ready", flush=True)
sys.stdin.readline()
database.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
database.execute("ROLLBACK")
"""


class OutsideWriteLock:
    """Another process that takes the SQLite write lock of a database file when told, holds it for a
    while, then lets go (as a backup tool or a second program on the same file would)."""

    def __init__(self, database_path: str, seconds: float) -> None:
        self.seconds = seconds
        self._holder = subprocess.Popen(
            [sys.executable, "-c", _HOLD_LOCK, database_path, str(seconds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._holder.stdout is not None and self._holder.stdout.readline().strip() == "ready"

    def take(self) -> float:
        """Takes the lock now; returns the monotonic time it was held."""
        assert self._holder.stdin is not None and self._holder.stdout is not None
        self._holder.stdin.write("go\n")
        self._holder.stdin.flush()
        assert self._holder.stdout.readline().strip() == "locked"
        return time.monotonic()

    def wait_released(self) -> None:
        """Waits until the holder has let go and ended."""
        self._holder.wait(self.seconds + 30)

    def stop(self) -> None:
        """Ends the holder if it still runs."""
        if self._holder.poll() is None:
            self._holder.kill()
            self._holder.wait()


@contextlib.contextmanager
def outside_write_lock(database_path: str, seconds: float) -> Iterator[OutsideWriteLock]:
    """An OutsideWriteLock ready to `take()`; at the end it is waited for (or ended)."""
    holder = OutsideWriteLock(database_path, seconds)
    try:
        yield holder
    finally:
        holder.stop()
