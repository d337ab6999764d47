"""Memory per live page: what a server holds for each page with both of its sockets joined.

Starts a server on a fresh SQLite file, creates `--pages` live pages (quick preset, set up over HTTP),
joins both seats of each (2 × pages sockets), plays `--moves` soft snipes on each page, lets the server
settle, and prints its resident growth per page over its size before the pages were made — the same
figure as `benchmarks/server.py` ("KB per live page (joined)"), without the load's CPU. Contenders
(`dotfight` from this tree, `--baseline DIR` another tree, `--floor` the same-stack floor app) are run in
interleaved rounds, and their medians and ratios printed.

With `--trace`, one more run of Dotfight under `tracemalloc` (its figures are not the RSS's: tracing
costs memory of its own) compares a snapshot taken before the pages were made with one taken after, and
prints where the bytes per page are: by the line that allocated them, by file, and by the first frame
of the allocation's stack in a library or in Dotfight (uvicorn, websockets, Starlette, FastAPI, asyncio,
the engine, the server).

With `--pymalloc`, one more run of Dotfight prints how Python's small-object allocator grew: its arenas
per page, split into live objects, free blocks inside used pools and whole free pools — memory freed
after a peak that stays resident while one live object sits in each arena (fragmentation).

    python3 benchmarks/memory.py --pages 500 --rounds 3 --floor --baseline /tmp/before
    python3 benchmarks/memory.py --pages 300 --rounds 0 --trace
    python3 benchmarks/memory.py --pages 1000 --rounds 0 --pymalloc
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import sys
import tempfile
import textwrap
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.server import (
    BaselineServer,
    FloorServer,
    Page,
    bench_server,
    create_pages,
    join,
    play,
    raise_open_files_limit,
    rss_bytes,
    run_client,
)

# Loaded by the measured server at start-up (a `sitecustomize` on its PYTHONPATH): with
# $DOTFIGHT_TRACE_DIR, tracemalloc from the first allocation and a snapshot written there at each SIGUSR1;
# at each SIGUSR2, pymalloc's statistics on its stderr (the server's log).
SITECUSTOMIZE = """
import os, signal, tracemalloc
if os.environ.get("DOTFIGHT_TRACE_DIR"):
    tracemalloc.start(int(os.environ.get("DOTFIGHT_TRACE_FRAMES", "16")))
_count = [0]
def _dump(signum, frame):
    _count[0] += 1
    path = os.path.join(os.environ["DOTFIGHT_TRACE_DIR"], "snapshot-%d.pickle" % _count[0])
    tracemalloc.take_snapshot().dump(path + ".part")
    os.rename(path + ".part", path)
signal.signal(signal.SIGUSR1, _dump)
def _stats(signum, frame):
    import sys
    sys.stderr.write("=====PYMALLOC=====\\n")
    sys.stderr.flush()
    sys._debugmallocstats()
    sys.stderr.flush()
signal.signal(signal.SIGUSR2, _stats)
"""

# The first frame (from the allocation outwards) in one of these names its owner in the `owner` view.
OWNERS = (
    ("dotfight/engine/", "dotfight engine"),
    ("dotfight/server/", "dotfight server"),
    ("dotfight/store/", "dotfight store"),
    ("uvicorn/", "uvicorn"),
    ("websockets/", "websockets"),
    ("starlette/", "starlette"),
    ("fastapi/", "fastapi"),
    ("sqlalchemy/", "sqlalchemy"),
    ("pydantic", "pydantic"),
)


async def load(base: str, pages_count: int, moves: int) -> None:
    """Makes the pages, joins both sockets of each, plays `moves` moves on each and keeps the sockets
    open for the caller's measurement (closed when the process's loop ends)."""
    pages: list[Page] = await create_pages(base, pages_count)
    ws = base.replace("http://", "ws://")
    for first in range(0, len(pages), 100):
        await asyncio.gather(*(join(page, {"blue": ws, "red": ws}) for page in pages[first : first + 100]))
    if moves:
        args = argparse.Namespace(actions=moves, think=0.0)
        deadline = time.perf_counter() + 120
        await asyncio.gather(*(play(page, args, [], deadline) for page in pages))
    LIVE.extend(pages)


LIVE: list[Page] = []


async def settle_and_measure(pid: int, seconds: float) -> int:
    await asyncio.sleep(seconds)
    return rss_bytes(pid)


async def close_all() -> None:
    for page in LIVE:
        for connection in page.sockets.values():
            await connection.close()
    LIVE.clear()


def one_round(make: Any, args: argparse.Namespace) -> float:
    """Runs one contender once; returns its KB per live page."""
    with tempfile.TemporaryDirectory() as workdir:
        server = make(Path(workdir))
        try:
            server.start()
            pid = server.process.pid
            time.sleep(1.0)
            before = rss_bytes(pid)

            async def main() -> int:
                await load(server.base_url, args.pages, args.moves)
                after = await settle_and_measure(pid, 2.0)
                await close_all()
                return after

            after = run_client(main())
            kb: float = (after - before) / 1024 / args.pages
            print(f"  {kb:.1f} KB per live page ({(after - before) / 1024 / 1024:.1f} MB for {args.pages})")
            return kb
        finally:
            server.stop()


def owner(trace: tracemalloc.Traceback) -> str:
    for frame in reversed(trace):  # the allocating frame first (a traceback lists the oldest first)
        for needle, name in OWNERS:
            if needle in frame.filename:
                return name
    return Path(trace[0].filename).name


def trace_round(args: argparse.Namespace) -> None:
    """Runs Dotfight under tracemalloc and prints where the bytes per page are."""
    with tempfile.TemporaryDirectory() as workdir:
        folder = Path(workdir)
        (folder / "site").mkdir()
        (folder / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE)
        server = bench_server(folder)
        server.extra_env.update(
            {
                "PYTHONPATH": os.pathsep.join([str(folder / "site"), *sys.path[:1]]),
                "DOTFIGHT_TRACE_DIR": str(folder),
            }
        )
        server.start_timeout_s = 300.0  # tracing slows start-up several times over
        try:
            server.start()
            assert server.process is not None
            pid = server.process.pid
            time.sleep(1.0)

            def snapshot(number: int) -> tracemalloc.Snapshot:
                os.kill(pid, signal.SIGUSR1)
                path = folder / f"snapshot-{number}.pickle"
                deadline = time.monotonic() + 120
                while not path.exists():
                    if time.monotonic() > deadline:
                        raise RuntimeError("the server wrote no snapshot")
                    time.sleep(0.1)
                return tracemalloc.Snapshot.load(str(path))

            first = snapshot(1)

            async def main() -> tracemalloc.Snapshot:
                await load(server.base_url, args.pages, args.moves)
                await asyncio.sleep(2.0)
                taken = await asyncio.to_thread(snapshot, 2)
                await close_all()
                return taken

            second = run_client(main())
            if args.keep is not None:
                args.keep.mkdir(parents=True, exist_ok=True)
                for number in (1, 2):
                    name = f"snapshot-{number}.pickle"
                    (args.keep / name).write_bytes((folder / name).read_bytes())
        finally:
            server.stop()
    report(first, second, args.pages, args.top)


def pymalloc_round(args: argparse.Namespace) -> None:
    """Runs Dotfight (untraced, with the signal handlers) and prints how pymalloc's arenas grew per page,
    from `sys._debugmallocstats()` before the pages were made and after."""
    with tempfile.TemporaryDirectory() as workdir:
        folder = Path(workdir)
        (folder / "site").mkdir()
        (folder / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE)
        server = bench_server(folder)
        server.extra_env.update({"PYTHONPATH": os.pathsep.join([str(folder / "site"), *sys.path[:1]])})
        try:
            server.start()
            assert server.process is not None
            pid = server.process.pid
            time.sleep(1.0)
            os.kill(pid, signal.SIGUSR2)
            before = rss_bytes(pid)

            async def main() -> int:
                await load(server.base_url, args.pages, args.moves)
                after = await settle_and_measure(server.process.pid, 2.0)  # type: ignore[union-attr]
                os.kill(pid, signal.SIGUSR2)
                await asyncio.sleep(1.0)
                await close_all()
                return after

            after = run_client(main())
            log = server.log_text()
        finally:
            server.stop()
    figures = [_pymalloc_figures(part) for part in log.split("=====PYMALLOC=====")[1:3]]
    per_page = {key: (figures[1][key] - figures[0][key]) / 1024 / args.pages for key in figures[0]}
    print(
        f"\nresident growth {(after - before) / 1024 / args.pages:.1f} KB per live page;"
        " pymalloc, KB per page:"
    )
    print(
        f"  arenas {per_page['arenas']:.1f}: live objects {per_page['live']:.1f}, free blocks in used pools"
        f" {per_page['free blocks']:.1f}, free pools {per_page['free pools']:.1f}"
    )


def _pymalloc_figures(text: str) -> dict[str, int]:
    """Reads the arenas, live bytes, free blocks and free pools from `sys._debugmallocstats()` output."""
    figures: dict[str, int] = {}
    names = {
        "# arenas allocated current": "arenas",
        "# bytes in allocated blocks": "live",
        "# bytes in available blocks": "free blocks",
        "unused pools *": "free pools",
    }
    for line in text.splitlines():
        for start, name in names.items():
            if start in line:
                figures[name] = int(line.rsplit("=", 1)[1].replace(",", ""))
    figures["arenas"] *= 1024 * 1024  # arenas of 1 MiB (64-bit builds, since Python 3.10)
    return figures


def report(first: tracemalloc.Snapshot, second: tracemalloc.Snapshot, pages: int, top: int) -> None:
    ignore = [tracemalloc.Filter(False, tracemalloc.__file__)]
    first, second = first.filter_traces(ignore), second.filter_traces(ignore)
    total = sum(stat.size_diff for stat in second.compare_to(first, "filename"))
    print(f"\ntraced growth: {total / 1024 / pages:.1f} KB per live page ({pages} pages)")
    owners: dict[str, int] = {}
    old = {(t.traceback, t.size) for t in first.traces}
    for trace in second.traces:
        if (trace.traceback, trace.size) in old:
            continue
        name = owner(trace.traceback)
        owners[name] = owners.get(name, 0) + trace.size
    print("\nby owner (first frame in a library or in Dotfight), KB per page:")
    for name, size in sorted(owners.items(), key=lambda item: -item[1])[:top]:
        print(f"  {size / 1024 / pages:7.2f}  {name}")
    print("\nby file, KB per page:")
    for stat in second.compare_to(first, "filename")[:top]:
        print(f"  {stat.size_diff / 1024 / pages:7.2f}  {stat.traceback[0].filename}")
    print("\nby line (with the callers), KB per page:")
    for stat in second.compare_to(first, "traceback")[:top]:
        print(f"  {stat.size_diff / 1024 / pages:7.2f}  {stat.count_diff / pages:5.1f} blocks/page")
        for frame in list(reversed(stat.traceback))[:8]:  # the allocating frame first
            print(
                textwrap.indent(f"{frame.filename.split('site-packages/')[-1]}:{frame.lineno}", "           ")
            )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=300, help="live pages (default 300)")
    parser.add_argument("--moves", type=int, default=6, help="moves played on each page (default 6)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of RSS (default 3)")
    parser.add_argument("--floor", action="store_true", help="also measure the same-stack floor app")
    parser.add_argument("--baseline", type=Path, default=None, help="also measure `dotfight serve` from DIR")
    parser.add_argument("--trace", action="store_true", help="then one traced run: where the bytes are")
    parser.add_argument("--top", type=int, default=25, help="rows of each traced view (default 25)")
    parser.add_argument("--pymalloc", action="store_true", help="then one run: pymalloc's arenas per page")
    parser.add_argument("--keep", type=Path, default=None, help="keep the traced run's snapshots in DIR")
    parser.add_argument("--report", type=Path, default=None, help="only report on the snapshots kept in DIR")
    args = parser.parse_args()
    if args.report is not None:
        first, second = (tracemalloc.Snapshot.load(str(args.report / f"snapshot-{n}.pickle")) for n in (1, 2))
        report(first, second, args.pages, args.top)
        return 0
    raise_open_files_limit()
    contenders: dict[str, Any] = {"dotfight": bench_server}
    if args.baseline is not None:
        tree = args.baseline.resolve()
        contenders["before"] = lambda workdir: BaselineServer(tree, workdir)
    if args.floor:
        contenders["floor"] = FloorServer
    results: dict[str, list[float]] = {name: [] for name in contenders}
    for number in range(args.rounds):
        order = list(contenders) if number % 2 == 0 else list(reversed(contenders))
        for name in order:
            print(f"round {number + 1}: {name}", flush=True)
            results[name].append(one_round(contenders[name], args))
    if args.rounds:
        print(f"\nKB per live page, medians of {args.rounds} rounds ({args.pages} pages, both sockets):")
        medians = {name: statistics.median(values) for name, values in results.items()}
        for name, value in medians.items():
            ratios = ", ".join(
                f"{value / medians[other]:.2f}× {other}"
                for other in medians
                if other != name and medians[other]
            )
            print(f"  {name:10} {value:7.1f} KB   ({ratios})")
    if args.trace:
        trace_round(args)
    if args.pymalloc:
        pymalloc_round(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
