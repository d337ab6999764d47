"""The write path's parameters (store/appends.py): each statement's rows bound as SQLAlchemy's own
column processors bind them, by a function made for the statement, and a group commit's one moment
formatted once per statement, not once per row."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Connection, create_engine
from sqlalchemy.engine import Dialect

from dotfight.store import appends
from dotfight.store.database import make_engine
from dotfight.store.models import Base

NOW = datetime(2026, 12, 2, 18, 5, 7, 654321, tzinfo=UTC)
SUMMARY = {"version": 5, "phase": "play", "side_to_act": "red", "winner": None, "status": "open"}
ENTRY = {
    "version": 5,
    "side": "blue",
    "action": {"type": "flick", "soldier": "b1s1", "kind": "snipe", "vector": [0.0, 40.0]},
    "events": [{"type": "ink", "points": [[1.5, 2.25], [3.0, 4.0]]}, {"type": "turn", "side": "red"}],
    "move_id": "m-5",
}


def processors_own(prepared: appends.Prepared, dialect: Dialect, row: dict[str, Any]) -> Any:
    """The row bound the plain way: each bound name's value through its column type's own processor."""
    compiled = prepared.statement.compile(
        dialect=dialect, column_keys=prepared._column_keys, for_executemany=True
    )
    names = list(compiled.positiontup or ()) if compiled.positional else list(compiled.binds)
    values = []
    for name in names:
        process = compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect)
        values.append(row[name] if process is None else process(row[name]))
    return tuple(values) if compiled.positional else dict(zip(names, values, strict=True))


def rows() -> list[tuple[appends.Prepared, dict[str, Any]]]:
    move_on = appends.move_on_parameters("p1", 4, SUMMARY, "m-5", NOW)
    return [
        (appends.MOVE_ON, move_on),
        (appends.MOVE_ON_NEW_MOVE, move_on),
        (appends.LOG, {**ENTRY, "page_id": "p1", "created_at": NOW}),
        (appends.CHECKPOINT, {"b_id": "p1", "b_version": 5, "b_state": '{"version":5}'}),
        (appends.FIRST_CHECKPOINT, {"page_id": "p1", "version": 5, "state": '{"version":5}'}),
        (
            appends.CLOCK,
            {"b_id": "p1", "b_clock_state": {"running": "red"}, "b_deadline": NOW, "b_reminder_at": None},
        ),
        (appends.MOVE_ON_AND_LOG, appends.move_on_and_log_parameters(("p1", 4, SUMMARY, ENTRY), NOW)),
    ]


@pytest.mark.parametrize("url", ["sqlite://"])
def test_every_statements_row_is_bound_as_its_columns_processors_bind_it(url: str) -> None:
    dialect = make_engine(url).dialect
    for prepared, row in rows():
        if prepared is appends.MOVE_ON_AND_LOG:
            continue  # PostgreSQL's: its CTE does not compile on SQLite
        compiled = appends._Compiled(prepared.statement, dialect, prepared._column_keys)
        assert compiled.bound(row) == processors_own(prepared, dialect, row)
        # Again, and with another moment: the kept moment's text is never given for another one.
        later = {
            name: NOW + timedelta(microseconds=1) if value is NOW else value for name, value in row.items()
        }
        assert compiled.bound(row) == processors_own(prepared, dialect, row)
        assert compiled.bound(later) == processors_own(prepared, dialect, later)


def test_postgresqls_rows_are_bound_as_its_columns_processors_bind_them() -> None:
    psycopg = pytest.importorskip("psycopg")
    dialect = create_engine("postgresql+psycopg://", module=psycopg).dialect
    for prepared, row in rows():
        compiled = appends._Compiled(prepared.statement, dialect, prepared._column_keys)
        assert unwrapped(compiled.bound(row)) == unwrapped(processors_own(prepared, dialect, row))


def unwrapped(bound: Any) -> Any:
    """psycopg's JSON parameters (`Json`, equal only to themselves) as the values they wrap."""
    return {name: getattr(value, "obj", value) for name, value in bound.items()}


def test_a_group_commits_moment_is_formatted_once_per_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = make_engine("sqlite://")
    Base.metadata.create_all(engine)
    formatted: list[datetime] = []
    real = appends.remembering_last

    def counting(process: Any) -> Any:
        def counted(value: Any) -> Any:
            formatted.append(value)
            return process(value)

        return real(counted)

    monkeypatch.setattr(appends, "remembering_last", counting)
    monkeypatch.setattr(appends, "MOVE_ON_NEW_MOVE", appends.Prepared(appends._MOVE_ON_NEW_MOVE))
    monkeypatch.setattr(appends, "LOG", appends.Prepared(appends.LOG.statement, appends._LOGGED))
    moves = [(f"p{number}", 4, SUMMARY, {**ENTRY, "move_id": f"m{number}"}) for number in range(6)]
    with engine.begin() as connection:
        make_pages(connection, [page_id for page_id, *_ in moves])
        assert appends.move_on_many(connection, moves, NOW)
        logged = connection.exec_driver_sql("SELECT page_id, created_at FROM actions ORDER BY page_id").all()
        moved = connection.exec_driver_sql("SELECT DISTINCT updated_at FROM pages").all()
    # The UPDATE's moment and its setup_moved_at (None: the pages are in play), the INSERT's moment: each
    # once for six rows.
    assert formatted == [NOW, None, NOW]
    assert logged == [(f"p{number}", "2026-12-02 18:05:07.654321") for number in range(6)]
    assert moved == [("2026-12-02 18:05:07.654321",)]


def make_pages(connection: Connection, page_ids: list[str]) -> None:
    for page_id in page_ids:
        connection.exec_driver_sql(
            "INSERT INTO pages (id, mode, preset, rules, seed, seed_sha256, version, phase, side_to_act, "
            "status, created_at, updated_at) VALUES (?, 'live', 'quick', '{}', '00', '00', 4, 'play', "
            "'blue', 'open', '2026-01-01 00:00:00.000000', '2026-01-01 00:00:00.000000')",
            (page_id,),
        )
