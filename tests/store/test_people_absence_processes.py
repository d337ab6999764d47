"""Absence across two `dotfight serve` processes on one throwaway PostgreSQL cluster (issue 19, item 4):
blue's socket on one, red's on the other; the claim works across (decided on the process red left, which
then has no room for the page, from the presence and departures the processes share); a killed process's
seats are recorded as departed by the process that finds it dead."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
import pytest
from alembic.config import Config
from sqlalchemy import inspect

from alembic import command
from dotfight.store.database import make_engine
from dotfight.store.migrations import DEFAULT_SCRIPT_LOCATION, upgrade_to_head
from tests.server.test_people_absence_live import (
    ABSENCE_ENV,
    GRACE_S,
    claim_at_heard,
    play_the_claim,
    red_to_move,
)
from tests.store.test_multiprocess_live import PRESENCE_CLEARED_WITHIN_S, SERVER_ENV
from tests.support.page_client import act
from tests.support.server_process import ServerProcess

if TYPE_CHECKING:
    from conftest import PostgresCluster


@pytest.fixture
def two_servers(
    postgres_cluster: PostgresCluster, tmp_path: Path
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two `dotfight serve` processes with the short grace on one fresh PostgreSQL database."""
    url = postgres_cluster.new_database()
    env = {**SERVER_ENV, **ABSENCE_ENV}
    servers = [
        ServerProcess(url, tmp_path / f"server-{name}.log", extra_env=env, start_timeout_s=60)
        for name in ("a", "b")
    ]
    servers[0].start()  # one at a time: both would migrate at once otherwise
    servers[1].start()
    try:
        yield servers[0], servers[1]
    finally:
        for server in servers:
            server.stop()


def test_a_claim_works_across_processes(two_servers: tuple[ServerProcess, ServerProcess]) -> None:
    a, b = two_servers
    play_the_claim(blue_server=a, red_server=b, claim_server=b)


def test_a_killed_process_seats_are_recorded_as_departed(
    two_servers: tuple[ServerProcess, ServerProcess], postgres_cluster: PostgresCluster
) -> None:
    a, b = two_servers
    page_id, seats, blue, _ = red_to_move(blue_server=a, red_server=b)
    b.kill()
    killed_at = time.time()
    blue.wait_presence((True, False), timeout=PRESENCE_CLEARED_WITHIN_S)
    claim_at = claim_at_heard(blue)
    assert claim_at is not None and claim_at >= killed_at + GRACE_S
    database = a.database_url.split("@/")[1].split("?")[0]
    with psycopg.connect(host=str(postgres_cluster.root), port=5432, user="postgres", dbname=database) as db:
        rows = db.execute(
            "SELECT side, extract(epoch FROM left_at) FROM dotfight_departures WHERE page_id = %s", (page_id,)
        ).fetchall()
    assert [side for side, _ in rows] == ["red"]
    assert killed_at <= float(rows[0][1]) <= killed_at + PRESENCE_CLEARED_WITHIN_S
    time.sleep(max(0.0, claim_at - time.time()) + 0.05)
    won = act(a, page_id, seats["blue"], {"type": "claim"}, 2, move_id="claim")
    assert won.status_code == 200, won.text
    assert {"type": "game_over", "winner": "blue", "reason": "abandoned"} in won.json()["events"]
    blue.close()


def test_migration_0008_adds_the_departures_and_takes_them_back(postgres_url: str) -> None:
    engine = make_engine(postgres_url)
    try:
        upgrade_to_head(engine)
        assert "dotfight_departures" in inspect(engine).get_table_names()
        config = Config()
        config.set_main_option("script_location", str(DEFAULT_SCRIPT_LOCATION))
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.downgrade(config, "0007_clocks_rematches_phrases")
        assert "dotfight_departures" not in inspect(engine).get_table_names()
    finally:
        engine.dispose()
