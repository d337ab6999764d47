"""The server on PostgreSQL (issue 3): migrations on start (two instances at once too), whole pages
played over HTTP, refusals that change nothing, restarts, concurrent writers (one process or two), an
outage of the database and a bot page — all against a real PostgreSQL cluster of one's own.

Pages are played by a simple player that reads the public snapshot: quick setup, both sides ready, then
full-power snipes from the side's flickable soldier nearest to a living enemy, at that enemy. Once a page
is over, its revealed seed lets the engine replay the stored log, which must give the same events and
the same page.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from alembic.script import ScriptDirectory
from fastapi.testclient import TestClient
from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from dotfight.engine import Replay, RuleSet
from dotfight.server.app import create_app
from dotfight.server.page_view import with_cross_sides
from dotfight.server.pages.authority import CACHE_EVERY
from dotfight.server.settings import Settings
from dotfight.store.database import begin_write, make_engine
from dotfight.store.migrations import upgrade_to_head
from dotfight.store.models import ActionRow, utc_now
from tests.support.players import nearest_snipe_action
from tests.support.server_process import ServerProcess

if TYPE_CHECKING:
    from conftest import PostgresCluster

# Far above what the simple player needs to end a Quick page (about 130 to 200 actions).
MAX_ACTIONS = 1500
# Raised request limits: the tests act far faster than the per-address default allows a person.
RELAXED_LIMITS = {
    "http_requests_per_second": 100_000.0,
    "http_request_burst": 100_000,
    "page_creation_burst": 100_000,
    "actions_per_page_per_second": 100_000.0,
    "actions_per_page_burst": 100_000,
    "actions_per_address_per_second": 100_000.0,
    "actions_per_address_burst": 100_000,
}
SERVER_START_TIMEOUT_S = 60
# Generous: Dawood-bot thinks in a worker thread, and the machine is shared.
BOT_WAIT_S = 60.0


# --------------------------------------------------------------------------------------------------
# playing a page over HTTP


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class LinkPage:
    """A link-mode page reached through one HTTP client (Starlette's TestClient is an httpx.Client too);
    remembers what it sent, in order."""

    def __init__(self, client: httpx.Client, page_id: str, seats: dict[str, str], seed_sha256: str) -> None:
        self.client = client
        self.id = page_id
        self.seats = seats
        self.seed_sha256 = seed_sha256
        # (version, side, action, events) of every action this player had applied.
        self.sent: list[tuple[int, str, dict[str, Any], list[dict[str, Any]]]] = []

    @classmethod
    def create(cls, client: httpx.Client, preset: str = "quick") -> LinkPage:
        response = client.post("/api/pages", json={"preset": preset, "mode": "link"})
        assert response.status_code == 201, response.text
        body = response.json()
        assert body["seats"]["blue"] != body["seats"]["red"]
        return cls(client, body["id"], body["seats"], body["seed_sha256"])

    def on(self, client: httpx.Client) -> LinkPage:
        """The same page (and what was sent on it) through another client, e.g. after a restart."""
        other = LinkPage(client, self.id, self.seats, self.seed_sha256)
        other.sent = self.sent
        return other

    def snapshot(self) -> dict[str, Any]:
        response = self.client.get(f"/api/pages/{self.id}")
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    def log(self) -> dict[str, Any]:
        response = self.client.get(f"/api/pages/{self.id}/log")
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    def post(
        self, side: str, action: dict[str, Any], version: int, move_id: str | None = None
    ) -> httpx.Response:
        body: dict[str, Any] = {"action": action, "version": version}
        if move_id is not None:
            body["move_id"] = move_id
        return self.client.post(f"/api/pages/{self.id}/actions", json=body, headers=bearer(self.seats[side]))

    def act(
        self, side: str, action: dict[str, Any], version: int, move_id: str | None = None
    ) -> dict[str, Any]:
        """Applies an action that must be accepted; checks the answer's version and records it."""
        response = self.post(side, action, version, move_id)
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        assert result["version"] == version + 1
        # As the log stores them: without the options the server adds to the turn events it sends (C6).
        events = [
            {key: value for key, value in event.items() if key != "options"} for event in result["events"]
        ]
        self.sent.append((result["version"], side, action, events))
        return result

    def step(self) -> dict[str, Any]:
        """Plays the next action of the side to act and returns the page after it."""
        current = self.snapshot()
        assert current["phase"] != "over"
        self.act(current["side_to_act"], nearest_snipe_action(current), current["version"])
        return self.snapshot()

    def play_until(self, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """Plays until `done(snapshot)` (or the page is over) and returns the last snapshot."""
        current = self.snapshot()
        while current["phase"] != "over" and not done(current):
            assert current["version"] < MAX_ACTIONS, "the simple player never ended the page"
            self.act(current["side_to_act"], nearest_snipe_action(current), current["version"])
            current = self.snapshot()
        return current

    def play_to_end(self) -> dict[str, Any]:
        return self.play_until(lambda _snapshot: False)


def assert_log_matches_play(page: LinkPage, log: dict[str, Any]) -> None:
    """The stored log holds every action sent, in order, with versions 1..n and the events answered."""
    entries = log["entries"]
    assert [entry["version"] for entry in entries] == list(range(1, len(entries) + 1))
    assert [(e["version"], e["side"], e["action"], e["events"]) for e in entries] == page.sent


def assert_replays_to(log: dict[str, Any], final: dict[str, Any]) -> None:
    """The engine, given the revealed seed, replays the log to the same events and the same page."""
    entries = log["entries"]
    replay = Replay(
        RuleSet.from_json(log["rules"]),
        int(log["seed"], 16),
        [{"side": entry["side"], "action": entry["action"]} for entry in entries],
    )
    assert replay.error is None
    assert replay.valid == len(entries)
    # The served log's events are the replay's, each cross naming its side as the replayed page knows it.
    replayed = [with_cross_sides(replay.state, events) for events in replay.events]
    assert json_copy(replayed) == [entry["events"] for entry in entries]
    engine_view = json_copy(replay.state.snapshot())
    assert {key: final[key] for key in engine_view} == engine_view


def json_copy(value: Any) -> Any:
    """The value as it comes back from JSON (tuples become lists)."""
    return json.loads(json.dumps(value))


def assert_refused(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["error"]["code"] == code, body
    return body


# --------------------------------------------------------------------------------------------------
# the app, in process or as a real server process


@pytest.fixture
def web_dir(tmp_path: Path) -> Path:
    web = tmp_path / "web"
    web.mkdir()
    (web / "index.html").write_text("<!doctype html><title>Dotfight</title>")
    return web


def make_settings(database_url: str, web_dir: Path) -> Settings:
    return Settings(database_url=database_url, web_dir=web_dir, **RELAXED_LIMITS)  # type: ignore[arg-type]


@pytest.fixture
def start_app(postgres_url: str, web_dir: Path) -> Callable[[], TestClient]:
    """Starts (enters) a fresh app instance on the test's PostgreSQL database: one call, one instance."""

    def start() -> TestClient:
        return TestClient(create_app(make_settings(postgres_url, web_dir)))

    return start


def server_process(database_url: str, log_path: Path) -> ServerProcess:
    """`dotfight serve` on PostgreSQL with the raised request limits, quiet but for warnings."""
    return ServerProcess(
        database_url,
        log_path,
        extra_args=["--log-level", "warning", "--no-access-log"],
        extra_env={f"DOTFIGHT_{name.upper()}": str(value) for name, value in RELAXED_LIMITS.items()},
        start_timeout_s=SERVER_START_TIMEOUT_S,
        http_timeout_s=30,
    )


def sql_engine(url: str) -> Engine:
    """A plain engine for looking straight into the database (not the server's own)."""
    return create_engine(url, poolclass=NullPool)


@pytest.fixture(scope="module")
def two_servers(
    postgres_cluster: PostgresCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two server processes (two workers) on one PostgreSQL database, migrated beforehand."""
    url = postgres_cluster.new_database()
    engine = make_engine(url)
    try:
        upgrade_to_head(engine)
    finally:
        engine.dispose()
    workdir = tmp_path_factory.mktemp("servers")
    servers = (server_process(url, workdir / "first.log"), server_process(url, workdir / "second.log"))
    try:
        for server in servers:
            server.launch()
        for server in servers:
            server.wait_healthy()
        yield servers
    finally:
        for server in servers:
            server.stop()


# --------------------------------------------------------------------------------------------------
# 1. migrations


def alembic_head() -> str:
    head = ScriptDirectory(str(Settings().alembic_dir)).get_current_head()
    assert head is not None
    return head


def table_oids(engine: Engine) -> dict[str, int]:
    with engine.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT relname, oid FROM pg_class"
                " WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace"
            )
        )
        return {name: int(oid) for name, oid in rows}


def test_migrations_build_the_schema_on_first_start_and_a_second_start_changes_nothing(
    postgres_url: str, start_app: Callable[[], TestClient]
) -> None:
    database = sql_engine(postgres_url)
    try:
        assert inspect(database).get_table_names() == []

        with start_app() as client:
            assert client.get("/api/health").status_code == 200
            page = LinkPage.create(client)
            page.step()

        tables = {"alembic_version", "pages", "seats", "actions", "expired_pages"}
        assert set(inspect(database).get_table_names()) >= tables
        with database.connect() as connection:
            assert connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == [
                alembic_head()
            ]
            columns = {
                name: (data_type, default or "")
                for name, data_type, default in connection.execute(
                    text(
                        "SELECT table_name || '.' || column_name, data_type, column_default"
                        " FROM information_schema.columns WHERE table_schema = 'public'"
                    )
                )
            }
        # The portable types map to PostgreSQL's own: json, timestamptz, and integers fed by sequences.
        for name in ("pages.rules", "actions.action", "actions.events"):
            assert columns[name][0] == "json", name
        assert columns["page_states.state"][0] == "text"  # written and read with orjson
        for name in ("pages.created_at", "pages.updated_at", "actions.created_at"):
            assert columns[name][0] == "timestamp with time zone", name
        for name in ("actions.id", "seats.id"):
            assert columns[name][0] == "integer", name
            assert columns[name][1].startswith("nextval("), name
        constraints = {c["name"] for c in inspect(database).get_unique_constraints("actions")}
        assert {"uq_actions_page_version", "uq_actions_page_move_id"} <= constraints
        oids_after_first_start = table_oids(database)

        with start_app() as client:
            assert client.get("/api/health").status_code == 200
            assert page.on(client).snapshot()["version"] == 1

        # The second start neither rebuilt a table nor touched the version row.
        assert table_oids(database) == oids_after_first_start
        with database.connect() as connection:
            assert connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == [
                alembic_head()
            ]
            assert connection.execute(text("SELECT count(*) FROM actions")).scalar_one() == 1
    finally:
        database.dispose()


def test_two_instances_migrating_at_once_both_start(postgres_url: str) -> None:
    """Two instances start at once on an empty database: the second waits for the first one's migration
    to commit, then finds the schema at head (without a lock its CREATE TABLE would collide with the
    first one's uncommitted one and it would fail to start)."""
    first, second = make_engine(postgres_url), make_engine(postgres_url)
    # The first instance is held just before it commits its migration, so the second one certainly
    # runs while the first one's tables are not yet committed.
    first_at_commit, release_first = threading.Event(), threading.Event()

    def hold_commit(_connection: Any) -> None:
        first_at_commit.set()
        release_first.wait(30)

    event.listen(first, "commit", hold_commit)
    outcomes: dict[str, Exception | None] = {}

    def migrate(name: str, engine: Engine) -> None:
        try:
            upgrade_to_head(engine)
            outcomes[name] = None
        except Exception as error:
            outcomes[name] = error

    watcher = sql_engine(postgres_url)
    try:
        first_thread = threading.Thread(target=migrate, args=("first", first))
        first_thread.start()
        assert first_at_commit.wait(30)
        second_thread = threading.Thread(target=migrate, args=("second", second))
        second_thread.start()
        # Wait until the second instance waits for a lock (or has already finished), then let go.
        deadline = time.monotonic() + 20
        while second_thread.is_alive() and time.monotonic() < deadline:
            with watcher.connect() as connection:
                waiting = connection.execute(
                    text("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
                ).scalar_one()
            if waiting:
                break
            time.sleep(0.02)
        release_first.set()
        first_thread.join(30)
        second_thread.join(30)
        assert outcomes == {"first": None, "second": None}
        with watcher.connect() as connection:
            assert connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == [
                alembic_head()
            ]
    finally:
        release_first.set()
        first.dispose()
        second.dispose()
        watcher.dispose()


# --------------------------------------------------------------------------------------------------
# 2. a whole page


def test_a_quick_link_page_played_to_the_end_is_logged_whole_and_its_seed_revealed(
    start_app: Callable[[], TestClient],
) -> None:
    with start_app() as client:
        page = LinkPage.create(client)
        opening = page.snapshot()
        assert opening["seed"] is None
        assert page.log()["seed"] is None

        final = page.play_to_end()

        assert final["phase"] == "over"
        assert final["winner"] in ("blue", "red")
        log = page.log()
        assert len(log["entries"]) == final["version"] == len(page.sent)
        assert_log_matches_play(page, log)
        # Both seats played: every action was logged under the side whose token sent it.
        assert {entry["side"] for entry in log["entries"]} == {"blue", "red"}
        assert final["seed"] == log["seed"]
        assert (
            hashlib.sha256(log["seed"].encode("ascii")).hexdigest() == page.seed_sha256 == log["seed_sha256"]
        )
        assert_replays_to(log, final)
        # The cluster keeps time in another zone; the log and the summaries still say UTC, rightly.
        moments = [datetime.fromisoformat(entry["at"]) for entry in log["entries"]]
        assert all(moment.utcoffset() == timedelta(0) for moment in moments)
        assert moments == sorted(moments)
        assert abs(moments[-1] - datetime.now(UTC)) < timedelta(minutes=10)
        summary = client.get("/api/pages", params={"ids": page.id}).json()
        assert [(s["id"], s["status"], s["winner"], s["version"]) for s in summary] == [
            (page.id, "over", final["winner"], final["version"])
        ]
        assert summary[0]["updated_at"].endswith("+00:00")


# --------------------------------------------------------------------------------------------------
# 3. refusals


def test_stale_versions_repeated_move_ids_and_out_of_turn_actions_change_nothing(
    start_app: Callable[[], TestClient],
) -> None:
    with start_app() as client:
        page = LinkPage.create(client)
        current = page.play_until(lambda snapshot: snapshot["phase"] == "play" and snapshot["version"] >= 5)
        version, side = current["version"], current["side_to_act"]
        other = "red" if side == "blue" else "blue"
        action = nearest_snipe_action(current)
        log_before = page.log()

        def assert_unchanged() -> None:
            assert page.snapshot() == current
            assert page.log() == log_before

        for seen in (version - 1, 0, version + 1):
            body = assert_refused(page.post(side, action, seen), 409, "stale_version")
            assert body["snapshot"]["version"] == version
            assert_unchanged()

        their_soldier = next(s for s in current["soldiers"] if s["side"] == other and s["alive"])
        out_of_turn = {
            "type": "flick",
            "soldier": their_soldier["id"],
            "kind": "snipe",
            "vector": [0.0, 50.0],
        }
        assert_refused(page.post(other, out_of_turn, version), 409, "not_your_turn")
        assert_unchanged()

        first = page.act(side, action, version, move_id="move-1")
        after = page.snapshot()
        log_after = page.log()
        assert log_after["entries"][-1]["move_id"] == "move-1"
        # The same move again (a retry) is answered with the first result and never applied twice,
        # whatever version or action the retry carries.
        for retry_version, retry_action in ((version, action), (version + 1, nearest_snipe_action(after))):
            retried = page.post(side, retry_action, retry_version, move_id="move-1")
            assert retried.status_code == 200, retried.text
            assert retried.json() == first
            assert page.snapshot() == after
            assert page.log() == log_after
        # The other side cannot reuse it.
        assert_refused(
            page.post(other, nearest_snipe_action(after), after["version"], move_id="move-1"),
            400,
            "bad_request",
        )
        assert page.snapshot() == after
        assert page.log() == log_after


def test_the_unique_constraints_refuse_a_second_entry_for_a_version_or_a_move_id(
    postgres_url: str, start_app: Callable[[], TestClient]
) -> None:
    with start_app() as client:
        page = LinkPage.create(client)
        current = page.snapshot()
        page.act(current["side_to_act"], nearest_snipe_action(current), current["version"], move_id="once")
        # Actions sent without a move_id share a NULL one, which the constraint must let through.
        for _ in range(2):
            page.step()
        logged = page.log()
        assert [entry["move_id"] for entry in logged["entries"]] == ["once", None, None]

    database = sql_engine(postgres_url)
    try:
        for version, move_id in ((1, "another"), (2, "once")):
            with Session(database) as session, pytest.raises(IntegrityError):
                session.add(
                    ActionRow(page_id=page.id, version=version, side="blue", action={"type": "resign"},
                              events=[], move_id=move_id, created_at=utc_now())
                )  # fmt: skip
                session.commit()
    finally:
        database.dispose()
    with start_app() as client:
        assert page.on(client).log() == logged


# --------------------------------------------------------------------------------------------------
# 4. restarts


def test_a_new_instance_on_the_same_database_serves_the_page_and_play_goes_on(
    postgres_url: str, start_app: Callable[[], TestClient]
) -> None:
    with start_app() as client:
        page = LinkPage.create(client)
        # Stop between the state cached in the row (every few versions) and the next, so that the new
        # instance rebuilds from the cached state plus the log entries after it.
        before = page.play_until(
            lambda snapshot: snapshot["version"] > CACHE_EVERY and snapshot["version"] % CACHE_EVERY > 4
        )
        log_before = page.log()

    with start_app() as client:
        restarted = page.on(client)
        assert restarted.snapshot() == before
        assert restarted.log() == log_before
        # The seat tokens still work: a seat sees which seat it holds, and play goes on.
        seat = client.get(f"/api/pages/{page.id}", headers=bearer(page.seats[before["side_to_act"]]))
        assert seat.json()["seat"] == before["side_to_act"]
        middle = restarted.play_until(lambda snapshot: snapshot["version"] >= before["version"] + 10)

    # Without the cached state the page is rebuilt from the whole log, as stored by PostgreSQL.
    database = sql_engine(postgres_url)
    try:
        with database.begin() as connection:
            connection.execute(text("DELETE FROM page_states"))
    finally:
        database.dispose()
    with start_app() as client:
        rebuilt = page.on(client)
        assert rebuilt.snapshot() == middle
        final = rebuilt.play_to_end()
        log = rebuilt.log()
    assert_log_matches_play(page, log)
    assert_replays_to(log, final)


# --------------------------------------------------------------------------------------------------
# 5. concurrent writers


def race(requests: list[tuple[LinkPage, str, dict[str, Any], int, str]]) -> list[httpx.Response]:
    """Sends the requests at the same moment, one thread each, and returns their answers in order."""
    barrier = threading.Barrier(len(requests))

    def send(page: LinkPage, side: str, action: dict[str, Any], version: int, move_id: str) -> httpx.Response:
        barrier.wait()
        return page.post(side, action, version, move_id)

    with ThreadPoolExecutor(len(requests)) as pool:
        futures = [pool.submit(send, *request) for request in requests]
        return [future.result() for future in futures]


def assert_log_has_no_gap_or_duplicate(database_url: str, page_id: str) -> None:
    """Looks into the tables themselves: one log entry for each version from 1 to the page's."""
    database = sql_engine(database_url)
    try:
        with database.connect() as connection:
            versions = (
                connection.execute(
                    text("SELECT version FROM actions WHERE page_id = :page ORDER BY version"),
                    {"page": page_id},
                )
                .scalars()
                .all()
            )
            page_version = connection.execute(
                text("SELECT version FROM pages WHERE id = :page"), {"page": page_id}
            ).scalar_one()
    finally:
        database.dispose()
    assert versions == list(range(1, page_version + 1))


def run_races(pages: tuple[LinkPage, LinkPage], rounds: int, database_url: str) -> None:
    """Each round both pages' clients send the next action at the same version at the same moment."""
    first, second = pages
    current = first.play_until(lambda snapshot: snapshot["phase"] == "play")
    winners: list[str] = []
    for number in range(rounds):
        if current["phase"] == "over":
            break
        version, side = current["version"], current["side_to_act"]
        # Each writer has seen the page at this version (the second one may be another process).
        assert second.snapshot() == current
        action = nearest_snipe_action(current)
        answers = race(
            [
                (first, side, action, version, f"first-{number}"),
                (second, side, action, version, f"second-{number}"),
            ]
        )
        statuses = sorted(answer.status_code for answer in answers)
        assert statuses == [200, 409], [answer.text for answer in answers]
        winner = next(i for i, answer in enumerate(answers) if answer.status_code == 200)
        assert answers[winner].json()["version"] == version + 1
        loser = assert_refused(answers[1 - winner], 409, "stale_version")
        assert loser["snapshot"]["version"] == version + 1
        winners.append(f"{('first', 'second')[winner]}-{number}")
        current = first.snapshot()
        assert current["version"] == version + 1
    entries = first.log()["entries"]
    assert [entry["version"] for entry in entries] == list(range(1, len(entries) + 1))
    assert [entry["move_id"] for entry in entries if entry["move_id"] is not None] == winners
    assert len(winners) == rounds
    assert_log_has_no_gap_or_duplicate(database_url, first.id)


def test_two_requests_at_the_same_version_on_one_server_one_wins(
    two_servers: tuple[ServerProcess, ServerProcess],
) -> None:
    server = two_servers[0]
    page = LinkPage.create(server.http)
    with httpx.Client(base_url=server.http.base_url, timeout=30) as other_client:
        run_races((page, page.on(other_client)), rounds=8, database_url=server.database_url)


def test_two_servers_on_one_database_never_fork_a_page(
    two_servers: tuple[ServerProcess, ServerProcess],
) -> None:
    first, second = two_servers
    page = LinkPage.create(first.http)
    run_races((page, page.on(second.http)), rounds=12, database_url=first.database_url)


# --------------------------------------------------------------------------------------------------
# 6. the database goes away and comes back


class DatabaseOutage:
    """Stops and starts the session's PostgreSQL server under a running app."""

    def __init__(self, cluster: PostgresCluster) -> None:
        self.cluster = cluster

    def begin(self) -> None:
        self.cluster.stop_server()

    def end(self) -> None:
        if not self.cluster.running:
            self.cluster.start_server()


@pytest.fixture
def database_outage(postgres_cluster: PostgresCluster) -> Iterator[DatabaseOutage]:
    """An outage of PostgreSQL to begin; it ends at the latest with the test, whatever happens."""
    outage = DatabaseOutage(postgres_cluster)
    try:
        yield outage
    finally:
        outage.end()


def test_while_postgresql_is_down_requests_are_refused_as_unavailable_and_play_resumes_after(
    postgres_url: str, web_dir: Path, database_outage: DatabaseOutage
) -> None:
    app = create_app(make_settings(postgres_url, web_dir))
    # Server errors are answered over HTTP (a 500 would fail the test), not raised into the test.
    with TestClient(app, raise_server_exceptions=False) as client:
        page = LinkPage.create(client)
        before = page.play_until(lambda snapshot: snapshot["phase"] == "play")
        log_before = page.log()
        unknown = LinkPage(client, "nosuchpage", page.seats, page.seed_sha256)

        database_outage.begin()
        assert_refused(client.get("/api/health"), 503, "unavailable")
        move = nearest_snipe_action(before)
        assert_refused(page.post(before["side_to_act"], move, before["version"]), 503, "unavailable")
        assert_refused(client.get(f"/api/pages/{page.id}/log"), 503, "unavailable")
        assert_refused(unknown.post("blue", {"type": "resign"}, 0), 503, "unavailable")
        new_page = client.post("/api/pages", json={"preset": "quick", "mode": "link"})
        assert_refused(new_page, 503, "unavailable")
        database_outage.end()

        # The pooled connections died with the database; the server reconnects by itself.
        assert client.get("/api/health").status_code == 200
        assert page.snapshot() == before
        assert page.log() == log_before
        page.act(before["side_to_act"], move, before["version"])
        page.play_until(lambda snapshot: snapshot["version"] >= before["version"] + 5)
        log = page.log()
    assert_log_matches_play(page, log)


# --------------------------------------------------------------------------------------------------
# 7. a bot page


def wait_for_turn(page: LinkPage, side: str) -> dict[str, Any]:
    """Polls the page until it is `side`'s move or the page is over (Dawood-bot thinks in a thread)."""
    deadline = time.monotonic() + BOT_WAIT_S
    while time.monotonic() < deadline:
        current = page.snapshot()
        if current["phase"] == "over" or current["side_to_act"] == side:
            return current
        time.sleep(0.01)
    raise AssertionError(f"Dawood-bot did not move within {BOT_WAIT_S} s")


def play_against_the_bot(page: LinkPage, until_version: int) -> dict[str, Any]:
    """Plays blue against Dawood-bot's red until the page reaches `until_version` (or is over)."""
    current = wait_for_turn(page, "blue")
    while current["version"] < until_version and current["phase"] != "over":
        page.act("blue", nearest_snipe_action(current), current["version"])
        current = wait_for_turn(page, "blue")
    return current


@pytest.mark.skipif(find_spec("dotfight.bot") is None, reason="dotfight.bot (Dawood-bot) is not importable")
def test_a_bot_page_keeps_its_bot_seat_across_a_restart_and_the_bot_plays_on(
    start_app: Callable[[], TestClient],
) -> None:
    with start_app() as client:
        body = {"preset": "quick", "mode": "bot", "bot": {"side": "red", "strength": "easy"}}
        response = client.post("/api/pages", json=body)
        assert response.status_code == 201, response.text
        created = response.json()
        assert created["seats"]["red"] is None
        page = LinkPage(client, created["id"], {"blue": created["seats"]["blue"]}, created["seed_sha256"])
        before = play_against_the_bot(page, until_version=6)

    with start_app() as client:
        page = page.on(client)
        assert page.snapshot() == before
        assert before["bot"] == {"side": "red", "strength": "easy"}
        after = play_against_the_bot(page, until_version=before["version"] + 6)
        entries = page.log()["entries"]
    assert [entry["version"] for entry in entries] == list(range(1, after["version"] + 1))
    # Dawood-bot, rebuilt from the stored seat, moved after the restart.
    assert any(entry["side"] == "red" for entry in entries[before["version"] :])


def test_the_writers_lock_timeout_is_set_once_and_again_after_a_rollback_undid_it(postgres_url: str) -> None:
    """`begin_write` sets lock_timeout on the connection only when it changes (one round trip less per
    group commit); a SET inside a transaction that rolls back is undone, so it is then set again."""
    engine = make_engine(postgres_url, pool_size=1)
    sets: list[str] = []

    @event.listens_for(engine, "before_cursor_execute")
    def seen(_c: object, _cur: object, statement: str, *_: object) -> None:
        if statement.startswith("SET lock_timeout"):
            sets.append(statement)

    def lock_timeout(connection: Connection) -> str:
        return str(connection.execute(text("SHOW lock_timeout")).scalar())

    try:
        with engine.connect() as connection:
            with connection.begin():
                begin_write(connection, 1.0)
            with connection.begin():
                begin_write(connection, 1.0)
                assert lock_timeout(connection) == "1s"
            assert sets == ["SET lock_timeout = 1000"]
            transaction = connection.begin()
            begin_write(connection, 2.0)
            transaction.rollback()  # undoes the SET
            with connection.begin():
                begin_write(connection, 2.0)
                assert lock_timeout(connection) == "2s"
        assert sets[-1] == "SET lock_timeout = 2000" and len(sets) == 3
    finally:
        engine.dispose()
