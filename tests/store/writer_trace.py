"""What the writer sends its database, read from the driver's own trace: the writer's statements go
straight to psycopg or sqlite3 (store/driver.py), past SQLAlchemy's events. PostgreSQL: libpq's trace of
the connection's protocol messages, which also shows the round trips (each Sync or simple Query the
client sends ends one). SQLite: sqlite3's trace callback (each statement as run, its values written in:
masked here)."""

from __future__ import annotations

import os
import re
import sqlite3
import tempfile
from collections.abc import Callable
from typing import Any

from psycopg import pq

from dotfight.store.writer import BatchWriter

# A round trip: the statements it carried, each with how many times it was executed in a row.
Trip = list[tuple[str, int]]


def traced(writer: BatchWriter) -> Callable[[], list[Trip]]:
    """Traces the writer's connection (opened already: the writer has committed once) from now on;
    the function returned stops the trace and gives the round trips the client made."""
    connection = writer._connection
    assert connection is not None, "the writer has no connection yet"
    driver: Any = connection.connection.dbapi_connection
    pgconn = driver.pgconn
    # Statements psycopg prepared before the trace (after a few runs each) are bound by name only.
    prepared = {name.decode(): _first_word(key[0].decode()) for key, name in driver._prepared._names.items()}
    descriptor, path = tempfile.mkstemp(prefix="dotfight-trace-")
    pgconn.trace(descriptor)
    pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)

    def trips() -> list[Trip]:
        pgconn.untrace()
        with open(path, encoding="utf-8", errors="replace") as trace:
            lines = trace.read().splitlines()
        os.close(descriptor)
        os.unlink(path)
        return _trips(lines, prepared)

    return trips


def _trips(lines: list[str], prepared: dict[str, str]) -> list[Trip]:
    named = {f'"{name}"': word for name, word in prepared.items()}
    trips: list[Trip] = []
    trip: Trip = []
    current = ""
    for line in lines:
        parts = line.split("\t")
        if len(parts) < 3 or parts[0] != "F":
            continue
        kind, rest = parts[2], "\t".join(parts[3:]).strip()
        if kind == "Query":
            trip.append((_first_word(rest), 1))
            trips.append(trip)
            trip = []
        elif kind == "Parse":
            name, _, text = rest.partition(" ")
            current = _first_word(text)
            if name != '""':
                named[name] = current
        elif kind == "Bind":
            statement = rest.split(" ")[1]
            if statement != '""':
                current = named[statement]
        elif kind == "Execute":
            if trip and trip[-1][0] == current:
                trip[-1] = (current, trip[-1][1] + 1)
            else:
                trip.append((current, 1))
        elif kind == "Sync":
            trips.append(trip)
            trip = []
    return [trip for trip in trips if trip]


def _first_word(quoted: str) -> str:
    return quoted.strip().strip('"').split()[0].strip('"')


def statements(
    trips: list[Trip], leaving_out: tuple[str, ...] = ("BEGIN", "COMMIT", "ROLLBACK", "SET", "DEALLOCATE")
) -> list[tuple[str, bool]]:
    """The statements of the round trips in order, each with whether it ran as several in a row (an
    executemany), the transaction's own, the lock timeout's SET and psycopg's DEALLOCATE (after a
    rollback) left out."""
    return [(word, runs > 1) for trip in trips for word, runs in trip if word not in leaving_out]


# The values sqlite3's trace writes into a statement: quoted strings, blobs, numbers and NULLs (not the
# SQL's own IS NULL).
_VALUE = re.compile(r"X?'(?:[^']|'')*'|(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])|(?<!IS )(?<!NOT )\bNULL\b")


_TRANSACTIONS = ("BEGIN", "COMMIT", "ROLLBACK")


def sqlite_traced(writer: BatchWriter, transactions: bool = False) -> Callable[[], list[str]]:
    """Traces the writer's SQLite connection (opened already) from now on; the function returned stops
    the trace and gives each statement run, in one line, its values as `?` (PRAGMAs left out, and the
    transaction's own unless `transactions`)."""
    connection = writer._connection
    assert connection is not None, "the writer has no connection yet"
    driver = connection.connection.dbapi_connection
    assert isinstance(driver, sqlite3.Connection)
    seen: list[str] = []
    driver.set_trace_callback(seen.append)

    def statements() -> list[str]:
        driver.set_trace_callback(None)
        lines = (_VALUE.sub("?", " ".join(statement.split())) for statement in seen)
        leaving_out = ("PRAGMA",) if transactions else ("PRAGMA", *_TRANSACTIONS)
        return [line for line in lines if not line.startswith(leaving_out)]

    return statements


def runs(statements: list[str]) -> list[tuple[str, bool]]:
    """Each run of one statement in a row (an executemany, on SQLite; traced with the transactions' own,
    which end a run and are left out here), as its first word and whether it ran more than once."""
    grouped: list[tuple[str, int]] = []
    for statement in statements:
        if grouped and grouped[-1][0] == statement:
            grouped[-1] = (statement, grouped[-1][1] + 1)
        else:
            grouped.append((statement, 1))
    return [
        (statement.split()[0], count > 1)
        for statement, count in grouped
        if not statement.startswith(_TRANSACTIONS)
    ]
