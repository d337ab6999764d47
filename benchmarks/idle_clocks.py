"""The CPU the people model's alarm costs while pages wait (issue 19: ≤ 1 % of a core for 1000 idle live
pages with clocks, not growing with the pages waiting).

Each round runs an event loop for `--seconds` twice, interleaved: once bare (the baseline: the loop
alone), once with one `Alarm` holding `--pages` pages whose deadlines are all later than the round (the
pages wait), and reports the process CPU each used as a share of one core, the median over `--rounds`
rounds, and the alarm's wake-ups. The alarm's own wake-ups are its `max_sleep_s` naps (one a minute by
default: pass `--max-sleep` to see them), whatever the number of pages.

    python3 benchmarks/idle_clocks.py                      # 1000 pages, 3 rounds of 10 s each way
    python3 benchmarks/idle_clocks.py --pages 100000 --seconds 30 --rounds 1
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dotfight.server.people.alarm import Alarm, SystemClock


class CountingClock(SystemClock):
    """The system clock, counting how often the alarm waits (each wait follows a wake-up)."""

    def __init__(self) -> None:
        self.waits = 0

    async def wait(self, wakeup: asyncio.Event, delay: float) -> None:
        """Counts the wait, then waits as the system clock does."""
        self.waits += 1
        await super().wait(wakeup, delay)


async def idle(seconds: float, pages: int, max_sleep_s: float) -> tuple[float, int]:
    """Returns the CPU share of one core used over `seconds` with `pages` waiting (0: no alarm), and the
    alarm's waits."""
    clock = CountingClock()
    alarm = Alarm(lambda page_id: None, clock, max_sleep_s=max_sleep_s) if pages else None
    if alarm is not None:
        alarm.start()
        later = time.time() + seconds + 3600
        for i in range(pages):
            alarm.set(f"page{i}", later + i)
    await asyncio.sleep(0.1)  # the alarm settles into its sleep before the measurement
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.sleep(seconds)
    used = (time.process_time() - cpu) / (time.perf_counter() - wall)
    if alarm is not None:
        alarm.stop()
    return used, clock.waits


def main() -> None:
    """Runs the interleaved rounds and prints the medians."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-sleep", type=float, default=60.0, help="the alarm's longest nap (s)")
    args = parser.parse_args()
    bare: list[float] = []
    alarmed: list[float] = []
    waits = 0
    for _ in range(args.rounds):
        bare.append(asyncio.run(idle(args.seconds, 0, args.max_sleep))[0])
        used, waited = asyncio.run(idle(args.seconds, args.pages, args.max_sleep))
        alarmed.append(used)
        waits += waited
    base, with_alarm = statistics.median(bare), statistics.median(alarmed)
    rounds = f"median of {args.rounds} × {args.seconds:g} s"
    print(f"idle loop, no alarm:        {100 * base:.4f} % of a core ({rounds})")
    print(f"alarm, {args.pages} pages waiting: {100 * with_alarm:.4f} % of a core")
    print(f"difference: {100 * (with_alarm - base):+.4f} points; the alarm waited {waits} times in all")


if __name__ == "__main__":
    main()
