"""`benchmarks/server.py` splits a server's CPU between its threads (the event loop, the busiest other
thread, the rest) from /proc: a thread that burns the CPU is the busiest other, and the time it used is
not counted to the main thread."""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from types import ModuleType

from tests.support.server_process import REPO_ROOT


def bench_server() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_server", REPO_ROOT / "benchmarks" / "server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def burn(seconds: float) -> None:
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


def test_a_busy_thread_is_counted_as_the_busiest_other_not_as_the_main_thread() -> None:
    bench = bench_server()
    pid = os.getpid()
    before = {pid: bench.thread_cpu(pid)}
    done = threading.Event()
    # The burner stays alive (waiting) after its 0.3 s: a thread that ended leaves /proc/<pid>/task.
    burner = threading.Thread(target=lambda: (burn(0.3), done.wait(10)))
    burner.start()
    try:
        deadline = time.monotonic() + 10
        main, busiest, rest = bench.thread_split([pid], before)
        while busiest < 0.25 and time.monotonic() < deadline:
            time.sleep(0.05)
            main, busiest, rest = bench.thread_split([pid], before)
    finally:
        done.set()
        burner.join()
    assert 0.25 <= busiest < 1.0, (main, busiest, rest)
    assert main < 0.2, (main, busiest, rest)
