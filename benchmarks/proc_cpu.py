"""CPU time from Linux /proc, for the benchmarks: a process's, or one of its threads'.

Imports nothing of the project's, so a benchmark that runs another source tree's code in its process
(`writer.py --baseline`) reads its CPU with this checkout's reader.
"""

from __future__ import annotations

import os
from pathlib import Path


def stat_times(stat: Path) -> tuple[float, float]:
    """The user and the system CPU seconds in a /proc `stat` file (a process's or a thread's)."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def cpu_split(pid: int) -> tuple[float, float]:
    """Returns the user and the system CPU time a process has used so far."""
    return stat_times(Path(f"/proc/{pid}/stat"))


def cpu_seconds(pid: int) -> float:
    """Returns the CPU time (user + system) a process has used so far."""
    return sum(cpu_split(pid))
