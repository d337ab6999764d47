"""Applies the Alembic migrations programmatically (the server does it on every start).

Several server processes may start at once on one database (e.g. uvicorn workers, or a new release
rolled out next to the old one), so the migration runs under a lock: a PostgreSQL advisory lock held by
the migration's transaction, or a file lock next to an SQLite file. The second process waits, then finds
the schema at head and does nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path

from alembic.config import Config
from sqlalchemy import Connection, Engine, text

from alembic import command

# alembic/ at the repository root, next to the package (an editable install keeps it there).
_PACKAGE = Path(__file__).resolve().parents[1]
# An installed wheel carries the migrations inside the package (setup.py copies them there); a source
# checkout keeps them at the top of the repository. (Next to an installed package, "alembic" would be the
# Alembic library itself, which is why the packaged copy has its own name.)
DEFAULT_SCRIPT_LOCATION = next(
    (place for place in (_PACKAGE / "_alembic", _PACKAGE.parent / "alembic") if (place / "env.py").is_file()),
    _PACKAGE.parent / "alembic",
)
# Any fixed number: the key of the PostgreSQL advisory lock taken while migrating ("dotfight").
ADVISORY_LOCK_KEY = 0x646F7466_69676874 & 0x7FFFFFFFFFFFFFFF


@contextlib.contextmanager
def _sqlite_file_lock(engine: Engine) -> Iterator[None]:
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        yield
        return
    with open(f"{database}-migrate-lock", "a+b") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock_file, fcntl.LOCK_UN)


def _take_advisory_lock(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        # Released by PostgreSQL itself when this transaction ends (commit, rollback or lost connection).
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK_KEY})


def upgrade_to_head(engine: Engine, script_location: Path = DEFAULT_SCRIPT_LOCATION) -> None:
    """Brings the database behind `engine` to the newest schema, one process at a time."""
    if not (script_location / "env.py").is_file():
        raise FileNotFoundError(f"no Alembic scripts at {script_location}")
    config = Config()
    config.set_main_option("script_location", str(script_location))
    # The connection is handed over directly rather than a URL: URLs may hold '%' which Alembic's
    # config parser would try to interpolate.
    with _sqlite_file_lock(engine), engine.begin() as connection:
        _take_advisory_lock(connection)
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
