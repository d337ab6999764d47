"""The server's worker processes (Dawood-bot's, the engine's for expensive pages) end with the server,
even when it is killed with SIGKILL and cannot stop them: otherwise every crash or `kill -9` of a
server left its forkserver, resource tracker and idle workers running for ever, holding memory."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.support.server_process import ServerProcess


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has ended; only its parent's wait is missing


def test_worker_processes_end_when_the_server_is_killed(tmp_path: Path) -> None:
    server = ServerProcess.on_sqlite(tmp_path)
    server.start()
    try:
        deadline = time.monotonic() + 20
        workers: set[int] = set()
        while time.monotonic() < deadline:  # the bot's workers are warmed up at start
            workers = server.descendants()
            if len(workers) >= 3:  # resource tracker, forkserver, at least one worker
                break
            time.sleep(0.1)
        assert len(workers) >= 3, f"expected the server's worker processes, found {workers}"
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
