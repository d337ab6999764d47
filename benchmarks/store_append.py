"""The database writer's hot path alone: appending actions to pages, as the ORM did it before issue 12
against SQLAlchemy Core with the state cache out of the page row (what the store does now).

    python3 benchmarks/store_append.py [--pages 200] [--batches 300] [--batch 4] [--rounds 3]

Each contender appends `--batch` actions (to different pages) per transaction, with group commit on
SQLite (WAL, synchronous=FULL) as the server's writer thread does, for `--batches` transactions, and
prints its CPU per action (this thread only) and the bytes of WAL written per commit. Contenders, run
interleaved over `--rounds` rounds on fresh files:

- orm: the writer job before issue 12 — a SELECT for the move_id, the conditional UPDATE of the page
  row (which carries the 19 KB state cache, rewritten every 8th version), an ActionRow added and flushed;
- core-each: the store's hot path as the writer runs it (dotfight/store/appends.py, issue 12): per
  action one conditional UPDATE of the page's small row (the move_id checked inside it) and one INSERT
  of the log entry, the private state into `page_states` every 8th version;
- core: the same statements once per transaction (executemany), a step not taken yet;
- core+orjson: core, with the log's JSON columns written by orjson.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import (
    JSON,
    DateTime,
    Engine,
    ForeignKey,
    Integer,
    String,
    Table,
    UniqueConstraint,
    insert,
    select,
    update,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dotfight.engine import RuleSet, apply
from dotfight.server.pages.authority import CACHE_EVERY
from dotfight.store import appends
from dotfight.store.database import make_engine, make_session_factory
from dotfight.store.migrations import upgrade_to_head
from dotfight.store.models import Base
from tests.support.pages import engine_page_ready_to_play

SOFT_PULL = 40.0


def played(moves: int) -> list[tuple[str, dict[str, Any], list[dict[str, Any]], dict[str, Any]]]:
    """A quick page's soft snipes: (side, action, events, state JSON after) for `moves` moves."""
    state = engine_page_ready_to_play()
    ids = {
        side: [s["id"] for s in state.snapshot()["soldiers"] if s["side"] == side] for side in ("blue", "red")
    }
    out: list[tuple[str, dict[str, Any], list[dict[str, Any]], dict[str, Any]]] = []
    for number in range(moves):
        actor = state.actor
        assert actor is not None
        direction = 1.0 if actor == "blue" else -1.0
        flick: dict[str, Any] = {
            "type": "flick",
            "soldier": ids[actor][number // 2 % 24],
            "kind": "snipe",
            "vector": [0.0, direction * SOFT_PULL],
        }
        state, events = apply(state, actor, flick)
        out.append((actor, flick, events, state.to_json()))
    return out


MOVES = played(64)


def wal_bytes(path: Path) -> int:
    wal = path.with_name(path.name + "-wal")
    return wal.stat().st_size if wal.exists() else 0


def make_pages(engine: Engine, table: Table, count: int) -> list[str]:
    rules = RuleSet.preset("quick").to_json()
    now = datetime.now(UTC)
    ids = [f"p{number:05d}" for number in range(count)]
    row = {
        "rules": rules,
        "preset": "quick",
        "seed": "0" * 32,
        "seed_sha256": "0" * 64,
        "mode": "live",
        "status": "open",
        "phase": "battle",
        "side_to_act": "blue",
        "winner": None,
        "version": 0,
        "bot": None,
        "created_at": now,
        "updated_at": now,
    }
    if "state_cache" in table.c:
        row |= {"state_cache": MOVES[0][3], "cache_version": 0}
    with engine.begin() as connection:
        connection.execute(insert(table), [{**row, "id": page_id} for page_id in ids])
    return ids


class OldBase(DeclarativeBase):
    """The schema before issue 12: the private state cached in the page row."""


class OldPage(OldBase):
    __tablename__ = "pages"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    rules: Mapped[dict[str, Any]] = mapped_column(JSON)
    preset: Mapped[str] = mapped_column(String(16))
    seed: Mapped[str] = mapped_column(String(32))
    seed_sha256: Mapped[str] = mapped_column(String(64))
    mode: Mapped[str] = mapped_column(String(8))
    status: Mapped[str] = mapped_column(String(8))
    phase: Mapped[str] = mapped_column(String(16))
    side_to_act: Mapped[str | None] = mapped_column(String(8), nullable=True)
    winner: Mapped[str | None] = mapped_column(String(8), nullable=True)
    version: Mapped[int] = mapped_column(Integer)
    bot: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    state_cache: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    cache_version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class OldAction(OldBase):
    __tablename__ = "actions"
    __table_args__ = (UniqueConstraint("page_id", "version"), UniqueConstraint("page_id", "move_id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    page_id: Mapped[str] = mapped_column(ForeignKey("pages.id"))
    version: Mapped[int] = mapped_column(Integer)
    side: Mapped[str] = mapped_column(String(8))
    action: Mapped[dict[str, Any]] = mapped_column(JSON)
    events: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    move_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


def orm_contender(path: Path, pages: int) -> tuple[Callable[[list[tuple[str, int]]], None], Engine]:
    """The writer job as it was before issue 12 (the ORM, a move_id SELECT, the cache in the page row)."""
    engine = make_engine(f"sqlite:///{path}")
    OldBase.metadata.create_all(engine)
    make_pages(engine, OldBase.metadata.tables["pages"], pages)
    sessions = make_session_factory(engine)

    def write(batch: list[tuple[str, int]]) -> None:
        now = datetime.now(UTC)
        with sessions() as session, session.begin():
            session.connection().exec_driver_sql("SELECT 1")  # the writer's BEGIN IMMEDIATE stand-in
            for page_id, version in batch:
                side, action, events, state_json = MOVES[version % len(MOVES)]
                move_id = f"{page_id}-{version}"
                logged = select(OldAction).where(OldAction.page_id == page_id, OldAction.move_id == move_id)
                assert session.scalars(logged).first() is None
                changes: dict[str, Any] = {
                    "version": version + 1,
                    "phase": "battle",
                    "side_to_act": side,
                    "winner": None,
                    "status": "open",
                    "updated_at": now,
                }
                if (version + 1) % CACHE_EVERY == 0:
                    changes["state_cache"] = state_json
                    changes["cache_version"] = version + 1
                moved = session.execute(
                    update(OldPage)
                    .where(OldPage.id == page_id, OldPage.version == version)
                    .values(**changes)
                    .execution_options(synchronize_session=False)
                )
                assert moved.rowcount == 1  # type: ignore[attr-defined]
                session.add(
                    OldAction(
                        page_id=page_id,
                        version=version + 1,
                        side=side,
                        action=action,
                        events=events,
                        move_id=move_id,
                        created_at=now,
                    )
                )

    return write, engine


def core_contender(
    path: Path, pages: int, serializer: Callable[[Any], str] | None, each: bool = False
) -> tuple[Callable[[list[tuple[str, int]]], None], Engine]:
    """The store's hot path (dotfight/store/appends.py) on the migrated schema: `each` runs it as the
    writer does, once per action; otherwise its statements run once per batch (executemany), a step not
    taken yet."""
    engine = make_engine(f"sqlite:///{path}")
    upgrade_to_head(engine)
    if serializer is not None:
        engine.dialect._json_serializer = serializer
    make_pages(engine, Base.metadata.tables["pages"], pages)
    with engine.begin() as connection:
        for number in range(pages):
            appends.save_state(connection, f"p{number:05d}", 0, MOVES[0][3])

    def write(batch: list[tuple[str, int]]) -> None:
        now = datetime.now(UTC)
        moves, entries, cached = [], [], []
        for page_id, version in batch:
            side, action, events, state_json = MOVES[version % len(MOVES)]
            summary = {"version": version + 1, "phase": "battle", "side_to_act": side, "winner": None}
            move_id = f"{page_id}-{version}"
            moves.append(
                appends.move_on_parameters(page_id, version, {**summary, "status": "open"}, move_id, now)
            )
            entries.append(
                {"version": version + 1, "side": side, "action": action, "events": events, "move_id": move_id}
            )
            if (version + 1) % CACHE_EVERY == 0:
                cached.append((page_id, version + 1, state_json))
        with engine.begin() as connection:
            if each:
                for (page_id, version), entry in zip(batch, entries, strict=True):
                    summary = {"version": version + 1, "phase": "battle", "side_to_act": entry["side"]}
                    summary |= {"winner": None, "status": "open"}
                    assert appends.move_on(connection, (page_id, version, summary, entry), now)
                for page_id, version, state in cached:
                    appends.save_state(connection, page_id, version, state)
                return
            moved = appends.MOVE_ON_NEW_MOVE.execute(connection, moves)
            assert moved == len(moves)
            rows = [
                {**entry, "page_id": page_id, "created_at": now}
                for (page_id, _), entry in zip(batch, entries, strict=True)
            ]
            appends.LOG.execute(connection, rows)
            if cached:
                texts = [
                    {"b_id": i, "b_version": v, "b_state": appends.state_text(st)} for i, v, st in cached
                ]
                appends.CHECKPOINT.execute(connection, texts)

    return write, engine


def run_one(name: str, args: argparse.Namespace, workdir: Path) -> dict[str, float]:
    path = workdir / f"{name}.sqlite3"
    if name == "orm":
        write, engine = orm_contender(path, args.pages)
    else:
        serializer = (lambda value: orjson.dumps(value).decode()) if name == "core+orjson" else None
        write, engine = core_contender(path, args.pages, serializer, each=name == "core-each")
    with engine.connect() as connection:
        connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.exec_driver_sql("PRAGMA wal_autocheckpoint=0")
    engine.dispose()  # the pragma above holds per connection: set it on the pool's next one
    from sqlalchemy import event

    @event.listens_for(engine, "connect")
    def no_checkpoint(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.execute("PRAGMA wal_autocheckpoint=0")

    versions = dict.fromkeys((f"p{number:05d}" for number in range(args.pages)), 0)
    ids = list(versions)
    write([(ids[0], 0)])  # warm: statements compiled, connection open
    versions[ids[0]] = 1
    wal_before = wal_bytes(path)
    cpu = time.thread_time()
    started = time.perf_counter()
    cursor = 1
    for _ in range(args.batches):
        batch = []
        for _ in range(args.batch):
            page_id = ids[cursor % len(ids)]
            cursor += 1
            batch.append((page_id, versions[page_id]))
            versions[page_id] += 1
        write(batch)
    cpu = time.thread_time() - cpu
    wall = time.perf_counter() - started
    actions = args.batches * args.batch
    wal = wal_bytes(path) - wal_before  # before the last connection closes (and checkpoints)
    engine.dispose()
    return {
        "cpu_us_per_action": cpu / actions * 1e6,
        "wall_us_per_action": wall / actions * 1e6,
        "wal_kb_per_commit": wal / 1024 / args.batches,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--batch", type=int, default=4, help="actions per transaction (group commit)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    names = ["orm", "core-each", "core", "core+orjson"]
    results: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for number in range(args.rounds):
        for name in names if number % 2 == 0 else reversed(names):
            with tempfile.TemporaryDirectory() as workdir:
                results[name].append(run_one(name, args, Path(workdir)))
    print(
        f"{args.batch} actions per commit, {args.batches} commits, {args.pages} pages;"
        f" medians of {args.rounds} rounds"
    )
    print(
        f"{'contender':14}{'CPU µs/action':>15}{'wall µs/action':>16}{'WAL KB/commit':>15}{'CPU ratio':>11}"
    )
    base = statistics.median(r["cpu_us_per_action"] for r in results["orm"])
    for name in names:
        cpu = statistics.median(r["cpu_us_per_action"] for r in results[name])
        wall = statistics.median(r["wall_us_per_action"] for r in results[name])
        wal = statistics.median(r["wal_kb_per_commit"] for r in results[name])
        print(f"{name:14}{cpu:>15.0f}{wall:>16.0f}{wal:>15.1f}{cpu / base:>10.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
