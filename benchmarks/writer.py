"""The database writer's CPU per action, one source tree against another (issue 22, item 3): quieter
than the whole server's benchmark, and what the writer's path alone changed. (Named pg_writer.py until
it learnt SQLite.)

    python3 benchmarks/writer.py --baseline /tmp/before [--rounds 5] [--actions 3000] [--pages 1,8]
    python3 benchmarks/writer.py --baseline /tmp/before --database sqlite --gap-ms 5 --pages 1,4

Each contender is a process of its own running a real `SqlPageStore` from its tree (PYTHONPATH:
`--baseline DIR` for "before", this checkout for "after"). On PostgreSQL (the default) it writes to one
throwaway cluster (fsync off, as benchmarks/server.py's) with the server's NOTIFY hook (a ~300-byte
payload per action as a whole notice); on SQLite to a fresh file of its own (WAL, synchronous=FULL, as
the server's). It plays P fresh pages, each with its next action queued once its last is answered: at
once (closed loop), or `--gap-ms` later, as players' moves arrive at a human pace — the writer then
sleeps between batches and wakes with its caches cold, as it does in the server at 200 live pages.
P = 1 is one action per batch (the common case at the server's pace), P = 8 lets the group commit
batch. The private state is checkpointed every 16th version. The contenders run interleaved,
`--rounds` times each; printed are the medians of the process's CPU per action (utime + stime: the
writer thread and the callers around it), of the writer thread's own, and of the wall time per
action, with the after/before ratios. (PostgreSQL's own CPU is not read here: a backend's is gone from
/proc with its connection; benchmarks/server.py and postgres_ceiling.py read it.)
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


def thread_cpu_s(native_id: int) -> tuple[float, float]:
    """A thread of this process's CPU time so far (utime, stime)."""
    # This checkout's reader, from the script's own folder: the child runs another tree's `benchmarks`.
    from proc_cpu import stat_times

    return stat_times(Path(f"/proc/self/task/{native_id}/stat"))


def child(url: str, pages: int, actions: int, tag: str, gap_s: float) -> None:
    """One contender's run, in the process of its own tree: prints its figures as JSON."""
    import heapq
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
    store = SqlPageStore(engine, notify=notify if url.startswith("postgresql") else None)
    ids = [f"{tag}-{page}" for page in range(pages)]
    for page_id in ids:
        record = PageRecord(page_id, "live", "quick", {}, "0" * 32, "0" * 64, None, datetime.now(UTC))
        seat = SeatRecord(f"{page_id}-blue".ljust(64, "0"), "blue", "seat")
        store.create(record, Checkpoint(0, "battle", "blue", None, "open", state=state), [seat]).result(30)
    done = threading.Semaphore(0)
    errors: list[BaseException] = []
    per_page = actions // pages

    # With a gap, the answered pages wait here for their next action (one pacing thread for all).
    due: list[tuple[float, str, int]] = []
    pacing = threading.Condition()

    def pace() -> None:
        while True:
            with pacing:
                while not due or due[0][0] > time.monotonic():
                    pacing.wait(None if not due else due[0][0] - time.monotonic())
                _, page_id, version = heapq.heappop(due)
            if not page_id:
                return
            queue_next(page_id, version)

    def then(page_id: str, version: int) -> None:
        if gap_s <= 0:
            queue_next(page_id, version)
            return
        with pacing:
            heapq.heappush(due, (time.monotonic() + gap_s, page_id, version))
            pacing.notify()

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
                then(page_id, version + 1)
            else:
                done.release()

        store.append_then(page_id, version, entry, checkpoint, answered)

    pacer = threading.Thread(target=pace, daemon=True)
    pacer.start()
    writer = next(thread for thread in threading.enumerate() if thread.name == "dotfight-writer")
    assert writer.native_id is not None
    before, started = os.times(), time.perf_counter()
    writer_before = thread_cpu_s(writer.native_id)
    for page_id in ids:
        queue_next(page_id, 0)
    for _ in ids:
        done.acquire()
    after, wall = os.times(), time.perf_counter() - started
    writer_user, writer_kernel = (
        spent - before_run
        for spent, before_run in zip(thread_cpu_s(writer.native_id), writer_before, strict=True)
    )
    with pacing:
        heapq.heappush(due, (0.0, "", 0))
        pacing.notify()
    store.close()
    engine.dispose()
    cpu = after.user + after.system - before.user - before.system
    total = per_page * pages
    print(
        json.dumps(
            {
                "tree": str(Path(dotfight.__file__).parents[1]),
                "cpu_ms": cpu * 1000 / total,
                "writer_ms": (writer_user + writer_kernel) * 1000 / total,
                "writer_kernel_ms": writer_kernel * 1000 / total,
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
    parser.add_argument("--database", choices=["postgresql", "sqlite"], default="postgresql")
    parser.add_argument(
        "--gap-ms", type=float, default=0.0, help="a page's next action this long after its last answer"
    )
    parser.add_argument(
        "--child", nargs=5, metavar=("URL", "PAGES", "ACTIONS", "TAG", "GAP_S"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        url, pages, actions, tag, gap_s = args.child
        child(url, int(pages), int(actions), tag, float(gap_s))
        return 0

    sys.path.insert(0, str(HERE))
    import shutil
    import tempfile

    from dotfight.store.database import make_engine
    from dotfight.store.migrations import upgrade_to_head
    from tests.store.conftest import PostgresCluster, find_postgres_bindir

    def migrated(url: str) -> str:
        engine = make_engine(url)
        upgrade_to_head(engine)
        engine.dispose()
        return url

    cluster: PostgresCluster | None = None
    scratch = Path(tempfile.mkdtemp(prefix="dotfight-writer-"))
    if args.database == "postgresql":
        cluster = PostgresCluster(find_postgres_bindir())
        cluster.create()
        cluster.start_server()
        shared_url = migrated(cluster.new_database())
    else:
        template = scratch / "template.sqlite"
        migrated(f"sqlite:///{template}")
    try:
        trees = {"before": args.baseline.resolve(), "after": HERE}
        print(f"load average at the start: {os.getloadavg()[0]:.2f}; {args.database}, gap {args.gap_ms} ms")
        for pages in [int(p) for p in args.pages.split(",")]:
            figures: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
            for round_number in range(args.rounds):
                order = list(trees) if round_number % 2 == 0 else list(reversed(trees))
                for name in order:
                    tag = f"{name}{pages}r{round_number}"
                    if cluster is not None:
                        url = shared_url
                    else:  # a fresh file each run: every contender starts from the same empty pages
                        run_file = scratch / f"{tag}.sqlite"
                        shutil.copy(template, run_file)
                        url = f"sqlite:///{run_file}"
                    env = {**os.environ, "PYTHONPATH": str(trees[name])}
                    answer = subprocess.run(
                        [sys.executable, __file__, "--baseline", str(trees[name]), "--child", url,
                         str(pages), str(args.actions), tag, str(args.gap_ms / 1000)],
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
                ("writer_ms", "writer thread ms/action"),
                ("writer_kernel_ms", "— of it in the kernel"),
                ("wall_ms", "wall ms/action"),
            ]:
                medians = {name: statistics.median(r[key] for r in figures[name]) for name in trees}
                ratio = medians["after"] / medians["before"]
                print(f"{label:28}{medians['before']:>10.3f}{medians['after']:>10.3f}{ratio:>13.2f}x")
    finally:
        if cluster is not None:
            cluster.stop_server()
            cluster.remove()
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
