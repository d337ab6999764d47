"""Time-outs on a real `dotfight serve` (issue 19, item 7): how long after its deadline the server writes a
page's `time_out` by itself, and the CPU a server holding many idle live pages with clocks costs.

- `delay`: `--pages` live quick pages with a 15 s clock are set up and blue's first turn played, then
  left alone; each one's `time_out` commit time (the log's `at`) less its red deadline is its delay
  (the server waits the 1 s lag cap on purpose). Prints p50, p99 and the largest.
- `idle`: the CPU (utime + stime) of two servers over `--seconds`, one holding `--few` and one `--many`
  live pages at red's turn with a 3-hour clock (their time never runs out meanwhile), measured in
  interleaved rounds (few, many, few, many: the machine's load falls on both alike). Prints each
  median and their ratio: it must not grow with the pages waiting.

    python3 benchmarks/timeouts.py delay --pages 50
    python3 benchmarks/timeouts.py idle --few 100 --many 1000 --seconds 20 --rounds 2
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.proc_cpu import cpu_seconds
from tests.support.clock_pages import endings, live_page_at_reds_turn, seconds, wait_over
from tests.support.server_process import RELAXED_ACTION_BUDGET, ServerProcess

ENV = {
    **RELAXED_ACTION_BUDGET,
    "DOTFIGHT_PAGE_CREATION_BURST": "100000",
    "DOTFIGHT_HTTP_REQUESTS_PER_SECOND": "100000",
    "DOTFIGHT_HTTP_REQUEST_BURST": "100000",
}


def _server(folder: Path, name: str) -> ServerProcess:
    workdir = folder / name
    workdir.mkdir()
    server = ServerProcess.on_sqlite(workdir, extra_env=ENV, extra_args=["--no-access-log"])
    server.start()
    return server


def delay(pages: int) -> None:
    """Prints the time-outs' delays after their deadlines."""
    with tempfile.TemporaryDirectory() as folder:
        server = _server(Path(folder), "delay")
        try:
            made = [live_page_at_reds_turn(server, initial_s=15) for _ in range(pages)]
            delays = []
            for page in made:
                wait_over(server, page.id, page.deadline - time.time() + 30)
                [written] = endings(server, page.id)
                delays.append(seconds(written["at"].replace("Z", "+00:00")) - page.deadline)
        finally:
            server.stop()
    delays.sort()
    p99 = delays[min(len(delays) - 1, round(0.99 * (len(delays) - 1)))]
    print(
        f"{pages} pages: time_out written after the deadline p50 {statistics.median(delays):.2f} s, "
        f"p99 {p99:.2f} s, max {delays[-1]:.2f} s (the lag cap is 1 s of it)"
    )


def _cpu_s(server: ServerProcess) -> float:
    """The server process's CPU time so far (user + system), in seconds."""
    assert server.process is not None
    return cpu_seconds(server.process.pid)


def _idle_share(server: ServerProcess, seconds_: float) -> float:
    """The server's CPU over `seconds_` of nobody asking anything, as a share of one core."""
    cpu, wall = _cpu_s(server), time.perf_counter()
    time.sleep(seconds_)
    return (_cpu_s(server) - cpu) / (time.perf_counter() - wall)


def idle(few: int, many: int, seconds_: float, rounds: int) -> None:
    """Prints the idle CPU of a server holding `few` and one holding `many` waiting pages."""
    with tempfile.TemporaryDirectory() as folder:
        servers = {count: _server(Path(folder), f"idle{count}") for count in (few, many)}
        try:
            for count, server in servers.items():
                for _ in range(count):
                    live_page_at_reds_turn(server, initial_s=10_800)
            time.sleep(3)  # the creations' work (checkpoints, the collector) settles
            shares: dict[int, list[float]] = {few: [], many: []}
            for _ in range(rounds):
                for count, server in servers.items():
                    shares[count].append(_idle_share(server, seconds_))
        finally:
            for server in servers.values():
                server.stop()
    low, high = statistics.median(shares[few]), statistics.median(shares[many])
    measured = f"median of {rounds} × {seconds_:g} s"
    print(f"{few} idle live pages with clocks: {100 * low:.3f} % of a core ({measured})")
    ratio = f"{high / low:.2f}" if low > 0 else "n/a"
    print(f"{many} idle live pages with clocks: {100 * high:.3f} % of a core; ratio {ratio}")


def main() -> None:
    """Runs the benchmark named on the command line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    delayed = commands.add_parser("delay")
    delayed.add_argument("--pages", type=int, default=50)
    idled = commands.add_parser("idle")
    idled.add_argument("--few", type=int, default=100)
    idled.add_argument("--many", type=int, default=1000)
    idled.add_argument("--seconds", type=float, default=20.0)
    idled.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if args.command == "delay":
        delay(args.pages)
    else:
        idle(args.few, args.many, args.seconds, args.rounds)


if __name__ == "__main__":
    main()
