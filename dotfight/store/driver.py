"""The writer's statements sent straight to the DB-API driver (psycopg, sqlite3) on its connection,
through one cursor kept for the connection's life.

Per action, SQLAlchemy's execution context (its events, its result object, a new driver cursor each
time) cost more of the writer's CPU than the statement itself; here a statement is the driver's
`execute` on a cursor made once. What callers rely on is kept: a driver's error is raised as
SQLAlchemy raises it (`DBAPIError.instance`: IntegrityError for a unique constraint, OperationalError
for a database gone), and a disconnect invalidates the SQLAlchemy connection, so the writer's "lost
connection, try once more on a new one" and every store's "database down" translation hold unchanged.

On PostgreSQL the writer's transactions open with their first statement (`deferring_begin`): its
connection runs in the driver's autocommit mode, and each transaction's BEGIN is sent by whichever
statement comes first — in one pipeline with it on the hot path (psycopg's own BEGIN, outside
autocommit, is a round trip of its own, even in pipeline mode), just before it for a statement through
SQLAlchemy (an ORM job). The commit (psycopg's, sending COMMIT when a transaction is open) and the
rollback are SQLAlchemy's as before. A batch of one action written by one statement sends no BEGIN at
all (`committing_alone`): in autocommit the statement is its own transaction, one round trip with no
pipeline and no COMMIT. On SQLite the writer sends its own BEGIN IMMEDIATE already
(database.begin_write).
"""

from __future__ import annotations

import select
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, event
from sqlalchemy.exc import DBAPIError

# The kept cursor, in the info of the driver's connection (which lives and dies with it).
_CURSOR = "dotfight_cursor"
# Set while the connection's transaction is begun but its BEGIN not sent yet.
_BEGIN_DEFERRED = "dotfight_begin_deferred"

Parameters = Mapping[str, Any] | Sequence[Any]


def rows_written(connection: Connection, sql: str, parameters: Parameters | Sequence[Parameters]) -> int:
    """Executes `sql` once (a mapping or tuple of parameters) or once per row (a list of them) on the
    connection's driver, in its current transaction; returns the rows it counted (all rows' together)."""
    driver = connection.connection.dbapi_connection
    cursor = connection.info.get(_CURSOR)
    # sqlite3's cursors have no `closed`: one of a closed connection raises, and is translated below.
    if cursor is None or getattr(cursor, "closed", False) or cursor.connection is not driver:
        cursor = connection.info[_CURSOR] = driver.cursor()  # type: ignore[union-attr]
    many = isinstance(parameters, list)
    try:
        if connection.info.pop(_BEGIN_DEFERRED, False):
            with driver.pipeline():  # type: ignore[union-attr]
                cursor.execute("BEGIN")
                _execute(cursor, sql, parameters)
        else:
            _execute(cursor, sql, parameters)
    except connection.dialect.loaded_dbapi.Error as error:
        raise _as_sqlalchemy_raises(connection, error, sql, parameters, many) from error
    rowcount: int = cursor.rowcount
    return rowcount


def commit(connection: Connection) -> None:
    """Commits the driver's open transaction on the connection (one SQLAlchemy never began: the
    writer's BEGIN IMMEDIATE on SQLite), its error raised as SQLAlchemy raises it."""
    driver = connection.connection.dbapi_connection
    assert driver is not None
    try:
        driver.commit()
    except connection.dialect.loaded_dbapi.Error as error:
        raise _as_sqlalchemy_raises(connection, error, "COMMIT", (), False) from error


def rollback(connection: Connection) -> None:
    """Rolls the driver's open transaction on the connection back, SQLAlchemy's first if it began one
    (a statement through it autobegins); a connection already gone has nothing to roll back."""
    if connection.invalidated or connection.closed:
        return
    if connection.in_transaction():
        connection.rollback()
        return
    driver = connection.connection.dbapi_connection
    if driver is not None:
        try:
            driver.rollback()
        except connection.dialect.loaded_dbapi.Error as error:
            raise _as_sqlalchemy_raises(connection, error, "ROLLBACK", (), False) from error


def _execute(cursor: Any, sql: str, parameters: Any) -> None:
    if isinstance(parameters, list):
        cursor.executemany(sql, parameters)
    else:
        cursor.execute(sql, parameters)


def deferring_begin(connection: Connection) -> Connection:
    """Sets a connection up (PostgreSQL's, the writer's) so that each transaction's BEGIN, asked for with
    `defer_begin`, is sent by its first statement: the driver's autocommit mode (SQLAlchemy sets it back
    when the connection goes back to the pool), and a hook giving a statement through SQLAlchemy the
    BEGIN first."""
    connection.execution_options(isolation_level="AUTOCOMMIT")
    event.listen(connection, "before_cursor_execute", _begin_first)
    return connection


def backend_pid(connection: Connection) -> int:
    """The process id of the PostgreSQL backend serving a connection: the sender PostgreSQL names in the
    NOTIFYs its statements send."""
    driver: Any = connection.connection.dbapi_connection
    return int(driver.info.backend_pid)


def defer_begin(connection: Connection) -> None:
    """Begins the connection's transaction at its next statement (a connection set up by
    `deferring_begin`); a transaction that sends none has nothing to commit."""
    connection.info[_BEGIN_DEFERRED] = True


def committing_alone(connection: Connection) -> None:
    """Makes the connection's next statement its own transaction (a connection set up by
    `deferring_begin`: no BEGIN is sent, autocommit commits it as it runs), once it is known to be still
    connected.

    The statement is its own commit, so a connection lost while it runs may have committed it and the
    writer must not write it again; a connection the database dropped since its last statement (a
    restart) is found here instead, before anything is sent, with the error a statement would have met.
    The writer's connection LISTENs to nothing, so between two statements the server sends it nothing
    but its goodbye (the FATAL before it closes the connection): one poll with no wait tells, and a
    connection with anything to read is closed and given up as lost (rarely something else, a notice:
    then a new connection costs a connect, never a write done twice)."""
    connection.info.pop(_BEGIN_DEFERRED, None)
    driver: Any = connection.connection.dbapi_connection
    dbapi = connection.dialect.loaded_dbapi
    try:
        said_goodbye = bool(select.select((driver.pgconn.socket,), (), (), 0)[0])
    except (OSError, dbapi.Error):  # no socket any more
        said_goodbye = True
    if said_goodbye or driver.broken:
        driver.close()
        error = dbapi.OperationalError("the server closed the connection while it was idle")
        raise _as_sqlalchemy_raises(connection, error, "", (), False)


def _begin_first(connection: Connection, cursor: Any, *_: Any) -> None:
    if connection.info.pop(_BEGIN_DEFERRED, False):
        cursor.execute("BEGIN")


def _as_sqlalchemy_raises(
    connection: Connection, error: Any, sql: str, parameters: Any, many: bool
) -> BaseException:
    """The error SQLAlchemy's own execution would raise for the driver's `error`, the connection
    invalidated first when the error says it is gone."""
    dialect = connection.dialect
    lost = dialect.is_disconnect(error, connection.connection.dbapi_connection, None)
    wrapped: BaseException = DBAPIError.instance(
        sql,
        parameters,
        error,
        dialect.loaded_dbapi.Error,
        hide_parameters=connection.engine.hide_parameters,
        connection_invalidated=lost,
        dialect=dialect,
        ismulti=many,
    )
    if lost:
        connection.invalidate(error)
    return wrapped
