"""The server's worker processes (Dawood-bot's, the engine's for expensive pages) end with the server,
even when it is killed with SIGKILL and cannot stop them: otherwise every crash or `kill -9` of a
server left its forkserver, resource tracker and idle workers running for ever, holding memory."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.support.page_client import local_page_in_play
from tests.support.server_process import ServerProcess


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has ended; only its parent's wait is missing


def _warmed_up(server: ServerProcess) -> set[int]:
    """Waits for the worker processes the server starts at start-up, and returns them."""
    deadline = time.monotonic() + 20
    workers: set[int] = set()
    while time.monotonic() < deadline:  # the bot's workers are warmed up at start
        workers = server.descendants()
        if len(workers) >= 3:  # resource tracker, forkserver, at least one worker
            return workers
        time.sleep(0.1)
    raise AssertionError(f"expected the server's worker processes, found {workers}")


def test_worker_processes_end_when_the_server_is_killed(tmp_path: Path) -> None:
    server = ServerProcess.on_sqlite(tmp_path)
    server.start()
    workers: set[int] = set()
    try:
        workers = _warmed_up(server)
        server.kill()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
            time.sleep(0.1)
        left = sorted(pid for pid in workers if _alive(pid))
        assert not left, f"processes outlived the killed server: {left}"
    finally:
        server.stop()
        for pid in workers:  # never leave them behind, even when the test fails
            if _alive(pid):
                os.kill(pid, 9)


def test_pictures_are_drawn_at_the_lowest_priority_and_the_other_workers_keep_the_servers(
    tmp_path: Path,
) -> None:
    """A picture can wait; a move cannot: the process that draws runs at niceness 19 (the kernel gives it
    about 1.5 % of a core beside a busy server thread), the bot's and the engine's at the server's own."""
    server = ServerProcess.on_sqlite(tmp_path)
    server.start()
    try:
        page_id, _, _ = local_page_in_play(server)
        _warmed_up(server)
        before = server.descendants()
        assert server.http.get(f"/api/pages/{page_id}/picture.png", timeout=60).status_code == 200
        drawers = server.descendants() - before
        assert drawers, "expected a picture worker process started by the drawing"
        own = os.getpriority(os.PRIO_PROCESS, server.process.pid)  # type: ignore[union-attr]
        assert {os.getpriority(os.PRIO_PROCESS, pid) for pid in drawers} == {19}
        assert {os.getpriority(os.PRIO_PROCESS, pid) for pid in before} == {own}
    finally:
        server.stop()
