"""The page authority in its own layer: it imports neither pydantic nor SQLAlchemy (nor the web
framework), and on the in-memory store (no database, no server) it keeps every promise of a page —
version checks, one answer per move_id, refusals that change nothing, listeners told after the write in
version order, a lost race answered by the store."""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from fastapi.testclient import TestClient

from dotfight.server.app import create_app
from dotfight.server.errors import api_error
from dotfight.server.page_view import LoadedPage
from dotfight.server.pages.authority import (
    CACHE_EVERY,
    INK_PER_INTERVAL,
    Applied,
    CreatePage,
    PageAuthority,
    Seat,
    checkpoint_of,
)
from dotfight.server.pages.errors import (
    BadRequest,
    BadToken,
    EngineRefusal,
    NotFound,
    PageExpired,
    StaleVersion,
)
from dotfight.server.settings import Settings
from dotfight.store.memory import MemoryPageStore
from dotfight.store.records import LogEntry, StoreUnavailable
from tests.support.players import nearest_snipe_action

T = TypeVar("T")
FORBIDDEN = ("sqlalchemy", "pydantic", "pydantic_settings", "fastapi", "starlette")
WEB = ("fastapi", "starlette", "uvicorn")


@pytest.mark.parametrize(
    "module",
    [
        "dotfight.server.pages.authority",
        "dotfight.server.workers.engine",  # the authority's engine workers
        "dotfight.store.records",
        "dotfight.store.memory",
    ],
)
def test_the_authority_and_the_store_protocol_import_no_pydantic_nor_sqlalchemy(module: str) -> None:
    code = f"import sys, json, {module}; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout)
    assert module in loaded
    assert [name for name in loaded if name.split(".")[0] in FORBIDDEN] == []


# Every module of the store, the writer among them: storage knows nothing of the server above it.
STORE_MODULES = sorted(
    f"dotfight.store.{path.stem}" for path in Path("dotfight/store").glob("*.py") if path.stem != "__init__"
)


def test_the_store_imports_nothing_of_the_server_nor_the_web_framework() -> None:
    assert "dotfight.store.writer" in STORE_MODULES and "dotfight.store.sql_pages" in STORE_MODULES
    code = f"import sys, json, {', '.join(STORE_MODULES)}; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout)
    upward = [name for name in loaded if name.startswith("dotfight.server") or name.split(".")[0] in WEB]
    assert upward == []


# The pages' rooms: they may import the authority's types, but the authority imports no room, and a room
# knows nothing above it (no route, no page socket, no app).
ROOM_MODULES = sorted(
    f"dotfight.server.rooms.{path.stem}"
    for path in Path("dotfight/server/rooms").glob("*.py")
    if path.stem != "__init__"
)
ABOVE_THE_ROOMS = (
    "dotfight.server.live",
    "dotfight.server.routes",
    "dotfight.server.services",
    "dotfight.server.app",
)


def loaded_modules(*modules: str) -> list[str]:
    code = f"import sys, json, {', '.join(modules)}; print(json.dumps(sorted(sys.modules)))"
    return list(
        json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout)
    )


def test_the_authority_imports_no_room_and_the_rooms_nothing_above_them() -> None:
    assert ROOM_MODULES == [
        "dotfight.server.rooms.absence",
        "dotfight.server.rooms.connection",
        "dotfight.server.rooms.registry",
        "dotfight.server.rooms.room",
    ]
    authority = loaded_modules("dotfight.server.pages.authority")
    assert [
        name for name in authority if name.startswith(("dotfight.server.rooms", "dotfight.server.broadcast"))
    ] == []
    rooms = loaded_modules(*ROOM_MODULES)
    assert "dotfight.server.pages.authority" in rooms
    assert [name for name in rooms if name.startswith(ABOVE_THE_ROOMS)] == []


@pytest.fixture
def store() -> MemoryPageStore:
    return MemoryPageStore()


@pytest.fixture
def authority(store: MemoryPageStore) -> Iterator[PageAuthority]:
    authority = PageAuthority(store)
    yield authority
    authority.close()


def run(work: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(work())  # type: ignore[arg-type]


async def duel(authority: PageAuthority) -> tuple[str, dict[str, str | None]]:
    created = await authority.create(CreatePage(preset="quick", rules=None, seed=7, mode="live"))
    return created.page.meta.id, created.seats


async def next_action(authority: PageAuthority, page_id: str) -> tuple[Seat, dict[str, Any], int]:
    page = await authority.page(page_id)
    return Seat(page.state.actor), nearest_snipe_action(page.public_snapshot()), page.state.version


def test_actions_are_stored_in_order_and_listeners_hear_them_after_the_write(
    authority: PageAuthority, store: MemoryPageStore
) -> None:
    heard: list[tuple[int, int]] = []

    def listener(page: LoadedPage, applied: Applied) -> None:
        # Told after the write: the store holds the version already.
        heard.append((applied.version, store.version(page.meta.id)))

    authority.add_listener(listener)

    async def play() -> None:
        page_id, _ = await duel(authority)
        for _ in range(10):
            seat, action, version = await next_action(authority, page_id)
            applied = await authority.act(page_id, seat, action, version, None)
            assert applied.version == version + 1 and not applied.duplicate
        assert [entry.version for entry in store.log(page_id, 0)] == list(range(1, 11))

    run(play)
    assert heard == [(version, version) for version in range(1, 11)]


def test_a_stale_version_is_refused_with_the_page_and_changes_nothing(
    authority: PageAuthority, store: MemoryPageStore
) -> None:
    async def play() -> None:
        page_id, _ = await duel(authority)
        seat, action, version = await next_action(authority, page_id)
        await authority.act(page_id, seat, action, version, None)
        seat, action, _ = await next_action(authority, page_id)
        with pytest.raises(StaleVersion) as refused:
            await authority.act(page_id, seat, action, version, None)
        assert refused.value.extra["snapshot"]["version"] == 1
        assert store.version(page_id) == 1

    run(play)


def test_a_retried_move_id_gets_its_first_answer_and_the_other_side_cannot_reuse_it(
    authority: PageAuthority, store: MemoryPageStore
) -> None:
    async def play() -> None:
        page_id, _ = await duel(authority)
        seat, action, version = await next_action(authority, page_id)
        first = await authority.act(page_id, seat, action, version, "m-1")
        again = await authority.act(page_id, seat, action, version, "m-1")
        assert (again.version, again.duplicate) == (first.version, True)
        other = Seat("red" if seat.side == "blue" else "blue")
        with pytest.raises(BadRequest, match="other side"):
            await authority.act(page_id, other, action, version, "m-1")
        assert len(store.log(page_id, 0)) == 1

    run(play)


def test_engine_refusals_and_actions_that_change_nothing_are_refused_and_change_nothing(
    authority: PageAuthority, store: MemoryPageStore
) -> None:
    async def play() -> None:
        page_id, _ = await duel(authority)
        seat, _, version = await next_action(authority, page_id)
        wrong = Seat("red" if seat.side == "blue" else "blue")
        with pytest.raises(EngineRefusal) as refused:
            await authority.act(page_id, wrong, {"type": "quick_setup"}, version, None)
        assert refused.value.code == "not_your_turn"
        with pytest.raises(EngineRefusal) as malformed:
            await authority.act(page_id, seat, {"type": "quick_setup", "x": 1}, version, None)
        assert malformed.value.code == "bad_request"
        # Into positioning, where an empty position is accepted by the engine but changes nothing.
        while (await authority.page(page_id)).state.phase == "bases":
            seat, action, version = await next_action(authority, page_id)
            await authority.act(page_id, seat, action, version, None)
        page = await authority.page(page_id)
        actor = Seat(page.state.actor)
        with pytest.raises(BadRequest) as nothing:
            await authority.act(
                page_id, actor, {"type": "position", "soldiers": []}, page.state.version, None
            )
        assert nothing.value.reason == "no_change"
        assert store.version(page_id) == page.state.version

    run(play)


def test_a_race_lost_to_another_authority_is_answered_by_the_store(store: MemoryPageStore) -> None:
    a, b = PageAuthority(store), PageAuthority(store)

    async def play() -> None:
        page_id, _ = await duel(a)
        seat, action, version = await next_action(a, page_id)
        await b.page(page_id)  # b holds the page at version 0 in memory
        first = await a.act(page_id, seat, action, version, "m-1")
        # b still thinks the page is at 0: the same move_id sent to it gets the first answer...
        again = await b.act(page_id, seat, action, version, "m-1")
        assert (again.version, again.duplicate, again.events) == (first.version, True, first.events)
        # ...and another move at the old version is stale (b's memory is not trusted over the store).
        with pytest.raises(StaleVersion):
            await b.act(page_id, seat, action, version, "m-2")
        assert len(store.log(page_id, 0)) == 1

    try:
        run(play)
    finally:
        a.close()
        b.close()


def test_a_write_the_store_takes_at_another_version_is_stale(store: MemoryPageStore) -> None:
    """The engine checked version 0, but another writer appended version 1 before the write: the store
    refuses (VersionMoved) and the authority answers stale, writing nothing."""
    authority = PageAuthority(store)

    async def play() -> None:
        page_id, _ = await duel(authority)
        seat, action, version = await next_action(authority, page_id)
        page = await authority.page(page_id)
        stolen, events = await asyncio.to_thread(authority._advance, page.state, seat.side or "blue", action)
        store.append(
            page_id, 0, LogEntry(1, seat.side or "blue", action, events), checkpoint_of(stolen)
        ).result()
        # Memory still says 0 (the other writer was not this authority).
        with pytest.raises(StaleVersion):
            await authority.act(page_id, seat, action, version, None)
        assert len(store.log(page_id, 0)) == 1

    try:
        run(play)
    finally:
        authority.close()


def test_unknown_expired_pages_and_bad_tokens_are_refused(
    authority: PageAuthority, store: MemoryPageStore
) -> None:
    async def play() -> None:
        with pytest.raises(NotFound):
            await authority.page("nope")
        page_id, seats = await duel(authority)
        assert (await authority.seat(page_id, seats["blue"])).side == "blue"
        with pytest.raises(BadToken):
            await authority.seat(page_id, "not-a-token")
        store.expire(page_id)
        authority.forget(page_id)
        with pytest.raises(PageExpired):
            await authority.page(page_id)

    run(play)


def test_a_database_that_does_not_answer_reaches_the_api_as_the_stores_one_type(
    authority: PageAuthority, store: MemoryPageStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def play() -> None:
        page_id, _ = await duel(authority)
        authority.forget(page_id)

        def down(*_args: Any) -> Any:
            raise StoreUnavailable("the disk went away")

        monkeypatch.setattr(store, "version", down)
        for attempt in (
            authority.page(page_id),
            authority.act(page_id, Seat("blue"), {"type": "quick_setup"}, 0, None),
        ):
            with pytest.raises(StoreUnavailable) as refused:
                await attempt
            error = api_error(refused.value)
            assert (error.code, error.status) == ("unavailable", 503)
            assert error.message == "the database does not answer (the disk went away); try again in a moment"

    run(play)


def test_a_write_committed_but_answered_as_unavailable_is_told_as_unsure_and_nobody_hears_it_as_done(
    authority: PageAuthority, store: MemoryPageStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database's connection lost as a commit went out: the write may be durable though the store
    answers StoreUnavailable. The authority tells `on_write_unsure` the page (its rooms then read the
    log: on PostgreSQL this process's own notice of it is not handed to them), and no listener hears
    the move as done."""
    unsure: list[str] = []
    heard: list[int] = []
    authority.on_write_unsure = unsure.append
    authority.add_listener(lambda _page, applied: heard.append(applied.version))
    committed_then_lost = store.append_then

    def append_then(page_id: str, expected: int, entry: LogEntry, checkpoint: Any, reply: Any) -> None:
        committed_then_lost(page_id, expected, entry, checkpoint, lambda _outcome: None)
        reply(StoreUnavailable("the connection was lost as the commit went out"))

    async def play() -> None:
        page_id, _ = await duel(authority)
        monkeypatch.setattr(store, "append_then", append_then)
        with pytest.raises(StoreUnavailable):
            await authority.act(page_id, Seat("blue"), {"type": "quick_setup"}, 0, "m1")
        assert unsure == [page_id]
        assert heard == []
        assert store.version(page_id) == 1  # it was written all the same

    run(play)


def test_rules_a_new_page_may_not_have_are_a_bad_request(authority: PageAuthority) -> None:
    async def create() -> None:
        await authority.create(CreatePage(preset="quick", rules={"pull_max": -1}, seed=None, mode="local"))

    with pytest.raises(BadRequest, match="cannot be played"):
        run(create)


def test_a_domain_error_reaching_a_route_is_answered_in_the_api_shape(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def expired(*_: object) -> list[dict[str, Any]]:
        raise PageExpired("this page expired", reason="idle")

    monkeypatch.setattr("dotfight.store.views.DatabaseViews.summaries", expired)
    with TestClient(create_app(make_settings())) as client:
        answer = client.get("/api/pages", params={"ids": "abc"})
    assert answer.status_code == 410
    assert answer.json() == {
        "error": {"code": "page_expired", "message": "this page expired", "reason": "idle"}
    }


def test_the_private_state_is_checkpointed_every_sixteen_versions_and_a_fresh_authority_resumes(
    authority: PageAuthority, store: MemoryPageStore
) -> None:
    async def play() -> list[int]:
        page_id, _ = await duel(authority)
        kept = []
        for _ in range(33):
            seat, action, version = await next_action(authority, page_id)
            await authority.act(page_id, seat, action, version, None)
            page = await authority.page(page_id)
            if checkpoint_of(page.state).state is not None:
                kept.append(page.state.version)
        fresh = PageAuthority(store)  # as after a restart: from the checkpoint at 32 and one entry
        try:
            resumed = await fresh.page(page_id)
        finally:
            fresh.close()
        assert resumed.state.to_json() == (await authority.page(page_id)).state.to_json()
        return kept

    assert run(play) == [16, 32]


def test_a_page_with_much_ink_is_checkpointed_less_often_and_still_resumes(
    authority: PageAuthority, store: MemoryPageStore
) -> None:
    # Soft snipes that stay in the flicker's own half: nobody falls, every flick adds a line of ink.
    async def play() -> list[tuple[int, int]]:
        page_id, _ = await duel(authority)
        while (await authority.page(page_id)).state.phase != "play":
            seat, action, version = await next_action(authority, page_id)
            await authority.act(page_id, seat, action, version, None)
        kept = []
        for number in range(2 * INK_PER_INTERVAL + 40):
            page = await authority.page(page_id)
            side = page.state.actor
            assert side is not None
            mine = [s["id"] for s in page.public_snapshot()["soldiers"] if s["side"] == side and s["alive"]]
            pull = 40.0 if side == "blue" else -40.0
            action = {"type": "flick", "soldier": mine[number // 2 % len(mine)], "kind": "snipe",
                      "vector": [0.0, pull]}  # fmt: skip
            await authority.act(page_id, Seat(side), action, page.state.version, None)
            page = await authority.page(page_id)
            if checkpoint_of(page.state).state is not None:
                kept.append((page.state.version, len(page.state.ink)))
        fresh = PageAuthority(store)  # as after a restart: from the last checkpoint and the entries after
        try:
            resumed = await fresh.page(page_id)
        finally:
            fresh.close()
        assert resumed.state.to_json() == (await authority.page(page_id)).state.to_json()
        assert kept[-1][0] < (await authority.page(page_id)).state.version - 1  # entries replayed on it
        return kept

    kept = run(play)
    # Every 16 versions while the page has fewer than 128 lines, then every 32, then every 48.
    for (version, ink), (next_version, _) in itertools.pairwise(kept):
        assert next_version - version <= CACHE_EVERY * (
            1 + (ink + next_version - version) // INK_PER_INTERVAL
        )
    gaps = {next_version - version for (version, _), (next_version, _) in itertools.pairwise(kept)}
    assert {CACHE_EVERY, 2 * CACHE_EVERY} <= gaps
    assert all(version % (CACHE_EVERY * (1 + ink // INK_PER_INTERVAL)) == 0 for version, ink in kept)
