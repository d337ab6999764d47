"""Two page authorities on one store (as two server processes on one database are): a move made by one
reaches the other's state in memory by applying the logged action with the engine, not by loading the
page again from the store; a state in memory the log does not follow on from is dropped and reloaded.
Run on the in-memory store and on SQLite (the database store)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dotfight.engine import Replay, RuleSet, apply
from dotfight.server.app import close_pages, open_pages
from dotfight.server.page_view import LoadedPage
from dotfight.server.pages.authority import CreatePage, PageAuthority, Seat
from dotfight.server.settings import Settings
from dotfight.store.database import make_engine
from dotfight.store.memory import MemoryPageStore
from dotfight.store.migrations import upgrade_to_head
from dotfight.store.records import LogEntry
from tests.support.players import nearest_snipe_action

LOCAL_QUICK = CreatePage(preset="quick", rules=None, seed=None, mode="local")


class Loads:
    """Counts an authority's loads of a page from the store (a rebuild from its checkpoint and log)."""

    def __init__(self, authority: PageAuthority) -> None:
        self.count = 0
        load = authority._load

        def counted(page_id: str) -> LoadedPage:
            self.count += 1
            return load(page_id)

        authority._load = counted  # type: ignore[method-assign]


@pytest.fixture(params=["memory", "sqlite"])
def two(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[PageAuthority, PageAuthority]]:
    if request.param == "memory":
        store = MemoryPageStore()
        pair = (PageAuthority(store), PageAuthority(store))
        yield pair
        for authority in pair:
            authority.close()
        return
    url = f"sqlite:///{tmp_path / 'pages.sqlite3'}"
    databases = [make_engine(url), make_engine(url)]
    upgrade_to_head(databases[0])
    opened = [open_pages(Settings(database_url=url), database) for database in databases]
    yield opened[0][1], opened[1][1]
    for (store, authority), database in zip(opened, databases, strict=True):
        close_pages(store, authority)
        database.dispose()


async def play(first: PageAuthority, second: PageAuthority, page_id: str, moves: int) -> LoadedPage:
    """Plays `moves` actions of a local page, each through the authority that did not make the last."""
    seat = Seat(None)
    page = await first.page(page_id)
    for number in range(moves):
        authority = (first, second)[number % 2]
        action = nearest_snipe_action(page.public_snapshot())
        await authority.act(page_id, seat, action, page.state.version, None)
        page = await authority.page(page_id)
    return page


def test_a_move_made_elsewhere_advances_the_state_in_memory_without_a_reload(
    two: tuple[PageAuthority, PageAuthority],
) -> None:
    a, b = two

    async def run() -> None:
        page_id = (await a.create(LOCAL_QUICK)).page.meta.id
        await b.page(page_id)  # b reads it once (from the store: it has never seen it)
        loads = Loads(a), Loads(b)
        # 24 versions: past one of the store's checkpoints (every 16), so a reload would be cheap too.
        page = await play(a, b, page_id, 24)
        assert [each.count for each in loads] == [0, 0]
        assert page.state.version == 24
        # The state advanced move by move is the stored one, to the generator's position.
        for authority in (a, b):
            assert (await authority.page(page_id)).state.to_json() == page.state.to_json()
        fresh = PageAuthority(a.store)
        try:
            assert (await fresh.page(page_id)).state.to_json() == page.state.to_json()
        finally:
            fresh.close()

    asyncio.run(run())


def test_catching_up_gives_the_missed_events_and_advances_the_state(
    two: tuple[PageAuthority, PageAuthority],
) -> None:
    a, b = two

    async def run() -> None:
        page_id = (await a.create(LOCAL_QUICK)).page.meta.id
        await b.page(page_id)
        loads = Loads(b)
        page = await play(a, a, page_id, 6)
        caught, batches = await b.caught_up(page_id, 2)
        assert loads.count == 0
        assert caught.state.to_json() == page.state.to_json()
        assert batches == await a.events_since(page_id, 2)
        assert len(batches) == 4

    asyncio.run(run())


def test_a_state_in_memory_the_log_does_not_follow_on_from_is_reloaded(
    two: tuple[PageAuthority, PageAuthority],
) -> None:
    a, b = two

    async def run() -> None:
        page_id = (await a.create(LOCAL_QUICK)).page.meta.id
        page = await play(a, a, page_id, 5)
        # b holds a fork one version behind: the page as if the side to act had resigned at version 3.
        at_3 = page_at(a, page, 3)
        fork, _ = apply(at_3.state, at_3.state.actor or "blue", {"type": "resign"})
        assert fork.version == 4
        b._pages.put(page_id, LoadedPage(at_3.meta, fork))
        loads = Loads(b)
        mine = await b.page(page_id)  # the logged move 5 is refused on an ended page: reload
        assert loads.count == 1
        assert mine.state.to_json() == page.state.to_json()
        # A gap: entries that skip a version are not applied.
        assert b._advanced(at_3, [LogEntry(5, "blue", {"type": "resign"}, [])]) is None

    asyncio.run(run())


def page_at(authority: PageAuthority, page: LoadedPage, version: int) -> LoadedPage:
    """The page at an earlier version, replayed by the engine from the first entries of its log."""
    entries = authority.store.log(page.meta.id, 0, version)
    log: list[dict[str, Any]] = [{"side": entry.side, "action": entry.action} for entry in entries]
    replay = Replay(RuleSet.from_json(page.meta.rules), int(page.meta.seed, 16), log)
    assert replay.valid == version
    return LoadedPage(page.meta, replay.state)
