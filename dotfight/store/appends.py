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

On PostgreSQL the two are one statement (`MOVE_ON_AND_LOG`, a data-modifying CTE: the conditional
UPDATE returns the page's id, and the INSERT logs the entry from what it returned), so an action costs
one round trip and one pass through SQLAlchemy and psycopg instead of two: the INSERT writes a row only
when the UPDATE matched one, and the statement's row count says which (1 moved on and logged, 0
nothing written). The guard and the backstop are the same: the UPDATE's version and move_id checks,
and the log's unique constraints raising IntegrityError. SQLite has no data-modifying CTE: it keeps
the two statements. When other processes hear the page's commits, the same statement NOTIFYs them
(`MOVE_ON_LOG_AND_NOTIFY`: the payload is made before the write, and pg_notify runs only for the row
the UPDATE moved, so a refused write tells nobody, and only when a process other than the writer's
follows the page; PostgreSQL delivers it only at commit).

Each statement is compiled once per dialect (`Prepared`: SQLAlchemy's own compiler and its columns' own
bind processors, e.g. the JSON serializer and SQLite's DATETIME text) and executed with
straight on the driver's cursor (sqlite3's, psycopg's; driver.py: no execution context at all,
SQLAlchemy's error wrapping and disconnect handling kept): per action the compiled-cache lookup, the
parameters' construction and the result's compiled metadata are skipped (29 instead of 46 µs of CPU
for an action's two statements on SQLite through `exec_driver_sql`, less again on the cursor).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import (
    Connection,
    DateTime,
    Table,
    and_,
    bindparam,
    case,
    exists,
    func,
    insert,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.expression import ColumnClause, UpdateBase

from dotfight.store import driver
from dotfight.store.expiry import setup_moved_at
from dotfight.store.models import ActionRow, PageRow, PageStateRow
from dotfight.store.records import ClockUpdate, StateJson

_pages: Table = PageRow.__table__  # type: ignore[assignment]
_actions: Table = ActionRow.__table__  # type: ignore[assignment]
_states: Table = PageStateRow.__table__  # type: ignore[assignment]


class Prepared:
    """A Core statement compiled once per dialect, executed with plain parameters (a dict per row, by
    bound name) through `exec_driver_sql`: each value passes its column type's own bind processor, in
    the order the compiled statement binds them (positional paramstyles) or by name (named ones).

    >>> from sqlalchemy import create_engine
    >>> engine = create_engine("sqlite://")
    >>> _ = PageStateRow.__table__.create(engine)
    >>> with engine.begin() as connection:
    ...     _ = FIRST_CHECKPOINT.execute(connection, {"page_id": "p", "version": 3, "state": "{}"})
    ...     CHECKPOINT.execute(connection, {"b_id": "p", "b_version": 4, "b_state": "{}"})
    1
    """

    def __init__(self, statement: UpdateBase, column_keys: Sequence[str] | None = None) -> None:
        self.statement = statement
        self._column_keys = list(column_keys) if column_keys is not None else None
        self._compiled: weakref.WeakKeyDictionary[Dialect, _Compiled] = weakref.WeakKeyDictionary()

    def execute(
        self, connection: Connection, parameters: Mapping[str, Any] | Sequence[Mapping[str, Any]]
    ) -> int:
        """Executes the statement once, or once per row given (executemany); returns the rows counted."""
        compiled = self._compiled.get(connection.dialect)
        if compiled is None:
            compiled = self._compiled[connection.dialect] = _Compiled(
                self.statement, connection.dialect, self._column_keys
            )
        bind = compiled.bound
        bound = bind(parameters) if isinstance(parameters, Mapping) else [bind(row) for row in parameters]
        if connection.dialect.name in _STRAIGHT_TO_DRIVER:
            return driver.rows_written(connection, compiled.sql, bound)
        return connection.exec_driver_sql(compiled.sql, bound).rowcount


class _Compiled:
    """A statement's SQL text for one dialect, and how to bind one row's parameters to it (`bound`)."""

    __slots__ = ("bound", "sql")

    def __init__(self, statement: UpdateBase, dialect: Dialect, column_keys: list[str] | None) -> None:
        # As for an executemany (whichever way it runs): no RETURNING of the new row's id, not needed.
        compiled = statement.compile(dialect=dialect, column_keys=column_keys, for_executemany=True)
        self.sql = compiled.string
        names = list(compiled.positiontup or ()) if compiled.positional else list(compiled.binds)
        processors: list[Callable[[Any], Any] | None] = []
        for name in names:
            column_type = compiled.binds[name].type
            process: Callable[[Any], Any] | None = column_type.dialect_impl(dialect).bind_processor(dialect)
            if process is not None and isinstance(column_type, DateTime):
                process = remembering_last(process)
            processors.append(process)
        self.bound: Callable[[Mapping[str, Any]], tuple[Any, ...] | dict[str, Any]] = binder(
            names, processors, positional=compiled.positional
        )


def binder(
    names: Sequence[str], processors: Sequence[Callable[[Any], Any] | None], *, positional: bool
) -> Callable[[Mapping[str, Any]], tuple[Any, ...] | dict[str, Any]]:
    """A function that binds one row's parameters as the driver takes them: each bound name's value,
    through its column type's processor where it has one, as a tuple in the statement's order
    (positional paramstyles) or a dict by name. Made for the statement from its names alone (each
    written as a literal), so a row costs no loop over names and processors: an action's log row ~1 µs
    less than the loop's ~3 µs of overhead on the writer's thread.

    >>> bind = binder(["b", "a", "b"], [None, str.upper, None], positional=True)
    >>> bind({"a": "x", "b": 1})
    (1, 'X', 1)
    >>> binder(["a"], [str.upper], positional=False)({"a": "x"})
    {'a': 'X'}
    """
    namespace: dict[str, Any] = {}
    values = []
    for number, (name, process) in enumerate(zip(names, processors, strict=True)):
        value = f"row[{name!r}]"
        if process is not None:
            namespace[f"_process_{number}"] = process
            value = f"_process_{number}({value})"
        values.append(value)
    if positional:
        made = "(" + "".join(f"{value}, " for value in values) + ")"
    else:
        made = "{" + ", ".join(f"{name!r}: {value}" for name, value in zip(names, values, strict=True)) + "}"
    exec(f"def bound(row):\n    return {made}\n", namespace)  # built from the statement's names alone
    bound: Callable[[Mapping[str, Any]], tuple[Any, ...] | dict[str, Any]] = namespace["bound"]
    return bound


def remembering_last(process: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A bind processor that answers its last value again without processing it: a group commit's
    actions are written at one `now`, so SQLite's DATETIME text (~2 µs a moment, SQLAlchemy's `%`
    formatting) is made once for all the rows of a statement instead of once per row. The last value
    and its text are kept as one tuple (replaced whole: a thread reading it sees a matched pair), and
    the moment is held, so no other object can take its identity.

    >>> calls = []
    >>> bind = remembering_last(lambda value: calls.append(value) or str(value))
    >>> moment = object()
    >>> bind(moment) == bind(moment), len(calls), bind(None), len(calls)
    (True, 1, 'None', 2)
    """
    last: list[tuple[Any, Any]] = [(_NOTHING, None)]

    def bound(value: Any) -> Any:
        kept, text = last[0]
        if value is kept:
            return text
        text = process(value)
        last[0] = (value, text)
        return text

    return bound


_NOTHING = object()


# The bound names differ from the columns set (an UPDATE's SET and WHERE would otherwise share them).
_MOVE_ON = (
    update(_pages)
    .where(and_(_pages.c.id == bindparam("b_id"), _pages.c.version == bindparam("b_expected")))
    .values(
        version=bindparam("b_version"),
        phase=bindparam("b_phase"),
        side_to_act=bindparam("b_side_to_act"),
        winner=bindparam("b_winner"),
        status=bindparam("b_status"),
        updated_at=bindparam("b_now"),
        setup_moved_at=bindparam("b_setup_moved_at"),
    )
)
# The same, and only while no logged action of the page carries the move_id (one statement, one round
# trip: the caller asks which of the two failed only when it matched nothing).
_MOVE_ON_NEW_MOVE = _MOVE_ON.where(
    ~exists(
        select(_actions.c.id).where(
            and_(_actions.c.page_id == bindparam("b_id"), _actions.c.move_id == bindparam("b_move_id"))
        )
    )
)
MOVE_ON = Prepared(_MOVE_ON)
MOVE_ON_NEW_MOVE = Prepared(_MOVE_ON_NEW_MOVE)
_LOGGED = ["page_id", "version", "side", "action", "events", "move_id", "created_at"]
LOG = Prepared(insert(_actions), _LOGGED)
# PostgreSQL's one statement per action: the page row moved on (as MOVE_ON_NEW_MOVE: with no move_id
# the NOT EXISTS compares with NULL and always holds), and the entry logged only from the row it moved.
_MOVED = _MOVE_ON_NEW_MOVE.returning(_pages.c.id).cte("moved")
MOVE_ON_AND_LOG = Prepared(
    insert(_actions).from_select(
        _LOGGED,
        select(_MOVED.c.id, *(bindparam(name, type_=_actions.c[name].type) for name in _LOGGED[1:])),
    )
)
# The same statement NOTIFYing the action's commit (a payload made before the write): `told` calls
# pg_notify once for the row `moved` returned, none when it matched nothing. Referenced by the INSERT, so
# it runs (a SELECT in WITH runs only as far as it is read; pg_notify is volatile, so PostgreSQL keeps
# the CTE as written). PostgreSQL queues the notice in the transaction and delivers it only when that
# commits, in commit order, and never for a statement or transaction undone.
#
# Only when someone hears it: when a process other than the writer's (`b_sender`, its process id; NULL:
# always) follows the page (`pages.followers`, " a b ", written by broadcast.PostgresBroadcast.follow).
# `moved` returns the row as the UPDATE left it, after any follower's write that held the row's lock
# first: a follower whose write came first is told, and one whose write came after reads the move in
# the log (it reads the page once its write is done). The CASE calls pg_notify only when it holds.
_MOVED_FOLLOWED = _MOVE_ON_NEW_MOVE.returning(_pages.c.id, _pages.c.followers).cte("moved")
_SENDER = bindparam("b_sender", type_=_pages.c.followers.type)
_SPACE: ColumnClause[Any] = literal_column("' '")  # written into the statement: no parameter to bind
_OTHERS_FOLLOW = or_(
    _SENDER.is_(None),
    func.replace(func.coalesce(_MOVED_FOLLOWED.c.followers, _SPACE), _SPACE + _SENDER + _SPACE, _SPACE)
    != _SPACE,
)
_TOLD = select(
    _MOVED_FOLLOWED.c.id,
    case((_OTHERS_FOLLOW, func.pg_notify(bindparam("b_channel"), bindparam("b_payload")))).label("told"),
).cte("told")
MOVE_ON_LOG_AND_NOTIFY = Prepared(
    insert(_actions).from_select(
        _LOGGED,
        select(_TOLD.c.id, *(bindparam(name, type_=_actions.c[name].type) for name in _LOGGED[1:])),
    )
)
# The dialects that write an action with MOVE_ON_AND_LOG (the others have no data-modifying CTE).
_ONE_STATEMENT = frozenset({"postgresql"})
# The dialects whose prepared statements go straight to the driver (driver.py), not through SQLAlchemy.
_STRAIGHT_TO_DRIVER = frozenset({"postgresql", "sqlite"})
# An action's NOTIFY, sent by its own statement when another process follows the page: (channel,
# payload, the writing process's id as the page's followers name it; None: sent whoever follows).
Notify = tuple[str, str, str | None]
# An action's write: the page id, the version it expects, the page row's new summary, the log's entry.
Move = tuple[str, int, dict[str, Any], dict[str, Any]]
CHECKPOINT = Prepared(
    update(_states)
    .where(_states.c.page_id == bindparam("b_id"))
    .values(version=bindparam("b_version"), state=bindparam("b_state"))
)
FIRST_CHECKPOINT = Prepared(insert(_states), ["page_id", "version", "state"])
# Only the moves of pages with a clock run it (a page without one never does: its hot path is unchanged).
# The reminder belongs to its deadline: a new deadline (the side to act changed, the page ended) brings its
# own reminder (or none), while an action that leaves the deadline as it was (a send, then a flick of the
# same turn) leaves the reminder as it was — waiting, or already sent (NULL): once per move. SET's
# expressions read the row as it was before the UPDATE (SQLite and PostgreSQL alike).
CLOCK = Prepared(
    update(_pages)
    .where(_pages.c.id == bindparam("b_id"))
    .values(
        clock_state=bindparam("b_clock_state"),
        deadline=bindparam("b_deadline"),
        reminder_at=case(
            # Typed as the column: its own bind processor writes the moment (SQLite's DATETIME text), so
            # the claim's `reminder_at = :at` matches it to the microsecond.
            (
                _pages.c.deadline.is_distinct_from(bindparam("b_deadline")),
                bindparam("b_reminder_at", type_=_pages.c.reminder_at.type),
            ),
            else_=_pages.c.reminder_at,
        ),
    )
)


def state_text(state: StateJson) -> str:
    """Writes a private state as the JSON text `page_states` keeps (orjson: a tenth of stdlib's time);
    a checkpoint's text made beforehand (the server's: pages/checkpoint_text.py) is kept as it is."""
    return state if isinstance(state, str) else orjson.dumps(state).decode()


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
        "b_setup_moved_at": setup_moved_at(summary["status"], summary["phase"], now),
    }


def move_on_and_log_parameters(move: Move, now: datetime, notify: Notify | None = None) -> dict[str, Any]:
    """The parameters of MOVE_ON_AND_LOG for one action: MOVE_ON's, and the log row's columns but the
    page id (the statement takes it from the row it moved on); with `notify`, MOVE_ON_LOG_AND_NOTIFY's."""
    page_id, expected_version, summary, entry = move
    parameters = move_on_parameters(page_id, expected_version, summary, entry["move_id"], now)
    parameters.update(entry)
    parameters["created_at"] = now
    if notify is not None:
        parameters["b_channel"], parameters["b_payload"], parameters["b_sender"] = notify
    return parameters


def move_on(connection: Connection, move: Move, now: datetime, notify: Notify | None = None) -> bool:
    """Moves the page row to the move's summary (version, phase, side_to_act, winner, status) and appends
    its entry (version, side, action, events, move_id) to its log, only if the page is still at
    `expected_version` and its log holds no entry of the same move_id; returns False (writing nothing)
    when either fails. Another process logging the same version or move_id at the same moment makes the
    INSERT raise IntegrityError (the transaction must then be rolled back). `notify` (PostgreSQL only)
    is NOTIFYed by the same statement when it moved the row (delivered at commit)."""
    page_id, expected_version, summary, entry = move
    move_id = entry["move_id"]
    if connection.dialect.name in _ONE_STATEMENT:
        row = move_on_and_log_parameters(move, now, notify)
        return _one_statement(notify is not None).execute(connection, row) == 1
    assert notify is None, "only PostgreSQL NOTIFYs"
    statement = MOVE_ON if move_id is None else MOVE_ON_NEW_MOVE
    moved = statement.execute(
        connection, move_on_parameters(page_id, expected_version, summary, move_id, now)
    )
    if moved != 1:
        return False
    LOG.execute(connection, {**entry, "page_id": page_id, "created_at": now})
    return True


def move_on_many(
    connection: Connection,
    moves: Sequence[Move],
    now: datetime,
    notifies: Sequence[Notify] | None = None,
) -> bool:
    """Moves on several pages at once, each as `move_on` does (`notifies`: each move's NOTIFY, in the
    same order), with one UPDATE and one INSERT executed for all of them (on PostgreSQL one statement,
    NOTIFYing each action as it writes it). Returns False when not every page row matched (one was moved
    on, or a move_id is logged already): some rows may then be updated (and notified), so the caller
    rolls the transaction back and writes the moves one by one to find which one failed."""
    if connection.dialect.name in _ONE_STATEMENT:
        notifying: Sequence[Notify | None] = [None] * len(moves) if notifies is None else notifies
        rows = [
            move_on_and_log_parameters(move, now, told) for move, told in zip(moves, notifying, strict=True)
        ]
        # psycopg's executemany counts the rows of all its statements together.
        return _one_statement(notifies is not None).execute(connection, rows) == len(moves)
    assert notifies is None, "only PostgreSQL NOTIFYs"
    moved = MOVE_ON_NEW_MOVE.execute(
        connection,
        [
            move_on_parameters(page_id, expected, summary, entry["move_id"], now)
            for page_id, expected, summary, entry in moves
        ],
    )
    if moved != len(moves):
        return False
    LOG.execute(
        connection, [{**entry, "page_id": page_id, "created_at": now} for page_id, _, _, entry in moves]
    )
    return True


def _one_statement(notifying: bool) -> Prepared:
    return MOVE_ON_LOG_AND_NOTIFY if notifying else MOVE_ON_AND_LOG


def save_state(connection: Connection, page_id: str, version: int, state: StateJson) -> None:
    """Checkpoints the page's private state at `version` (the page's row in `page_states`, made if it has
    none: a page stored before checkpoints had their own table may lack one)."""
    text = state_text(state)
    saved = CHECKPOINT.execute(connection, {"b_id": page_id, "b_version": version, "b_state": text})
    if saved != 1:
        FIRST_CHECKPOINT.execute(connection, {"page_id": page_id, "version": version, "state": text})


def set_clock(connection: Connection, page_id: str, clock: ClockUpdate) -> None:
    """Writes the page's new clock state and deadline, and with a new deadline its reminder (in the
    transaction of the move that changed them)."""
    CLOCK.execute(
        connection,
        {
            "b_id": page_id,
            "b_clock_state": clock.state,
            "b_deadline": clock.deadline,
            "b_reminder_at": clock.reminder_at,
        },
    )
