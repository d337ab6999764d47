"""The common move is worked out on the event loop (issue 12, third round): a page in memory at the
version its sender saw, with rules within the new-page limits and no convoy in transit, is applied where
the action arrived and its entry handed to the store from there — one thread crossing fewer than through
an engine thread. Every move that may read the store (a page not in memory, a client behind, a refusal
whose move_id only the log can place) or cost more (a convoy's arrival, rules outside the limits) still
goes to an engine thread, and every answer is the same either way."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from dotfight.server.pages.authority import CreatePage, PageAuthority, Seat
from dotfight.server.pages.errors import EngineRefusal
from dotfight.store.memory import MemoryPageStore
from dotfight.store.records import Appended, Checkpoint, LogEntry, Reply
from tests.support.players import nearest_snipe_action


class ThreadNoting(MemoryPageStore):
    """The in-memory store, noting the thread each append was handed over on."""

    def __init__(self) -> None:
        super().__init__()
        self.appended_on: list[str] = []

    def append_then(
        self,
        page_id: str,
        expected_version: int,
        entry: LogEntry,
        checkpoint: Checkpoint,
        reply: Reply[Appended],
    ) -> None:
        self.appended_on.append(threading.current_thread().name)
        super().append_then(page_id, expected_version, entry, checkpoint, reply)


@pytest.fixture
def store() -> ThreadNoting:
    return ThreadNoting()


@pytest.fixture
def authority(store: ThreadNoting) -> Iterator[PageAuthority]:
    authority = PageAuthority(store)
    yield authority
    authority.close()


LOOP = threading.main_thread().name  # asyncio.run runs the loop on the calling thread


async def ready_to_play(authority: PageAuthority) -> str:
    created = await authority.create(CreatePage(preset="quick", rules=None, seed=7, mode="live"))
    page_id = created.page.meta.id
    for version, (side, kind) in enumerate((("blue", "quick_setup"), ("blue", "ready"), ("red", "ready"))):
        await authority.act(page_id, Seat(side), {"type": kind}, version, None)
    return page_id


async def play_one(authority: PageAuthority, page_id: str, move_id: str | None = None) -> int:
    page = await authority.page(page_id)
    action = nearest_snipe_action(page.public_snapshot())
    applied = await authority.act(page_id, Seat(page.state.actor), action, page.state.version, move_id)
    return applied.version


def test_the_common_move_is_applied_on_the_event_loop_and_handed_to_the_store_from_there(
    authority: PageAuthority, store: ThreadNoting
) -> None:
    async def play() -> list[int]:
        page_id = await ready_to_play(authority)
        return [await play_one(authority, page_id, f"m{n}") for n in range(8)]

    assert asyncio.run(play()) == list(range(4, 12))
    assert threading.current_thread().name == LOOP
    assert store.appended_on == [LOOP] * 11


def test_a_convoy_in_transit_and_a_page_not_in_memory_go_to_an_engine_thread(
    authority: PageAuthority, store: ThreadNoting
) -> None:
    async def play() -> None:
        page_id = await ready_to_play(authority)
        send = {"type": "send", "from": "b3", "to": "b1", "soldiers": ["b3s1"]}
        await authority.act(page_id, Seat("blue"), send, 3, None)  # on the loop; blue keeps the turn
        assert (await authority.page(page_id)).state.convoys
        await play_one(authority, page_id)  # the convoy may arrive: on an engine thread
        authority.forget(page_id)
        await play_one(authority, page_id)  # read from the store: on an engine thread

    asyncio.run(play())
    on_engine_threads = [name.startswith("dotfight-engine") for name in store.appended_on]
    assert on_engine_threads == [False, False, False, False, True, True]


def test_a_refusal_is_the_same_on_the_loop_and_a_move_id_refused_is_placed_by_the_log(
    authority: PageAuthority, store: ThreadNoting
) -> None:
    async def play() -> list[Any]:
        page_id = await ready_to_play(authority)
        page = await authority.page(page_id)
        mover, other = Seat(page.state.actor), Seat("red" if page.state.actor == "blue" else "blue")
        action = nearest_snipe_action(page.public_snapshot())
        outcomes: list[Any] = []
        for move_id in (None, "m0"):  # on the loop without a move_id, on an engine thread with one
            with pytest.raises(EngineRefusal) as refused:
                await authority.act(page_id, other, action, 3, move_id)
            outcomes.append(refused.value.code)
        first = await authority.act(page_id, mover, action, 3, "m1")
        # The same move again, its sender still at version 3: the log answers with the first result.
        again = await authority.act(page_id, mover, action, 3, "m1")
        return [*outcomes, first.version, again.version, again.duplicate, again.events == first.events]

    assert asyncio.run(play()) == ["not_your_turn", "not_your_turn", 4, 4, True, True]
    assert store.appended_on == [LOOP] * 4
