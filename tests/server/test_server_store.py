"""Storage: the migrations build exactly the tables of the models, with SQLite tuned as promised, and
the single writer commits waiting writes together without letting one bad write spoil the others."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, func, select, text
from sqlalchemy.orm import Session

from dotfight.store.database import Transaction, make_engine
from dotfight.store.migrations import DEFAULT_SCRIPT_LOCATION, upgrade_to_head
from dotfight.store.models import Base, PageRow, utc_now
from dotfight.store.records import JobRefused
from dotfight.store.writer import BatchWriter


def alembic_head() -> str:
    """The newest revision (several branches add migrations: no test names one)."""
    head = ScriptDirectory(str(DEFAULT_SCRIPT_LOCATION)).get_current_head()
    assert head is not None
    return head


@pytest.fixture
def database(tmp_path: Path) -> Engine:
    engine = make_engine(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    upgrade_to_head(engine)
    return engine


def test_migrations_build_the_models_schema(database: Engine) -> None:
    with database.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
        assert differences == []
        assert connection.execute(text("SELECT version_num FROM alembic_version")).scalar() == alembic_head()


def test_sqlite_connections_use_wal_full_sync_and_a_busy_timeout(database: Engine) -> None:
    with database.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert connection.execute(text("PRAGMA synchronous")).scalar() == 2  # FULL
        assert connection.execute(text("PRAGMA busy_timeout")).scalar() == 5000


def test_migrating_twice_changes_nothing(database: Engine) -> None:
    upgrade_to_head(database)
    with database.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 1


def page_row(page_id: str) -> PageRow:
    now = utc_now()
    return PageRow(
        id=page_id, rules={}, preset="quick", seed="0" * 32, seed_sha256="0" * 64, mode="local",
        status="open", phase="bases", version=0, created_at=now, updated_at=now,
    )  # fmt: skip


async def test_one_bad_write_in_a_batch_spoils_none_of_the_others(database: Engine) -> None:
    writer = BatchWriter(database)
    release = threading.Event()

    def hold(transaction: Transaction) -> tuple[str, None]:
        release.wait(10)  # keeps the writer busy so that the next jobs queue up into one batch
        return "held", None

    def insert(page_id: str) -> Any:
        def job(transaction: Transaction) -> tuple[str, None]:
            transaction.session.add(page_row(page_id))
            transaction.session.flush()
            return page_id, None

        return job

    def refuse(transaction: Transaction) -> tuple[str, None]:
        raise JobRefused("refused before writing")

    def break_the_transaction(transaction: Transaction) -> tuple[str, None]:
        transaction.session.add(page_row("first"))  # the same id again: the batch's flush fails
        transaction.session.flush()
        return "never", None

    held = asyncio.ensure_future(writer.run(hold))
    await asyncio.sleep(0.05)
    jobs = [
        asyncio.ensure_future(writer.run(job))
        for job in (insert("first"), refuse, break_the_transaction, insert("second"))
    ]
    await asyncio.sleep(0.05)
    release.set()
    results = await asyncio.gather(held, *jobs, return_exceptions=True)
    writer.close()
    assert results[0] == "held" and results[1] == "first" and results[4] == "second"
    assert isinstance(results[2], JobRefused) and str(results[2]) == "refused before writing"
    assert isinstance(results[3], Exception) and not isinstance(results[3], JobRefused)
    with Session(database) as session:
        assert session.scalar(select(func.count()).select_from(PageRow)) == 2


def test_two_processes_migrating_one_sqlite_file_at_once_both_start(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'race.sqlite3'}"
    engines = [make_engine(url), make_engine(url)]
    failures: list[BaseException] = []

    def migrate(engine: Engine) -> None:
        try:
            upgrade_to_head(engine)
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=migrate, args=(engine,)) for engine in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert failures == []
    with engines[0].connect() as connection:
        assert connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == [
            alembic_head()
        ]
