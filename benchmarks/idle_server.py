"""What a server costs with its live pages joined and nobody moving (or, with `--think`, playing): CPU a
second, wake-ups and syscalls.

The server benchmark (`server.py`) measures CPU per action at a think time; part of that cost is not the
actions' but what a server pays per page, per socket and per second whatever is played (keep-alive pings,
the heartbeat, the alarms' polls, timers). This measures that part alone: it starts each contender as
`server.py` does (Dotfight, the floor app, and with `--baseline DIR` Dotfight from another tree), creates
`--pages` live pages, joins both seats of each, lets it settle, then for `--seconds` sends nothing and
reads the server's CPU, its context switches (a thread going to sleep and being woken again) and, with
`--strace`, its syscalls by name (`strace -c -f` attached for the window; strace slows what it watches,
so the CPU of a round with it is not comparable). Rounds are interleaved, as `server.py`'s.

    python3 benchmarks/idle_server.py --pages 1000 --seconds 20 --rounds 2 --baseline /tmp/before
    python3 benchmarks/idle_server.py --pages 200 --seconds 10 --rounds 1 --strace --think 1.0
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

# benchmarks/server.py: the same servers, pages and sockets.
import server as harness


def switches(pid: int) -> int:
    """Context switches of every thread of the process so far (voluntary + involuntary)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            for line in (task / "status").read_text().splitlines():
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    total += int(line.split()[1])
    return total


def thread_names(pid: int) -> dict[int, str]:
    """Python's names of the process's threads (py-spy's dump: `Thread <tid> (idle): "name"`)."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        dump = subprocess.run(
            ["py-spy", "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=30
        )
        found = re.findall(r'^Thread (\d+) \(\w+\): "([^"]*)"', dump.stdout, re.MULTILINE)
        return {int(tid): name for tid, name in found}
    return {}


def strace_summary(pid: int, seconds: float) -> str:
    """Attaches `strace -c -f` to the process for `seconds` and returns its table."""
    tracer = subprocess.Popen(
        ["strace", "-c", "-f", "-p", str(pid)], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    time.sleep(seconds)
    tracer.send_signal(2)
    _, table = tracer.communicate(timeout=30)
    return table


def start_profiler(args: argparse.Namespace, pid: int) -> list[subprocess.Popen[bytes]]:
    """With `--profile DIR`: py-spy samples the server for the window (every thread, GIL-holding samples,
    at `--rate` Hz), as collapsed stacks for benchmarks/profile_summary.py."""
    if args.profile is None:
        return []
    args.profile.mkdir(parents=True, exist_ok=True)
    out = args.profile / f"{args.contender}-{pid}.txt"
    command = [
        "py-spy", "record", "--pid", str(pid), "--threads", "--format", "raw", "--rate", str(args.rate),
        "--nonblocking", "--gil", "--duration", str(int(args.seconds) + 5), "--output", str(out),
    ]  # fmt: skip
    return [subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]


async def idle(args: argparse.Namespace, base: str, pid: int) -> dict[str, float]:
    pages = await harness.create_pages(base, args.pages)
    ws = base.replace("http://", "ws://")
    for first in range(0, len(pages), harness.JOIN_BATCH):
        batch = pages[first : first + harness.JOIN_BATCH]
        await asyncio.gather(*(harness.join(page, {"blue": ws, "red": ws}) for page in batch))
    await asyncio.sleep(args.settle)
    cpu, system, woken = harness.cpu_seconds(pid), harness.cpu_split(pid)[1], switches(pid)
    threads = harness.thread_cpu(pid)
    started = time.perf_counter()
    latencies: list[float] = []
    players = [
        asyncio.create_task(harness.play(page, args, latencies, started + args.seconds))
        for page in (pages if args.think > 0 else [])
    ]
    profiler = start_profiler(args, pid)
    if args.strace:
        table = await asyncio.to_thread(strace_summary, pid, args.seconds)
    else:
        await asyncio.sleep(args.seconds)
    harness.stop_profiler(profiler)
    elapsed = time.perf_counter() - started
    actions = len(latencies)
    cpu, system = harness.cpu_seconds(pid) - cpu, harness.cpu_split(pid)[1] - system
    woken = switches(pid) - woken
    names = thread_names(pid)
    by_name: dict[str, float] = {}
    kernel: dict[str, float] = {}
    for tid, (user, system_now) in harness.thread_cpu(pid).items():
        name = re.sub(r"_\d+$", "_*", names.get(tid, "?"))  # a pool's threads together
        user_before, system_before = threads.get(tid, (0.0, 0.0))
        by_name[name] = by_name.get(name, 0.0) + user + system_now - user_before - system_before
        kernel[name] = kernel.get(name, 0.0) + system_now - system_before
    await asyncio.gather(*players)
    for page in pages:
        for connection in page.sockets.values():
            await connection.close()
    busiest = sorted(by_name.items(), key=lambda item: -item[1])[:4]
    figures = {"cpu_ms_per_s": cpu / elapsed * 1000, "system_share": system / cpu if cpu else 0.0}
    figures["switches_per_s"] = woken / elapsed
    what = f"playing (think {args.think} s, {actions / elapsed:.0f} actions/s)" if actions else "idle"
    print(
        f"  {args.pages} pages {what} {elapsed:.1f} s: CPU {figures['cpu_ms_per_s']:.1f} ms/s"
        f" ({figures['system_share']:.0%} in the kernel), {figures['switches_per_s']:.0f} context switches/s;"
        f" load average {os.getloadavg()[0]:.1f}"
    )
    if actions:
        figures["cpu_ms_per_action"] = cpu / actions * 1000
        figures["switches_per_action"] = woken / actions
        print(
            f"  per action: CPU {figures['cpu_ms_per_action']:.3f} ms,"
            f" {figures['switches_per_action']:.1f} context switches; "
            + ", ".join(
                f"{name} {spent / actions * 1000:.3f} ms ({kernel[name] / actions * 1000:.3f} in the kernel)"
                for name, spent in busiest
            )
        )
    print("  threads: " + ", ".join(f"{name} {spent / elapsed * 1000:.1f} ms/s" for name, spent in busiest))
    if args.strace:
        print(f"  syscalls over {actions} actions:")
        rows = [line for line in table.splitlines() if not line.startswith("strace:")]
        print("\n".join("    " + line for line in rows[:22]))
    return figures


def one_round(args: argparse.Namespace, make: Any) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as workdir:
        server = make(Path(workdir))
        try:
            server.start()
            assert server.process is not None
            return harness.run_client(idle(args, server.base_url, server.process.pid))
        finally:
            server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0, help="the idle window measured (default 20)")
    parser.add_argument("--settle", type=float, default=3.0, help="wait after the joins (default 3 s)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--baseline", type=Path, default=None, help="also Dotfight from this source tree")
    parser.add_argument("--strace", action="store_true", help="count syscalls in the window (strace -c -f)")
    parser.add_argument(
        "--think", type=float, default=0.0, help="play in the window at this think time (default 0: idle)"
    )
    parser.add_argument(
        "--profile", type=Path, default=None, help="py-spy each server in the window, into this directory"
    )
    parser.add_argument("--rate", type=int, default=100, help="py-spy's samples a second (default 100)")
    args = parser.parse_args()
    args.actions = 10**9  # with --think, every page plays for the whole window
    harness.raise_open_files_limit()
    contenders: dict[str, Any] = {"dotfight": harness.bench_server}
    if args.baseline is not None:
        tree = args.baseline.resolve()
        contenders["before"] = lambda workdir: harness.BaselineServer(tree, workdir)
    contenders["floor"] = lambda workdir: harness.FloorServer(workdir)
    results = harness.interleaved(args, contenders, one_round)
    print(f"\nmedians over {args.rounds} interleaved rounds")
    for key in ("cpu_ms_per_s", "switches_per_s", "cpu_ms_per_action", "switches_per_action"):
        if key not in results["floor"][0]:
            continue
        medians = {name: statistics.median(r[key] for r in runs) for name, runs in results.items()}
        cells = "  ".join(f"{name} {value:.1f}" for name, value in medians.items())
        print(f"{key:16} {cells}  (dotfight/floor {medians['dotfight'] / medians['floor']:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
