"""The database connection: an SQLAlchemy engine (with SQLite tuned for safe concurrent use) and sessions,
and the checks that tell whether the database can take a write right now."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import time
from typing import Any

import orjson
from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session, sessionmaker

from dotfight.store import driver
from dotfight.store.records import StoreUnavailable

# How long an SQLite connection waits for another writer before giving up, in seconds (the default of
# the server's `DB_BUSY_TIMEOUT_S` setting).
DEFAULT_BUSY_TIMEOUT_S = 5.0
# How often the free space of the database's disk is looked at (a disk fills in minutes, not
# milliseconds, and the look costs tens of microseconds).
DISK_CHECK_EVERY_S = 1.0


def _pragmas(busy_timeout_s: float) -> Any:
    def set_sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
        # Set on every new connection, outside any transaction: a PRAGMA run on a migration connection
        # would open a transaction that swallows Alembic's version row (see TOOLCHAIN.md).
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=FULL")
            cursor.execute(f"PRAGMA busy_timeout={_milliseconds(busy_timeout_s)}")
            cursor.execute("PRAGMA foreign_keys=ON")
        finally:
            cursor.close()

    return set_sqlite_pragmas


def json_text(value: Any) -> str:
    """Writes a JSON column's value (an action, its events, a page's rules) as the text stored: compact,
    with orjson (the events of an action cost a tenth of stdlib json's time on the writer's thread);
    stdlib json answers what orjson refuses (integers beyond 64 bits, keys that are not strings).

    >>> json_text({"kind": "flick", "at": [0.5, 1]})
    '{"kind":"flick","at":[0.5,1]}'
    >>> json_text({"big": 2**70})
    '{"big":1180591620717411303424}'
    """
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value, separators=(",", ":"))


def _milliseconds(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def make_engine(url: str, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S, pool_size: int = 5) -> Engine:
    """Creates an engine for any SQLAlchemy URL; SQLite gets WAL, synchronous=FULL and a busy timeout.

    `pool_size` connections are kept open (the server's threads that use the database at once).
    """
    is_sqlite = url.startswith("sqlite")
    connect_args: dict[str, Any] = {"check_same_thread": False} if is_sqlite else {}
    in_memory = is_sqlite and (url in ("sqlite://", "sqlite:///:memory:") or "mode=memory" in url)
    options: dict[str, Any] = {} if in_memory else {"pool_size": pool_size, "max_overflow": pool_size}
    engine = create_engine(
        url,
        connect_args=connect_args,
        pool_pre_ping=not is_sqlite,
        json_serializer=json_text,
        **options,
    )
    if is_sqlite:
        event.listen(engine, "connect", _pragmas(busy_timeout_s))
    else:
        # A SET inside a transaction that rolls back is undone: `begin_write` must set it again.
        event.listen(engine, "rollback", _forget_lock_timeout)
    return engine


def _forget_lock_timeout(connection: Connection) -> None:
    if connection.invalidated:  # the driver's connection is gone, and what was remembered of it
        return
    connection.info.pop("lock_timeout_ms", None)


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    """Returns a session factory whose objects stay readable after commit."""
    return sessionmaker(engine, expire_on_commit=False)


def database_answers(engine: Engine) -> bool:
    """Tells whether the database answers a trivial query."""
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except Exception:
        return False
    return True


def begin_write(connection: Connection, wait_s: float) -> None:
    """Opens the connection's transaction as a writer that waits at most `wait_s` for the write lock.

    SQLite: `BEGIN IMMEDIATE` takes the write lock at once (waiting up to the busy timeout, set for
    this transaction), so a transaction never reads first and then finds it cannot write; PostgreSQL:
    a `lock_timeout` for the row locks (set on the connection, and only when it changes or a rollback
    undid it), and on the writer's connection the BEGIN left to the transaction's first statement
    (driver.py). The statements go straight to the driver: this runs once per group commit, on the
    writer's hot path. Called at the start of the writer's transaction (writer._transaction).
    """
    # Whole tenths of a second, rounded down (never longer than asked): most batches then find the
    # connection's busy timeout already right and skip the PRAGMA.
    wait_ms = max(1, int(wait_s * 10) * 100)
    if connection.dialect.name == "sqlite":
        sqlite_driver = connection.connection.dbapi_connection
        assert sqlite_driver is not None
        try:
            if connection.info.get("busy_timeout_ms") != wait_ms:
                sqlite_driver.execute(f"PRAGMA busy_timeout={wait_ms}")
                connection.info["busy_timeout_ms"] = wait_ms
            sqlite_driver.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:  # locked past the timeout: nothing was written
            raise DatabaseUnavailable(f"the database is busy ({error})") from error
    elif connection.dialect.name == "postgresql":
        if connection.info.get("lock_timeout_ms") != wait_ms:
            # Set for the connection (not LOCAL) and remembered: most batches skip this round trip.
            connection.exec_driver_sql(f"SET lock_timeout = {wait_ms}")
            connection.info["lock_timeout_ms"] = wait_ms
        if connection.get_execution_options().get("isolation_level") == "AUTOCOMMIT":
            driver.defer_begin(connection)  # the writer's connection (driver.deferring_begin)


class Transaction:
    """One write transaction on the writer's connection, as its jobs see it: the Core `connection`, on
    which the hot path's statements run with plain parameters, and an ORM `session` joined to the same
    transaction, made only when a job asks for one (creating a page, a bot lease).

    The session never commits or closes the transaction (`join_transaction_mode="rollback_only"`): the
    writer does, once for the whole batch, after `finish` flushed the session's objects and ran its
    before-commit hooks.

    >>> engine = make_engine("sqlite://")
    >>> with engine.connect() as connection, connection.begin():
    ...     transaction = Transaction(connection)
    ...     transaction.session.execute(text("SELECT 1")).scalar()
    ...     transaction.finish()
    1
    """

    __slots__ = ("_session", "connection")

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._session: Session | None = None

    @property
    def session(self) -> Session:
        """An ORM session in this transaction (made at the first call)."""
        if self._session is None:
            if not self.connection.in_transaction():
                # The writer's SQLite transaction is sqlite3's own (writer._transaction): SQLAlchemy's
                # begun in it first, so the session joins it instead of committing it as its own.
                self.connection.begin()
            self._session = Session(
                bind=self.connection, join_transaction_mode="rollback_only", expire_on_commit=False
            )
        return self._session

    def finish(self) -> None:
        """Flushes the session's objects and runs its before-commit hooks, if a session was made; the
        transaction itself is committed by its owner afterwards."""
        if self._session is not None:
            self._session.commit()

    def close(self) -> None:
        """Lets go of the session, if one was made (the transaction is left to its owner)."""
        if self._session is not None:
            self._session.close()
            self._session = None


def _probe_write_lock(connection: Connection, wait_s: float) -> None:
    if connection.dialect.name == "sqlite":
        connection.info.pop("busy_timeout_ms", None)  # changed here: the writer sets its own again
        connection.exec_driver_sql(f"PRAGMA busy_timeout={_milliseconds(wait_s)}")
        try:
            connection.exec_driver_sql("BEGIN IMMEDIATE")
            connection.exec_driver_sql("ROLLBACK")
        finally:
            connection.exec_driver_sql(f"PRAGMA busy_timeout={_milliseconds(DEFAULT_BUSY_TIMEOUT_S)}")
    else:
        read_only = connection.execute(text("SHOW transaction_read_only")).scalar()
        if read_only == "on":
            raise RuntimeError("the database is read-only")


def database_writable(engine: Engine, wait_s: float) -> bool:
    """Tells whether a writer could start a transaction within `wait_s` (SQLite: nobody else holds the
    write lock that long; PostgreSQL: the server is not read-only). Nothing is written."""
    try:
        with engine.connect() as connection:
            _probe_write_lock(connection, wait_s)
    except Exception:
        return False
    return True


class DatabaseFile:
    """The file of an SQLite database, as it was when the server opened it, and the free space it needs.

    SQLite keeps writing to a file that was deleted or replaced under it (the open descriptor holds the
    old inode), and every such write is lost at the next start: the server checks before it writes.
    """

    def __init__(self, path: str, device: int, inode: int, min_free_bytes: int) -> None:
        self.path = path
        self.device = device
        self.inode = inode
        self.min_free_bytes = min_free_bytes
        self._disk_checked_at = -math.inf
        self._disk_full = False

    @classmethod
    def of(cls, engine: Engine, min_free_bytes: int) -> DatabaseFile | None:
        """Returns the file behind an SQLite engine (None for other databases and in-memory ones)."""
        database = engine.url.database
        if engine.dialect.name != "sqlite" or not database or database == ":memory:":
            return None
        info = os.stat(database)
        return cls(os.path.abspath(database), info.st_dev, info.st_ino, min_free_bytes)

    def problem(self) -> str | None:
        """Says why the file cannot take a write now (gone, replaced, disk full), or None. The file is
        looked at every time (a stat); the disk's free space at most every DISK_CHECK_EVERY_S."""
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return "the database file is gone"
        if (info.st_dev, info.st_ino) != (self.device, self.inode):
            return "the database file was replaced"
        now = time.monotonic()
        if now - self._disk_checked_at >= DISK_CHECK_EVERY_S:
            disk = os.statvfs(os.path.dirname(self.path))
            self._disk_full = disk.f_bavail * disk.f_frsize < self.min_free_bytes
            self._disk_checked_at = now
        return "the disk holding the database is full" if self._disk_full else None


class DatabaseUnavailable(Exception):
    """The database cannot take a write now: its file is gone or its disk full, or the write lock stayed
    taken for the whole busy timeout. Nothing was written; the same write may succeed later."""


def is_database_trouble(error: BaseException) -> bool:
    """Tells whether an error means the database cannot be reached or written now (rather than a refusal,
    a constraint or a bug)."""
    if isinstance(error, DatabaseUnavailable | OperationalError | InterfaceError | PoolTimeout):
        return True
    return isinstance(error, DBAPIError) and error.connection_invalidated


def store_unavailable(error: BaseException) -> StoreUnavailable:
    """The protocol's word for a database in trouble (named in detail when the store itself found it:
    its file gone, its disk full, its lock held; a driver's error text is not for players)."""
    unavailable = StoreUnavailable(str(error) if isinstance(error, DatabaseUnavailable) else "")
    unavailable.__cause__ = error
    return unavailable
