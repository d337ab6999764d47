"""The database writer's hot path alone: appending actions to pages, as the ORM does it today against
SQLAlchemy Core with the state cache out of the page row (a prototype for issue 12).

    python3 benchmarks/store_append.py [--pages 200] [--batches 300] [--batch 4] [--rounds 3]

Each contender appends `--batch` actions (to different pages) per transaction, with group commit on
SQLite (WAL, synchronous=FULL) as the server's writer thread does, for `--batches` transactions, and
prints its CPU per action (this thread only) and the bytes of WAL written per commit. Contenders, run
interleaved over `--rounds` rounds on fresh files:

- orm: today's writer job — a SELECT for the move_id, the conditional UPDATE of the page row (which
  carries the 19 KB state cache, rewritten every 8th version), an ActionRow added and flushed;
- core: Core statements built once, one executemany per statement per transaction (UPDATE of the page's
  small row, INSERT of the log entries, the state cache into its own table every 8th version), no
  move_id SELECT (the unique constraint is the backstop);
- core-each: the same statements executed once per action (a writer job at a time);
- core+orjson: core, with the JSON columns written by orjson.
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
    Column,
    DateTime,
    Engine,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    and_,
    bindparam,
    insert,
    update,
)
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dotfight.engine import RuleSet, apply, new_page
from dotfight.store import repository
from dotfight.store.database import make_engine, make_session_factory
from dotfight.store.models import ActionRow, Base

CACHE_EVERY = 8
SOFT_PULL = 40.0


def played(moves: int) -> list[tuple[str, dict[str, Any], list[dict[str, Any]], dict[str, Any]]]:
    """A quick page's soft snipes: (side, action, events, state JSON after) for `moves` moves."""
    state = new_page(RuleSet.preset("quick"), seed=1)
    for side, action in (
        ("blue", {"type": "quick_setup"}),
        ("blue", {"type": "ready"}),
        ("red", {"type": "ready"}),
    ):
        state, _ = apply(state, side, action)
    ids = {
        side: [s["id"] for s in state.snapshot()["soldiers"] if s["side"] == side] for side in ("blue", "red")
    }
    out = []
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


def new_schema(metadata: MetaData) -> tuple[Table, Table, Table]:
    pages = Table(
        "pages",
        metadata,
        Column("id", String(32), primary_key=True),
        Column("rules", JSON),
        Column("preset", String(16)),
        Column("seed", String(32)),
        Column("seed_sha256", String(64)),
        Column("mode", String(8)),
        Column("status", String(8)),
        Column("phase", String(16)),
        Column("side_to_act", String(8)),
        Column("winner", String(8)),
        Column("version", Integer),
        Column("bot", JSON),
        Column("created_at", DateTime(timezone=True)),
        Column("updated_at", DateTime(timezone=True)),
    )
    states = Table(
        "page_states",
        metadata,
        Column("page_id", String(32), ForeignKey("pages.id"), primary_key=True),
        Column("version", Integer),
        Column("state", JSON),
    )
    actions = Base.metadata.tables["actions"].to_metadata(metadata)
    return pages, states, actions


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


def orm_contender(path: Path, pages: int) -> tuple[Callable[[list[tuple[str, int]]], None], Engine]:
    engine = make_engine(f"sqlite:///{path}")
    Base.metadata.create_all(engine)
    make_pages(engine, Base.metadata.tables["pages"], pages)
    sessions = make_session_factory(engine)

    def write(batch: list[tuple[str, int]]) -> None:
        now = datetime.now(UTC)
        with sessions() as session, session.begin():
            session.connection().exec_driver_sql("SELECT 1")  # the writer's BEGIN IMMEDIATE stand-in
            for page_id, version in batch:
                side, action, events, state_json = MOVES[version % len(MOVES)]
                move_id = f"{page_id}-{version}"
                assert repository.action_by_move_id(session, page_id, move_id) is None
                changes: dict[str, Any] = {
                    "version": version + 1,
                    "phase": "battle",
                    "side_to_act": side,
                    "winner": None,
                    "status": "open",
                }
                if (version + 1) % CACHE_EVERY == 0:
                    changes["state_cache"] = state_json
                    changes["cache_version"] = version + 1
                assert repository.append_action(session, page_id, version, changes, now)
                repository.add_action(
                    session,
                    ActionRow(
                        page_id=page_id,
                        version=version + 1,
                        side=side,
                        action=action,
                        events=events,
                        move_id=move_id,
                        created_at=now,
                    ),
                )

    return write, engine


def core_contender(
    path: Path, pages: int, serializer: Callable[[Any], str] | None, each: bool = False
) -> tuple[Callable[[list[tuple[str, int]]], None], Engine]:
    engine = make_engine(f"sqlite:///{path}")
    if serializer is not None:
        engine.dialect._json_serializer = serializer
    metadata = MetaData()
    pages_table, states, actions = new_schema(metadata)
    metadata.create_all(engine)
    make_pages(engine, pages_table, pages)
    move_on = (
        update(pages_table)
        .where(and_(pages_table.c.id == bindparam("p_id"), pages_table.c.version == bindparam("p_expected")))
        .values(
            version=bindparam("p_version"),
            phase=bindparam("p_phase"),
            side_to_act=bindparam("p_side"),
            winner=bindparam("p_winner"),
            status=bindparam("p_status"),
            updated_at=bindparam("p_now"),
        )
    )
    log = insert(actions)
    upsert = sqlite_insert(states)
    checkpoint = upsert.on_conflict_do_update(
        index_elements=[states.c.page_id],
        set_={"version": upsert.excluded.version, "state": upsert.excluded.state},
    )

    def write(batch: list[tuple[str, int]]) -> None:
        now = datetime.now(UTC)
        moves, entries, cached = [], [], []
        for page_id, version in batch:
            side, action, events, state_json = MOVES[version % len(MOVES)]
            moves.append(
                {
                    "p_id": page_id,
                    "p_expected": version,
                    "p_version": version + 1,
                    "p_phase": "battle",
                    "p_side": side,
                    "p_winner": None,
                    "p_status": "open",
                    "p_now": now,
                }
            )
            entries.append(
                {
                    "page_id": page_id,
                    "version": version + 1,
                    "side": side,
                    "action": action,
                    "events": events,
                    "move_id": f"{page_id}-{version}",
                    "created_at": now,
                }
            )
            if (version + 1) % CACHE_EVERY == 0:
                cached.append({"page_id": page_id, "version": version + 1, "state": state_json})
        with engine.begin() as connection:
            if each:  # one statement per action (a writer job at a time), still Core
                for move, entry in zip(moves, entries, strict=True):
                    assert connection.execute(move_on, move).rowcount == 1
                    connection.execute(log, entry)
                for one in cached:
                    connection.execute(checkpoint, one)
                return
            result = connection.execute(move_on, moves)
            assert result.rowcount == len(moves)
            connection.execute(log, entries)
            if cached:
                connection.execute(checkpoint, cached)

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
