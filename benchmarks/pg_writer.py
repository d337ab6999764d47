"""The PostgreSQL writer's CPU per action, one source tree against another (issue 22, item 3): quieter
than the whole server's benchmark, and what the writer's path alone changed.

    python3 benchmarks/pg_writer.py --baseline /tmp/before [--rounds 5] [--actions 3000] [--pages 1,8]

On one throwaway cluster (fsync off, as benchmarks/server.py's), each contender is a process of its own
running a real `SqlPageStore` from its tree (PYTHONPATH: `--baseline DIR` for "before", this checkout
for "after"), with the server's NOTIFY hook (broadcast.notify_in_transaction, a ~300-byte payload per
action as a whole notice), on P fresh pages each with its next action queued as soon as its last is
answered (closed loop): P = 1 is one action per batch (the common case at the server's pace), P = 8
lets the group commit batch. The private state is checkpointed every 16th version. The contenders run
interleaved, `--rounds` times each; printed are the medians of the client process's CPU per action
(utime + stime: the writer thread and the callers around it) and the wall time per action, with the
after/before ratios. (PostgreSQL's own CPU is not read here: a backend's is gone from /proc with its
connection; benchmarks/server.py and postgres_ceiling.py read it.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
CHECKPOINT_EVERY = 16
PAYLOAD = "x" * 300


def child(url: str, pages: int, actions: int, tag: str) -> None:
    """One contender's run, in the process of its own tree: prints its figures as JSON."""
    import threading
    from datetime import UTC, datetime

    import dotfight
    from dotfight.store.database import make_engine
    from dotfight.store.records import Appended, Checkpoint, LogEntry, PageRecord, SeatRecord
    from dotfight.store.sql_pages import SqlPageStore

    state = {"board": list(range(400)), "ink": {"blue": 10, "red": 10}}

    def notify(page_id: str, version: int) -> tuple[str, str]:
        return "bench_pages", f"{page_id} {version} {PAYLOAD}"

    engine = make_engine(url, pool_size=2)
    store = SqlPageStore(engine, notify=notify)
    ids = [f"{tag}-{page}" for page in range(pages)]
    for page_id in ids:
        record = PageRecord(page_id, "live", "quick", {}, "0" * 32, "0" * 64, None, datetime.now(UTC))
        seat = SeatRecord(f"{page_id}-blue".ljust(64, "0"), "blue", "seat")
        store.create(record, Checkpoint(0, "battle", "blue", None, "open", state=state), [seat]).result(30)
    done = threading.Semaphore(0)
    errors: list[BaseException] = []
    per_page = actions // pages

    def queue_next(page_id: str, version: int) -> None:
        side = "blue" if version % 2 == 0 else "red"
        entry = LogEntry(
            version + 1, side, {"type": "flick", "n": version}, [{"type": "turn"}], f"{page_id}-{version + 1}"
        )
        keep = state if (version + 1) % CHECKPOINT_EVERY == 0 else None
        checkpoint = Checkpoint(version + 1, "battle", "red", None, "open", state=keep)

        def answered(outcome: Appended | BaseException) -> None:
            if isinstance(outcome, BaseException):
                errors.append(outcome)
                done.release()
                return
            if version + 1 < per_page:
                queue_next(page_id, version + 1)
            else:
                done.release()

        store.append_then(page_id, version, entry, checkpoint, answered)

    before, started = os.times(), time.perf_counter()
    for page_id in ids:
        queue_next(page_id, 0)
    for _ in ids:
        done.acquire()
    after, wall = os.times(), time.perf_counter() - started
    store.close()
    engine.dispose()
    cpu = after.user + after.system - before.user - before.system
    total = per_page * pages
    print(
        json.dumps(
            {
                "tree": str(Path(dotfight.__file__).parents[1]),
                "cpu_ms": cpu * 1000 / total,
                "wall_ms": wall * 1000 / total,
                "errors": [repr(error) for error in errors[:3]],
            }
        )
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", type=Path, required=True, help="the 'before' source tree")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--actions", type=int, default=3000, help="actions per contender's run")
    parser.add_argument("--pages", default="1,8", help="pages written at once, one point each")
    parser.add_argument(
        "--child", nargs=4, metavar=("URL", "PAGES", "ACTIONS", "TAG"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        url, pages, actions, tag = args.child
        child(url, int(pages), int(actions), tag)
        return 0

    sys.path.insert(0, str(HERE))
    from dotfight.store.database import make_engine
    from dotfight.store.migrations import upgrade_to_head
    from tests.store.conftest import PostgresCluster, find_postgres_bindir

    cluster = PostgresCluster(find_postgres_bindir())
    cluster.create()
    cluster.start_server()
    try:
        url = cluster.new_database()
        engine = make_engine(url)
        upgrade_to_head(engine)
        engine.dispose()
        trees = {"before": args.baseline.resolve(), "after": HERE}
        print(f"load average at the start: {os.getloadavg()[0]:.2f}")
        for pages in [int(p) for p in args.pages.split(",")]:
            figures: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
            for round_number in range(args.rounds):
                order = list(trees) if round_number % 2 == 0 else list(reversed(trees))
                for name in order:
                    tag = f"{name}{pages}r{round_number}"
                    env = {**os.environ, "PYTHONPATH": str(trees[name])}
                    answer = subprocess.run(
                        [sys.executable, __file__, "--baseline", str(trees[name]), "--child", url,
                         str(pages), str(args.actions), tag],
                        env=env, cwd=trees[name], capture_output=True, text=True, check=True,
                    )  # fmt: skip
                    result = json.loads(answer.stdout.strip().splitlines()[-1])
                    assert Path(result["tree"]) == trees[name], (result["tree"], trees[name])
                    if result["errors"]:
                        raise SystemExit(f"{name}: {result['errors']}")
                    figures[name].append(result)
            print(f"\n{pages} page(s) at once, {args.actions} actions a run, medians of {args.rounds} rounds")
            print(f"{'figure':28}{'before':>10}{'after':>10}{'after/before':>14}")
            for key, label in [
                ("cpu_ms", "client CPU ms/action"),
                ("wall_ms", "wall ms/action"),
            ]:
                medians = {name: statistics.median(r[key] for r in figures[name]) for name in trees}
                ratio = medians["after"] / medians["before"]
                print(f"{label:28}{medians['before']:>10.3f}{medians['after']:>10.3f}{ratio:>13.2f}x")
    finally:
        cluster.stop_server()
        cluster.remove()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
