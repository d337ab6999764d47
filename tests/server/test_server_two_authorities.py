"""Two page authorities on one database (as two server processes are): a move made by one reaches the
other's state in memory by applying the logged action with the engine, not by rebuilding the page from
its stored row; a state in memory the log does not follow on from is dropped and rebuilt."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dotfight.engine import Replay, RuleSet, apply
from dotfight.server.master import Master, Seat
from dotfight.server.page_view import LoadedPage
from dotfight.server.schemas import PageCreate
from dotfight.server.settings import Settings
from dotfight.store import repository
from dotfight.store.database import make_engine
from dotfight.store.migrations import upgrade_to_head
from tests.support.players import nearest_snipe_action


class CountingMaster(Master):
    """A page authority that counts its rebuilds of a page from the stored row."""

    rebuilds = 0

    def _rebuild(self, *args: Any) -> LoadedPage:
        self.rebuilds += 1
        return super()._rebuild(*args)


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[CountingMaster, CountingMaster]]:
    url = f"sqlite:///{tmp_path / 'pages.sqlite3'}"
    databases = [make_engine(url), make_engine(url)]
    upgrade_to_head(databases[0])
    masters = (CountingMaster(Settings(database_url=url), databases[0]),
               CountingMaster(Settings(database_url=url), databases[1]))  # fmt: skip
    yield masters
    for master, database in zip(masters, databases, strict=True):
        master.close()
        database.dispose()


async def play(first: Master, second: Master, page_id: str, moves: int) -> LoadedPage:
    """Plays `moves` actions of a local page, each through the authority that did not make the last."""
    seat = Seat(None)
    page = await first.page(page_id)
    for number in range(moves):
        master = (first, second)[number % 2]
        action = nearest_snipe_action(page.public_snapshot())
        await master.act(page_id, seat, action, page.state.version, None)
        page = await master.page(page_id)
    return page


def test_a_move_made_elsewhere_advances_the_state_in_memory_without_a_rebuild(
    two: tuple[CountingMaster, CountingMaster],
) -> None:
    a, b = two

    async def run() -> None:
        page_id = (await a.create(PageCreate(preset="quick", mode="local"), None)).page.meta.id
        await b.page(page_id)  # b reads it once (from the row: it has never seen it)
        b.rebuilds = 0
        # 24 versions: past three of the row's cached states (every 8), so rebuilds would be cheap too.
        page = await play(a, b, page_id, 24)
        assert (a.rebuilds, b.rebuilds) == (0, 0)
        assert page.state.version == 24
        # The state advanced move by move is the stored one, to the generator's position.
        for master in (a, b):
            mine = await master.page(page_id)
            assert mine.state.to_json() == page.state.to_json()
        fresh = Master(a._settings, a._database)
        try:
            rebuilt = await fresh.page(page_id)
        finally:
            fresh.close()
        assert rebuilt.state.to_json() == page.state.to_json()

    asyncio.run(run())


def test_catching_up_gives_the_missed_events_and_advances_the_state(
    two: tuple[CountingMaster, CountingMaster],
) -> None:
    a, b = two

    async def run() -> None:
        page_id = (await a.create(PageCreate(preset="quick", mode="local"), None)).page.meta.id
        await b.page(page_id)
        b.rebuilds = 0
        page = await play(a, a, page_id, 6)
        heard = 2
        caught, batches = await b.caught_up(page_id, heard)
        assert b.rebuilds == 0
        assert caught.state.to_json() == page.state.to_json()
        assert batches == await a.events_since(page_id, heard)
        assert len(batches) == 4

    asyncio.run(run())


def test_a_state_in_memory_the_log_does_not_follow_on_from_is_rebuilt(
    two: tuple[CountingMaster, CountingMaster],
) -> None:
    a, b = two

    async def run() -> None:
        page_id = (await a.create(PageCreate(preset="quick", mode="local"), None)).page.meta.id
        page = await play(a, a, page_id, 5)
        # b holds a fork one version behind: the page as if the side to act had resigned at version 3.
        at_3 = await play_to(a, page_id, 3)
        fork, _ = apply(at_3.state, at_3.state.actor or "blue", {"type": "resign"})
        assert fork.version == 4
        b._pages.put(page_id, LoadedPage(at_3.meta, fork))
        b.rebuilds = 0
        mine = await b.page(page_id)  # the logged move 5 is refused on an ended page: rebuild
        assert b.rebuilds == 1
        assert mine.state.to_json() == page.state.to_json()
        # A gap: entries that skip a version are not applied.
        assert b._advanced(at_3, [(5, "blue", {"type": "resign"})]) is None

    asyncio.run(run())


async def play_to(master: Master, page_id: str, version: int) -> LoadedPage:
    """The page at an earlier version, replayed by the engine from the first entries of its log."""
    page = await master.page(page_id)

    def read_log() -> list[dict[str, Any]]:
        with master._sessions() as session:
            entries = repository.actions_after(session, page_id, 0, up_to=version)
        return [{"side": entry.side, "action": entry.action} for entry in entries]

    replay = Replay(
        RuleSet.from_json(page.meta.rules), int(page.meta.seed, 16), await asyncio.to_thread(read_log)
    )
    assert replay.valid == version
    return LoadedPage(page.meta, replay.state)
