"""The database connection: an SQLAlchemy engine (with SQLite tuned for safe concurrent use) and sessions."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.orm import Session, sessionmaker

# How long an SQLite connection waits for another writer before giving up, in milliseconds.
SQLITE_BUSY_TIMEOUT_MS = 5000


def _set_sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # Set on every new connection, outside any transaction: a PRAGMA run on a migration connection
    # would open a transaction that swallows Alembic's version row (see TOOLCHAIN.md).
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
    finally:
        cursor.close()


def make_engine(url: str) -> Engine:
    """Creates an engine for any SQLAlchemy URL; SQLite gets WAL, synchronous=FULL and a busy timeout."""
    is_sqlite = url.startswith("sqlite")
    connect_args: dict[str, Any] = {"check_same_thread": False} if is_sqlite else {}
    engine = create_engine(url, connect_args=connect_args, pool_pre_ping=not is_sqlite)
    if is_sqlite:
        event.listen(engine, "connect", _set_sqlite_pragmas)
    return engine


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
