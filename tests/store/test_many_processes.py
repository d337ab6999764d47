"""Many `dotfight serve` processes on one database (issue 11): a retried move is answered the same by
whichever process it reaches, batched writes of two processes never deadlock, and Dawood-bot plays each
page from exactly one process at a time — taken over by a peer when its owner dies.

Every test runs real server processes on a throwaway PostgreSQL cluster (tests/store/conftest.py) or on
one SQLite file.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from dotfight.server.app import close_pages, open_pages
from dotfight.server.pages.authority import Seat
from dotfight.server.schemas import BotIn, PageCreate
from dotfight.server.settings import Settings
from dotfight.store.database import make_engine
from dotfight.store.migrations import upgrade_to_head
from tests.store.test_postgres import (
    RELAXED_LIMITS,
    SERVER_START_TIMEOUT_S,
    LinkPage,
    assert_log_has_no_gap_or_duplicate,
    race,
)
from tests.support.players import nearest_snipe_action
from tests.support.server_process import REPO_ROOT, ServerProcess, client_limits

if TYPE_CHECKING:
    from conftest import PostgresCluster

# Rounds of a retried move sent to both processes at once (each round one move, so bounded).
RETRY_ROUNDS = 40
# Races of the deadlock test: pages raced at once in each round, and rounds (800 races in all).
RACE_PAGES = 40
RACE_ROUNDS = 20
# Bot pages waiting for Dawood-bot when the processes start.
BOT_PAGES = 6
# The bot's lease in the bot tests: short, so a dead owner's pages are taken over quickly.
LEASE_S = 2.0
BOT_WAIT_S = 90.0
DECIDES = re.compile(r"page ([\w-]+): Dawood-bot decides at version (\d+)")


def server_env(**extra: str) -> dict[str, str]:
    env = {f"DOTFIGHT_{name.upper()}": str(value) for name, value in RELAXED_LIMITS.items()}
    env.update(extra)
    return env


def server(database_url: str, log_path: Path, **env: str) -> ServerProcess:
    """`dotfight serve` with the raised request limits, logging Dawood-bot's decisions (info)."""
    return ServerProcess(
        database_url,
        log_path,
        extra_args=["--log-level", "info", "--no-access-log"],
        extra_env=server_env(**env),
        start_timeout_s=SERVER_START_TIMEOUT_S,
        http_timeout_s=30,
    )


def start_all(servers: list[ServerProcess]) -> None:
    for each in servers:
        each.launch()
    for each in servers:
        each.wait_healthy()


@contextlib.contextmanager
def serving_two(servers: list[ServerProcess]) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Starts two servers at once; stops both on the way out."""
    try:
        start_all(servers)
        yield servers[0], servers[1]
    finally:
        for each in servers:
            each.stop()


def migrated(url: str) -> str:
    engine = make_engine(url)
    try:
        upgrade_to_head(engine)
    finally:
        engine.dispose()
    return url


@pytest.fixture
def pg_url(postgres_cluster: PostgresCluster) -> str:
    return migrated(postgres_cluster.new_database())


@pytest.fixture(params=["postgresql", "sqlite"])
def two_processes(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two server processes on one database: a PostgreSQL database or one SQLite file."""
    if request.param == "postgresql":
        cluster: PostgresCluster = request.getfixturevalue("postgres_cluster")
        url = migrated(cluster.new_database())
    else:
        url = migrated(f"sqlite:///{tmp_path / 'pages.sqlite3'}")
    with serving_two([server(url, tmp_path / "first.log"), server(url, tmp_path / "second.log")]) as both:
        yield both


# --------------------------------------------------------------------------------------------------
# item 4: a retried move is answered the same wherever it lands


def test_a_move_sent_to_both_processes_at_once_is_answered_with_its_first_answer_by_both(
    two_processes: tuple[ServerProcess, ServerProcess],
) -> None:
    first, second = two_processes
    page = LinkPage.create(first.http)
    other = page.on(second.http)
    current = page.play_until(lambda snapshot: snapshot["phase"] == "play")
    for number in range(RETRY_ROUNDS):
        if current["phase"] == "over":
            break
        version, side = current["version"], current["side_to_act"]
        assert other.snapshot()["version"] == version  # the second process has seen this version
        action = nearest_snipe_action(current)
        move_id = f"retried-{number}"
        answers = race([(page, side, action, version, move_id), (other, side, action, version, move_id)])
        assert [answer.status_code for answer in answers] == [200, 200], [a.text for a in answers]
        # Whichever process wrote it, the other answered the first answer, never a second move.
        assert answers[0].json()["events"][-1] == answers[1].json()["events"][-1]
        assert answers[0].json() == answers[1].json()
        assert answers[0].json()["version"] == version + 1
        current = page.snapshot()
        assert current["version"] == version + 1
    entries = page.log()["entries"]
    retried = [entry["move_id"] for entry in entries if entry["move_id"] is not None]
    assert retried == [f"retried-{n}" for n in range(len(retried))]
    assert len(retried) >= RETRY_ROUNDS // 2
    assert_log_has_no_gap_or_duplicate(first.database_url, page.id)


# --------------------------------------------------------------------------------------------------
# item 5: no deadlocks


def deadlocks_logged(cluster: PostgresCluster, start: int) -> int:
    return cluster.log.read_text(errors="replace")[start:].count("deadlock detected")


def test_eight_hundred_races_of_two_processes_log_no_deadlock(
    postgres_cluster: PostgresCluster, pg_url: str, tmp_path: Path
) -> None:
    servers = [server(pg_url, tmp_path / "first.log"), server(pg_url, tmp_path / "second.log")]
    log_start = len(postgres_cluster.log.read_text(errors="replace"))
    limits = client_limits(max_connections=RACE_PAGES * 2)
    try:
        start_all(servers)
        clients = [httpx.Client(base_url=each.base_url, timeout=60, limits=limits) for each in servers]
        pages = [LinkPage.create(clients[0]) for _ in range(RACE_PAGES)]
        with ThreadPoolExecutor(8) as pool:
            currents = list(pool.map(lambda page: page.play_until(lambda s: s["phase"] == "play"), pages))
        races = 0
        for number in range(RACE_ROUNDS):
            requests = []
            for page, current in zip(pages, currents, strict=True):
                if current["phase"] == "over":
                    continue
                action = nearest_snipe_action(current)
                version, side = current["version"], current["side_to_act"]
                requests.append((page, side, action, version, f"first-{number}"))
                requests.append((page.on(clients[1]), side, action, version, f"second-{number}"))
            # Every page's two requests at the same moment: each process's writer batches many pages.
            answers = race(requests)
            for pair in range(0, len(answers), 2):
                statuses = sorted(answer.status_code for answer in answers[pair : pair + 2])
                assert statuses == [200, 409], [answer.text for answer in answers[pair : pair + 2]]
                races += 1
            with ThreadPoolExecutor(8) as pool:
                currents = list(pool.map(LinkPage.snapshot, pages))
        assert races >= RACE_PAGES * RACE_ROUNDS * 0.9
        for client in clients:
            client.close()
    finally:
        for each in servers:
            each.stop()
    assert deadlocks_logged(postgres_cluster, log_start) == 0, postgres_cluster.log_tail()
    for page in pages:
        assert_log_has_no_gap_or_duplicate(pg_url, page.id)


# --------------------------------------------------------------------------------------------------
# item 3: Dawood-bot is played by exactly one process


def create_waiting_bot_pages(url: str, count: int) -> dict[str, int]:
    """Bot pages in play where it is Dawood-bot's (blue's) move, made by a page authority of this test's
    own that runs no bot (it plays both seats through setup): they wait for the bot when the server
    processes start, and each of the bot's moves there is a real search (its whole budget). Returns each
    page's id and the version where the bot's turn begins."""

    async def create() -> dict[str, int]:
        database = make_engine(url)
        store, authority = open_pages(Settings(database_url=url), database)
        try:
            pages = {}
            for number in range(count):
                request = PageCreate(preset="quick", mode="bot", bot=BotIn(side="blue", strength="hard"))
                page = (await authority.create(request.command(number + 1))).page
                while not (page.state.phase == "play" and page.state.actor == "blue"):
                    action = nearest_snipe_action(page.public_snapshot())
                    side = page.state.actor or "blue"
                    await authority.act(page.meta.id, Seat(side), action, page.state.version, None)
                    page = await authority.page(page.meta.id)
                pages[page.meta.id] = page.state.version
            return pages
        finally:
            close_pages(store, authority)
            database.dispose()

    return asyncio.run(create())


def bot_decisions(servers: list[ServerProcess]) -> list[tuple[str, int]]:
    found = []
    for each in servers:
        found += [(page, int(version)) for page, version in DECIDES.findall(each.log_text())]
    return found


def wait_for_red(pages: Iterable[str], client: httpx.Client) -> dict[str, dict[str, Any]]:
    """Polls the pages until Dawood-bot (blue) has moved on each and it is red's move."""
    deadline = time.monotonic() + BOT_WAIT_S
    snapshots: dict[str, dict[str, Any]] = {}
    while time.monotonic() < deadline:
        for page in pages:
            answer = client.get(f"/api/pages/{page}")
            assert answer.status_code == 200, answer.text
            snapshots[page] = answer.json()
        if all(s["side_to_act"] == "red" or s["phase"] == "over" for s in snapshots.values()):
            return snapshots
        time.sleep(0.2)
    raise AssertionError(f"Dawood-bot did not move on every page within {BOT_WAIT_S} s: {snapshots}")


def log_entries(client: httpx.Client, page: str) -> list[dict[str, Any]]:
    answer = client.get(f"/api/pages/{page}/log")
    assert answer.status_code == 200, answer.text
    entries: list[dict[str, Any]] = answer.json()["entries"]
    return entries


def leases_held(url: str) -> dict[str, str]:
    database = create_engine(url, poolclass=NullPool)
    try:
        with database.connect() as connection:
            rows = connection.execute(text("SELECT page_id, owner FROM bot_leases"))
            return {page_id: owner for page_id, owner in rows}
    finally:
        database.dispose()


def test_pages_waiting_for_the_bot_are_played_by_one_of_two_starting_processes_each_move_once(
    pg_url: str, tmp_path: Path
) -> None:
    pages = create_waiting_bot_pages(pg_url, BOT_PAGES)
    # One worker each, thinking up to a second: the pages queue for it, so both processes are up while
    # the bot still has pages to play.
    env = {"DOTFIGHT_BOT_BUDGET_S": "1", "DOTFIGHT_BOT_PROCESSES": "1", "DOTFIGHT_BOT_LEASE_S": str(LEASE_S)}
    servers = [server(pg_url, tmp_path / name, **env) for name in ("first.log", "second.log")]
    try:
        start_all(servers)  # both resume every page waiting for the bot
        snapshots = wait_for_red(pages, servers[0].http)
        decisions = bot_decisions(servers)
        # Each bot move was worked out once, by one process: no version decided twice, none lost.
        assert len(decisions) == len(set(decisions)), decisions
        for page in pages:
            versions = sorted(version for page_id, version in decisions if page_id == page)
            entries = log_entries(servers[1].http, page)
            blue = [e["version"] - 1 for e in entries if e["side"] == "blue" and e["version"] > pages[page]]
            assert blue and versions == blue, (page, versions, blue)
            assert snapshots[page]["version"] == len(entries)
            assert_log_has_no_gap_or_duplicate(pg_url, page)
        # A lease lives only while its bot plays.
        deadline = time.monotonic() + 10
        while leases_held(pg_url) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert leases_held(pg_url) == {}
    finally:
        for each in servers:
            each.stop()


def test_when_the_process_playing_the_bot_dies_its_peer_takes_its_pages_over(
    pg_url: str, tmp_path: Path
) -> None:
    pages = create_waiting_bot_pages(pg_url, BOT_PAGES)
    lease = {"DOTFIGHT_BOT_LEASE_S": str(LEASE_S)}
    # One worker thinking for the owner: its pages queue for it, their leases held meanwhile.
    owner = server(pg_url, tmp_path / "owner.log", DOTFIGHT_BOT_PROCESSES="1", **lease)
    peer = server(pg_url, tmp_path / "peer.log", DOTFIGHT_BOT_BUDGET_S="0.2", **lease)
    try:
        owner.start()
        deadline = time.monotonic() + 30
        while not leases_held(pg_url) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert owner.process is not None
        owner.process.send_signal(signal.SIGSTOP)  # frozen while it holds leases
        held = leases_held(pg_url)
        assert held, "the owner took no lease"
        peer.start()
        owner.kill()
        killed_at = time.monotonic()
        snapshots = wait_for_red(pages, peer.http)
        # Taken over within a few leases' time once their owner died.
        assert time.monotonic() - killed_at < BOT_WAIT_S
        peer_decisions = bot_decisions([peer])
        assert {page_id for page_id, _ in peer_decisions} >= set(held), (held, peer_decisions)
        assert len(peer_decisions) == len(set(peer_decisions)), peer_decisions
        for page in pages:
            entries = log_entries(peer.http, page)
            assert snapshots[page]["version"] == len(entries)
            assert entries[pages[page]]["side"] == "blue"  # Dawood-bot moved
            assert_log_has_no_gap_or_duplicate(pg_url, page)
    finally:
        owner.stop()
        peer.stop()


# --------------------------------------------------------------------------------------------------
# item 2: `dotfight serve --workers N`


def worker_processes(parent: int) -> list[int]:
    """The worker processes uvicorn spawned under `parent` (not its resource tracker)."""
    children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
    return [int(child) for child in children if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()]


def test_serve_with_two_workers_on_postgresql_plays_pages_through_both(pg_url: str, tmp_path: Path) -> None:
    served = server(pg_url, tmp_path / "workers.log")
    served.extra_args += ["--workers", "2"]
    try:
        served.start()
        assert served.process is not None
        assert len(worker_processes(served.process.pid)) == 2
        pages = [LinkPage.create(served.http) for _ in range(4)]
        for page in pages:
            # Fresh connections, spread by the kernel over both workers' accept queues.
            with httpx.Client(base_url=served.base_url, timeout=30) as client:
                final = page.on(client).play_until(lambda snapshot: snapshot["version"] >= 12)
            assert final["version"] >= 12
            assert_log_has_no_gap_or_duplicate(pg_url, page.id)
        assert served.log_text().count("Started server process") == 2
    finally:
        served.stop()


def test_serve_refuses_several_workers_on_sqlite_naming_postgresql(tmp_path: Path) -> None:
    command = [
        sys.executable, "-m", "dotfight.cli", "serve", "--workers", "2",
        "--database-url", f"sqlite:///{tmp_path / 'pages.sqlite3'}", "--port", "0",
    ]  # fmt: skip
    # Run from this tree's root, as ServerProcess does: `-m` then imports the dotfight found here, not
    # whatever tree an editable install points at.
    answer = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert answer.returncode == 2, answer.stderr
    assert "PostgreSQL" in answer.stderr
    assert "--workers" in answer.stderr
    assert not (tmp_path / "pages.sqlite3").exists()  # refused before anything was opened
