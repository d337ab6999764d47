"""The write of play in SQLAlchemy Core: one action appended to a page's log, the page row moved on, and
every few versions the page's private state checkpointed in `page_states`.

This runs on the single writer thread once per action, so it skips the ORM: the statements are built
once here (SQLAlchemy caches their compiled form per dialect), executed on the writer's connection with
plain parameters, and no object is made, tracked or flushed. Nothing is read first: the conditional
UPDATE (the page still at the version the engine checked, and the move_id not in its log yet — an index
probe inside the database) is the guard, and the log's unique constraints on (page, version) and (page,
move_id) the backstop (a write that breaks one is rolled back whole).

A group commit's actions are written with one `executemany` per statement (`move_on_many`): the same
two statements, with one set of parameters per action, so SQLAlchemy prepares each once per commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import Connection, Table, and_, bindparam, exists, insert, select, update

from dotfight.store.models import ActionRow, PageRow, PageStateRow

_pages: Table = PageRow.__table__  # type: ignore[assignment]
_actions: Table = ActionRow.__table__  # type: ignore[assignment]
_states: Table = PageStateRow.__table__  # type: ignore[assignment]

# The bound names differ from the columns set (an UPDATE's SET and WHERE would otherwise share them).
MOVE_ON = (
    update(_pages)
    .where(and_(_pages.c.id == bindparam("b_id"), _pages.c.version == bindparam("b_expected")))
    .values(
        version=bindparam("b_version"),
        phase=bindparam("b_phase"),
        side_to_act=bindparam("b_side_to_act"),
        winner=bindparam("b_winner"),
        status=bindparam("b_status"),
        updated_at=bindparam("b_now"),
    )
)
# The same, and only while no logged action of the page carries the move_id (one statement, one round
# trip: the caller asks which of the two failed only when it matched nothing).
MOVE_ON_NEW_MOVE = MOVE_ON.where(
    ~exists(
        select(_actions.c.id).where(
            and_(_actions.c.page_id == bindparam("b_id"), _actions.c.move_id == bindparam("b_move_id"))
        )
    )
)
LOG = insert(_actions)
CHECKPOINT = (
    update(_states)
    .where(_states.c.page_id == bindparam("b_id"))
    .values(version=bindparam("b_version"), state=bindparam("b_state"))
)
FIRST_CHECKPOINT = insert(_states)


def state_text(state: dict[str, Any]) -> str:
    """Writes a private state as the JSON text `page_states` keeps (orjson: a tenth of stdlib's time)."""
    return orjson.dumps(state).decode()


def state_of(text: str) -> dict[str, Any]:
    """Reads a private state kept by `state_text`."""
    state: dict[str, Any] = orjson.loads(text)
    return state


def move_on_parameters(
    page_id: str, expected_version: int, summary: dict[str, Any], move_id: str | None, now: datetime
) -> dict[str, Any]:
    """The parameters of MOVE_ON (and MOVE_ON_NEW_MOVE) for one action."""
    return {
        "b_id": page_id,
        "b_expected": expected_version,
        "b_move_id": move_id,
        "b_version": summary["version"],
        "b_phase": summary["phase"],
        "b_side_to_act": summary["side_to_act"],
        "b_winner": summary["winner"],
        "b_status": summary["status"],
        "b_now": now,
    }


def move_on(
    connection: Connection,
    page_id: str,
    expected_version: int,
    summary: dict[str, Any],
    entry: dict[str, Any],
    now: datetime,
) -> bool:
    """Moves the page row to `summary` (version, phase, side_to_act, winner, status) and appends `entry`
    (version, side, action, events, move_id) to its log, only if the page is still at
    `expected_version` and its log holds no entry of the same move_id; returns False (writing nothing)
    when either fails. Another process logging the same version or move_id at the same moment makes the
    INSERT raise IntegrityError (the transaction must then be rolled back)."""
    move_id = entry["move_id"]
    statement = MOVE_ON if move_id is None else MOVE_ON_NEW_MOVE
    moved = connection.execute(
        statement, move_on_parameters(page_id, expected_version, summary, move_id, now)
    )
    if moved.rowcount != 1:
        return False
    connection.execute(LOG, {**entry, "page_id": page_id, "created_at": now})
    return True


def move_on_many(
    connection: Connection, moves: Sequence[tuple[str, int, dict[str, Any], dict[str, Any]]], now: datetime
) -> bool:
    """Moves on several pages at once, each as `move_on` does (`moves`: page id, expected version, summary,
    entry), with one UPDATE and one INSERT executed for all of them. Returns False when not every page
    row matched (one was moved on, or a move_id is logged already): some rows may then be updated, so
    the caller rolls the transaction back and writes the moves one by one to find which one failed."""
    moved = connection.execute(
        MOVE_ON_NEW_MOVE,
        [
            move_on_parameters(page_id, expected, summary, entry["move_id"], now)
            for page_id, expected, summary, entry in moves
        ],
    )
    if moved.rowcount != len(moves):
        return False
    connection.execute(
        LOG, [{**entry, "page_id": page_id, "created_at": now} for page_id, _, _, entry in moves]
    )
    return True


def save_state(connection: Connection, page_id: str, version: int, state: dict[str, Any]) -> None:
    """Checkpoints the page's private state at `version` (the page's row in `page_states`, made if it has
    none: a page stored before checkpoints had their own table may lack one)."""
    text = state_text(state)
    saved = connection.execute(CHECKPOINT, {"b_id": page_id, "b_version": version, "b_state": text})
    if saved.rowcount != 1:
        connection.execute(FIRST_CHECKPOINT, {"page_id": page_id, "version": version, "state": text})
