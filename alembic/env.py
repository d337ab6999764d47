"""Alembic environment: runs migrations on a connection handed over by the server, or on a URL."""

from __future__ import annotations

import os
from logging.config import fileConfig

from sqlalchemy import Connection

from alembic import context
from dotfight.store.database import make_engine
from dotfight.store.models import Base

config = context.config
target_metadata = Base.metadata


def _database_url() -> str | None:
    """The URL of a run by hand: $DOTFIGHT_DATABASE_URL, else alembic.ini's."""
    return os.environ.get("DOTFIGHT_DATABASE_URL") or config.get_main_option("sqlalchemy.url")


def _run(connection: Connection) -> None:
    # render_as_batch: SQLite can only ALTER tables by copying them, which batch mode does.
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    """Writes the migration SQL instead of running it."""
    url = _database_url()
    context.configure(url=url, target_metadata=target_metadata, literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Runs the migrations on the server's connection, or on a fresh engine when run by hand."""
    handed_over = config.attributes.get("connection")
    if handed_over is not None:
        _run(handed_over)
        return
    if config.config_file_name is not None:
        fileConfig(config.config_file_name)
    url = _database_url()
    if not url:
        raise RuntimeError("no database URL: set DOTFIGHT_DATABASE_URL")
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            _run(connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
