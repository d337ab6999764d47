"""The page authority's per-page lock: one action of a page at a time, the others waiting in turn, and
no entry left once nobody holds or waits for it (a waiter cancelled included)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from dotfight.server.pages.authority import PageAuthority
from dotfight.store.memory import MemoryPageStore


@pytest.fixture
def authority() -> Iterator[PageAuthority]:
    authority = PageAuthority(MemoryPageStore())
    yield authority
    authority.close()


async def test_one_action_of_a_page_at_a_time_and_nothing_kept_after(authority: PageAuthority) -> None:
    inside: list[str] = []
    most = 0

    async def hold(page_id: str, name: str) -> None:
        nonlocal most
        async with authority.page_lock(page_id):
            inside.append(name)
            most = max(most, sum(1 for one in inside if one.startswith(page_id)))
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            inside.remove(name)

    await asyncio.gather(*(hold(page, f"{page}-{n}") for n in range(5) for page in ("a", "b")))
    assert most == 1  # never two holders of one page
    assert authority._locks == {}


async def test_a_cancelled_waiter_leaves_no_entry_and_the_next_still_gets_the_page(
    authority: PageAuthority,
) -> None:
    lock = authority.page_lock("a")
    await lock.__aenter__()
    waiter = asyncio.create_task(authority.page_lock("a").__aenter__())
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert authority.page_lock("a") is lock  # still held: the same lock
    await lock.__aexit__(None, None, None)
    assert authority._locks == {}
    async with authority.page_lock("a"):
        assert authority.page_lock("a").locked()
    assert authority._locks == {}
