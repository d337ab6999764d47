"""What one PostgreSQL primary carries for Dotfight (issue 22, item 4), on a throwaway cluster started here
with production's durability (fsync, synchronous_commit and full_page_writes on; Unix socket only):

    python3 benchmarks/postgres_ceiling.py [--seconds 4] [--part commits|notifies|both]

(a) **commits**: W writer processes (1, 2, 4, 8), each a real `SqlPageStore` — the server's own writer
    thread with its group commit, one UPDATE of the page row and one INSERT into the log per action,
    the private state every 16th version, and the server's NOTIFY hook inside the transaction, or none
    — keeping P pages each with their next action always queued (closed loop: a page's next action is
    queued when its last is committed, as a page's moves follow each other). P = 1 is the worst case
    (one action per commit); P = 32 lets the group commit batch. Prints actions/s, commits/s (from
    `pg_stat_database`), actions per commit, PostgreSQL's CPU per action and per commit.
(b) **notifies**: W notifier connections each committing transactions of M `pg_notify` calls (M = 1, or
    32 as a group commit's several moves would) with payloads of ~200 B or ~7.9 KB (NOTIFY's cap is
    8000 bytes), while L listening connections (1, 2) take every notice. Prints notices/s sent and heard,
    commits/s, MB/s through the queue, and PostgreSQL's CPU per notice.

Every figure is printed with the load average at its start: the machine may be shared, so compare a
run's rows with each other. CPU is the cluster's processes' own (utime + stime of the postmaster's
children while the clients are connected), so it carries to a dedicated primary.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.proc_cpu import cpu_seconds
from benchmarks.store_append import MOVES
from dotfight.server.broadcast import notify_in_transaction
from dotfight.store.database import make_engine
from dotfight.store.migrations import upgrade_to_head
from dotfight.store.records import Appended, Checkpoint, LogEntry, PageRecord, SeatRecord
from dotfight.store.sql_pages import SqlPageStore
from tests.store.conftest import PostgresCluster, find_postgres_bindir

CHECKPOINT_EVERY = 16  # the authority's CACHE_EVERY on a page with little ink
CHANNEL = "ceiling"
BARRIER_TIMEOUT_S = 120.0


class DurableCluster(PostgresCluster):
    """The storage tests' throwaway cluster, but durable like production: what a commit costs is what
    this measures (the tests' cluster runs without fsync)."""

    durability = ("-c fsync=on", "-c synchronous_commit=on", "-c full_page_writes=on")

    def start_server(self) -> None:
        options = [f"-c listen_addresses='' -k {self.root} -p 5432", *self.durability]
        options += ["-c shared_buffers=128MB", "-c max_connections=100"]
        self._run(
            "pg_ctl", "start", "-D", str(self.data), "-l", str(self.log), "-w", "-o", " ".join(options)
        )  # fmt: skip

    def postmaster(self) -> int:
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def cpu_seconds(self) -> float:
        """utime + stime of the postmaster and its living children (backends, WAL writer, checkpointer)."""
        master = self.postmaster()
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
        return sum(process_cpu(int(pid)) for pid in [master, *map(int, children)])


def process_cpu(pid: int) -> float:
    """A process's utime + stime in seconds (0 if it is gone)."""
    try:
        return cpu_seconds(pid)
    except OSError:
        return 0.0


def own_cpu() -> float:
    times = os.times()
    return times.user + times.system


@dataclass
class Sample:
    """One point's figures."""

    label: str
    seconds: float
    done: int  # actions, or notices heard
    sent: int  # actions, or notices sent
    commits: int
    postgres_cpu_s: float
    client_cpu_s: float
    load: float


# (a) commits ---------------------------------------------------------------------------------------


def page_record(page_id: str) -> PageRecord:
    return PageRecord(page_id, "live", "quick", {}, "0" * 32, "0" * 64, None, datetime.now(UTC))


def entry_at(page_id: str, version: int) -> tuple[LogEntry, Checkpoint]:
    """The action moving a page to `version` (a real quick page's snipe, its events and state)."""
    side, action, events, state = MOVES[(version - 1) % len(MOVES)]
    entry = LogEntry(version, side, action, events, f"{page_id}-{version}")
    after = "red" if side == "blue" else "blue"
    keep_state = state if version % CHECKPOINT_EVERY == 0 else None
    return entry, Checkpoint(version, "battle", after, None, "open", state=keep_state)


def writer_process(
    url: str, number: int, pages: int, notify: bool, seconds: float, sync: Barrier, out: Any
) -> None:
    """One server process's writer: `pages` pages, each with its next action always queued."""
    engine = make_engine(url, pool_size=2)
    store = SqlPageStore(engine, notify=notify_in_transaction if notify else None)
    ids = [f"w{number}p{page}-{os.getpid()}" for page in range(pages)]
    _, first = entry_at(ids[0], CHECKPOINT_EVERY)
    for page_id in ids:
        seat = SeatRecord(f"{page_id}-blue".ljust(64, "0"), "blue", "seat")
        store.create(
            page_record(page_id), Checkpoint(0, "battle", "blue", None, "open", state=first.state), [seat]
        ).result(30)
    done, commits, errors = [0], [0], []
    running = threading.Event()
    # The writer's commits, counted where it makes them (its connection's COMMIT).
    event.listen(engine, "commit", lambda _connection: commits.__setitem__(0, commits[0] + 1))

    def queue_next(page_id: str, version: int) -> None:
        entry, checkpoint = entry_at(page_id, version + 1)

        def answered(outcome: Appended | BaseException) -> None:
            if isinstance(outcome, BaseException):
                errors.append(outcome)
                return
            done[0] += 1
            if running.is_set():
                queue_next(page_id, version + 1)

        store.append_then(page_id, version, entry, checkpoint, answered)

    sync.wait(BARRIER_TIMEOUT_S)  # ready
    sync.wait(BARRIER_TIMEOUT_S)  # go
    cpu, commits[0] = own_cpu(), 0
    running.set()
    for page_id in ids:
        queue_next(page_id, 0)
    time.sleep(seconds)
    running.clear()
    out.put((done[0], commits[0], own_cpu() - cpu, [repr(error) for error in errors[:3]]))
    sync.wait(BARRIER_TIMEOUT_S)  # stopped: the cluster's CPU is read before anyone disconnects
    sync.wait(BARRIER_TIMEOUT_S)
    store.close()
    engine.dispose()


# (b) notifies --------------------------------------------------------------------------------------


def connect_raw(root: str) -> Any:
    import psycopg

    return psycopg.connect(host=root, port=5432, user="postgres", dbname="ceiling", autocommit=True)


def notifier_process(
    root: str, number: int, per_commit: int, payload_bytes: int, seconds: float, sync: Barrier, out: Any
) -> None:
    """Commits transactions of `per_commit` distinct notices (identical ones would be folded into one)."""
    connection = connect_raw(root)
    filler = "x" * (payload_bytes - 24)
    statement = "SELECT pg_notify(%s, p) FROM unnest(%s::text[]) AS p"
    sent = commits = 0
    sync.wait(BARRIER_TIMEOUT_S)
    sync.wait(BARRIER_TIMEOUT_S)
    cpu = own_cpu()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        payloads = [f"{number:03d} {sent + i:012d} {filler}" for i in range(per_commit)]
        with connection.transaction():
            connection.execute(statement, (CHANNEL, payloads))
        sent += per_commit
        commits += 1
    out.put(("sent", sent, own_cpu() - cpu, commits))
    sync.wait(BARRIER_TIMEOUT_S)
    sync.wait(BARRIER_TIMEOUT_S)
    connection.close()


def listener_process(root: str, seconds: float, sync: Barrier, out: Any) -> None:
    """LISTENs and counts every notice heard until the notifiers stopped and the queue is drained."""
    connection = connect_raw(root)
    connection.execute(f"LISTEN {CHANNEL}")
    heard = 0
    sync.wait(BARRIER_TIMEOUT_S)
    sync.wait(BARRIER_TIMEOUT_S)
    cpu = own_cpu()
    deadline = time.monotonic() + seconds
    quiet_since = time.monotonic()
    while True:
        got = 0
        for _ in connection.notifies(timeout=0.2, stop_after=1000):
            got += 1
        heard += got
        now = time.monotonic()
        if got:
            quiet_since = now
        elif now > deadline and now - quiet_since > 1.0:
            break
    out.put(("heard", heard, own_cpu() - cpu, 0))
    sync.wait(BARRIER_TIMEOUT_S)
    sync.wait(BARRIER_TIMEOUT_S)
    connection.close()


# Running a point -------------------------------------------------------------------------------------


@contextmanager
def point(
    cluster: DurableCluster, targets: list[tuple[Callable[..., None], tuple[Any, ...]]]
) -> Iterator[dict[str, Any]]:
    """Starts the client processes, measures the cluster's CPU between `go` and `stopped`, and yields
    what the clients reported (`results`), that CPU and the seconds between."""
    context = multiprocessing.get_context("spawn")
    sync = context.Barrier(len(targets) + 1)
    out = context.Queue()
    processes = [context.Process(target=target, args=(*args, sync, out)) for target, args in targets]
    for process in processes:
        process.start()
    figures: dict[str, Any] = {"load": os.getloadavg()[0]}
    try:
        sync.wait(BARRIER_TIMEOUT_S)
        cpu = cluster.cpu_seconds()
        start = time.monotonic()
        sync.wait(BARRIER_TIMEOUT_S)
        figures["results"] = [out.get(timeout=BARRIER_TIMEOUT_S) for _ in processes]
        figures["seconds"] = time.monotonic() - start
        sync.wait(BARRIER_TIMEOUT_S)
        figures["postgres_cpu_s"] = cluster.cpu_seconds() - cpu
        sync.wait(BARRIER_TIMEOUT_S)
        yield figures
    finally:
        for process in processes:
            process.join(30)
            if process.is_alive():
                process.kill()


class Table:
    """Prints rows under a header, each cell right-aligned to its column's title."""

    def __init__(self, *titles: str) -> None:
        self.widths = [max(len(title), 6) for title in titles]
        print("  ".join(title.rjust(width) for title, width in zip(titles, self.widths, strict=True)))

    def row(self, *cells: object) -> None:
        print(
            "  ".join(str(cell).rjust(width) for cell, width in zip(cells, self.widths, strict=True)),
            flush=True,
        )


def per_s(count: float, seconds: float) -> str:
    return f"{count / seconds:.0f}"


def ms_per(cpu_s: float, count: float) -> str:
    return f"{cpu_s / count * 1000:.3f}" if count else "-"


def commits_part(cluster: DurableCluster, seconds: float) -> None:
    url = cluster.new_database()
    engine = make_engine(url)
    upgrade_to_head(engine)
    engine.dispose()
    print("\n(a) group commit: W writer processes (SqlPageStore), P pages each always waiting")
    table = Table(
        "W", "P", "notify", "actions/s", "commits/s", "actions/commit", "PG ms/action", "PG ms/commit",
        "client ms/action", "load",
    )  # fmt: skip
    for pages in (1, 32):
        for notify in (True, False):
            for writers in (1, 2, 4, 8):
                targets = [(writer_process, (url, n, pages, notify, seconds)) for n in range(writers)]
                with point(cluster, targets) as figures:
                    results = figures["results"]
                    done = sum(result[0] for result in results)
                    commits = max(sum(result[1] for result in results), 1)
                    client = sum(result[2] for result in results)
                    errors = [error for result in results for error in result[3]]
                    span, postgres = figures["seconds"], figures["postgres_cpu_s"]
                    table.row(
                        writers, pages, "yes" if notify else "no", per_s(done, span), per_s(commits, span),
                        f"{done / commits:.1f}", ms_per(postgres, done), ms_per(postgres, commits),
                        ms_per(client, done), f"{figures['load']:.1f}",
                    )  # fmt: skip
                    if errors:
                        print(f"    errors: {errors}")


def notifies_part(cluster: DurableCluster, seconds: float) -> None:
    cluster.execute(["CREATE DATABASE ceiling"])
    root = str(cluster.root)
    print("\n(b) NOTIFY: W notifier connections, M notices per commit, L listeners")
    table = Table(
        "W", "M", "payload B", "L", "sent/s", "heard/s each", "commits/s", "MB/s", "PG ms/notice",
        "PG ms/commit", "load",
    )  # fmt: skip
    for payload in (200, 7900):
        for per_commit in (1, 32):
            for listeners in (1, 2):
                for notifiers in (1, 4):
                    targets = [
                        (notifier_process, (root, n, per_commit, payload, seconds)) for n in range(notifiers)
                    ] + [(listener_process, (root, seconds)) for _ in range(listeners)]
                    with point(cluster, targets) as figures:
                        results = figures["results"]
                        sent = sum(r[1] for r in results if r[0] == "sent")
                        heard = sum(r[1] for r in results if r[0] == "heard") / listeners
                        commits = sum(r[3] for r in results)
                        postgres = figures["postgres_cpu_s"]
                        table.row(
                            notifiers, per_commit, payload, listeners, per_s(sent, seconds),
                            per_s(heard, seconds), per_s(commits, seconds),
                            f"{sent * payload / seconds / 1e6:.1f}", ms_per(postgres, sent),
                            ms_per(postgres, commits), f"{figures['load']:.1f}",
                        )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=4.0, help="each point's length (default 4)")
    parser.add_argument("--part", choices=("commits", "notifies", "both"), default="both")
    args = parser.parse_args()
    bindir = find_postgres_bindir()
    if bindir is None:
        raise SystemExit("PostgreSQL's server programs (initdb, pg_ctl) are not installed")
    cluster = DurableCluster(bindir)
    try:
        cluster.create()
        cluster.start_server()
        print(
            f"PostgreSQL {bindir.parent.name}, durable (fsync, synchronous_commit on), {os.cpu_count()} cores"
        )
        if args.part in ("commits", "both"):
            commits_part(cluster, args.seconds)
        if args.part in ("notifies", "both"):
            notifies_part(cluster, args.seconds)
    finally:
        cluster.remove()


if __name__ == "__main__":
    main()
