"""Fixtures of the hostile tests: each test gets real `dotfight serve` processes of its own, on loopback
only, with their address space capped, so that a regression fails the test instead of taking the machine
down. Loops in these tests are bounded (a count or a deadline), never `while True`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from tests.support.server_process import RELAXED_ACTION_BUDGET, ServerProcess

# Generous for a server with numpy, shapely and uvicorn loaded (about 150 MB resident, far more mapped),
# small enough that runaway growth dies long before it hurts the machine.
HOSTILE_MEMORY_CAP = 3 * 1024**3

# Tests drive the server far faster than people: the per-socket flood limit is raised unless a test says
# otherwise (the limits under test are set by each test); so is the page creation burst.
RELAXED_ENV = {
    "DOTFIGHT_WS_MESSAGES_PER_SECOND": "1000",
    "DOTFIGHT_WS_MESSAGE_BURST": "1000",
    "DOTFIGHT_PAGE_CREATION_BURST": "100000",
    **RELAXED_ACTION_BUDGET,
}

StartServer = Callable[..., ServerProcess]


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[StartServer]:
    """Starts a memory-capped `dotfight serve` on a fresh SQLite file (one folder per server):
    `start_server(extra_env={...}, extra_args=[...], start=True)`. Every server is stopped at the end."""
    started: list[ServerProcess] = []

    def start(
        *,
        extra_env: Mapping[str, str] | None = None,
        extra_args: Sequence[str] = (),
        memory_limit_bytes: int = HOSTILE_MEMORY_CAP,
        start: bool = True,
    ) -> ServerProcess:
        workdir = tmp_path / f"server{len(started)}"
        workdir.mkdir()
        server = ServerProcess.on_sqlite(
            workdir,
            extra_args=extra_args,
            extra_env={**RELAXED_ENV, **(extra_env or {})},
            memory_limit_bytes=memory_limit_bytes,
        )
        started.append(server)
        if start:
            server.start()
        return server

    yield start
    for server in started:
        server.stop()
