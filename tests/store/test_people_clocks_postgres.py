"""Time-outs across two `dotfight serve` processes on one throwaway PostgreSQL database (issue 19): both
processes hold every page's deadline (one from its commits, the other from its poll of the earliest
deadlines) and both try to end it when its time is up; each page gets one `time_out`, never two, within
10 s of its deadline. And SIGKILL of the process that watched the pages still ends them on time."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.clock_pages import endings, live_page_at_reds_turn, seconds, wait_over
from tests.support.server_process import RELAXED_ACTION_BUDGET, ServerProcess

if TYPE_CHECKING:
    from conftest import PostgresCluster

WITHIN_S = 10.0
PAGES = 6
SERVER_ENV = {**RELAXED_ACTION_BUDGET, "DOTFIGHT_PAGE_CREATION_BURST": "1000"}


@pytest.fixture
def two_servers(
    postgres_cluster: PostgresCluster, tmp_path: Path
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two `dotfight serve` processes on one fresh PostgreSQL database."""
    url = postgres_cluster.new_database()
    servers = [
        ServerProcess(url, tmp_path / f"server-{name}.log", extra_env=SERVER_ENV, start_timeout_s=60)
        for name in ("a", "b")
    ]
    servers[0].start()  # one at a time: both would migrate at once otherwise
    servers[1].start()
    try:
        yield servers[0], servers[1]
    finally:
        for server in servers:
            server.stop()


def _delays(server: ServerProcess, pages: list[str], deadlines: list[float]) -> list[float]:
    """Waits for every page to end on time; returns each time-out's delay after its deadline."""
    delays = []
    for page_id, deadline in zip(pages, deadlines, strict=True):
        shown, _ = wait_over(server, page_id, deadline - time.time() + WITHIN_S + 5)
        assert shown["winner"] == "blue"
        written = endings(server, page_id)
        assert len(written) == 1, written  # one, never two
        delays.append(seconds(written[0]["at"].replace("Z", "+00:00")) - deadline)
    return delays


def test_two_processes_write_one_time_out_never_two(two_servers: tuple[ServerProcess, ServerProcess]) -> None:
    first, second = two_servers
    pages = [live_page_at_reds_turn(first if n % 2 else second, initial_s=15) for n in range(PAGES)]
    delays = _delays(first, [page.id for page in pages], [page.deadline for page in pages])
    assert all(0 <= delay <= WITHIN_S for delay in delays), delays
    logs = first.log_text() + second.log_text()
    assert logs.count("time ran out") == PAGES  # each written once, by one of them


def test_sigkill_of_the_watching_process_still_ends_its_pages_on_time(
    two_servers: tuple[ServerProcess, ServerProcess],
) -> None:
    watcher, other = two_servers
    pages = [live_page_at_reds_turn(watcher, initial_s=15) for _ in range(3)]
    watcher.kill()
    delays = _delays(other, [page.id for page in pages], [page.deadline for page in pages])
    assert all(0 <= delay <= WITHIN_S for delay in delays), delays
